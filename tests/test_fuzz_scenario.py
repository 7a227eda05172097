"""Structure-aware fuzzing of scenario files (hypothesis): the committed scenarios (examples/
and small ones like the tests'), with the values of known keys replaced by values of the
wrong type or range (negative, zero, huge, NaN/inf, strings, arrays, tables, deep nesting),
keys and sections added, dropped or replaced, in the file or as --set items.

Loading, building every stage and a cheap command path (the conflict analysis and the step
simulation on small runs, the protocol simulation's and the benchmark's checks, the run.cfg
daqnet-evb would read) must either work or stop with one of USER_ERRORS: one line naming the
file (or the --set item), and the key when its value has the wrong type. A few of the
mutated files also go through the command line: exit status 0 or 2, one line, no traceback.

DAQNET_FUZZ_EXAMPLES (default 60, as in tests/test_fuzz_importers.py) scales the number of
examples: ten times that many scenarios, a sixth of it through the command line;
docs/fuzzing.md gives the long run. A failing example stays in hypothesis's database
(.hypothesis/) and is tried first next time; fix it, then add it to the tests it concerns.
"""

from __future__ import annotations

import faulthandler
import json
import math
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import small_scenario
from daqnet import _core, conflicts
from daqnet.bench.config import run_config, run_config_text
from daqnet.errors import USER_ERRORS
from daqnet.scenario import SCHEMA, Scenario, unused
from daqnet.scenario.overrides import shown
from daqnet.scenario.schema import run_config_keys
from daqnet.simulate import check_protocol, simulate_steps
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
EXAMPLES = int(os.environ.get("DAQNET_FUZZ_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=10 * EXAMPLES,  # ~10 ms each: 600 by default, a few seconds
    deadline=None,  # a hang is caught by the watchdog below, slow examples are not findings
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
HANG_SECONDS = 120  # one example (load, build, cheap commands): more is a hang
MEMORY_BYTES = 4 << 30  # address space on top of the test process's: more is a finding


def _small(extra: str = "", hosts: int = 16) -> dict[str, Any]:
    return tomllib.loads(small_scenario("fuzz", hosts, extra))


# Seeds: every committed example, and small scenarios of each fabric kind, routing engine
# and file the tests use (files are the committed ones, by absolute path).
SEEDS: dict[str, dict[str, Any]] = {
    **{p.stem: tomllib.loads(p.read_text()) for p in sorted((ROOT / "examples").glob("*.toml"))},
    "small": _small(),
    "small-bench": _small(
        '[bench]\nranks = 4\ncredits = 3\nfragment_bytes = 65536\nseconds = 0.5\nprotocol = "pull"\n'
        '[simulate]\nmode = "protocol"\nevents = 20\n'
    ),
    "small-time-frames": tomllib.loads(
        (ROOT / "examples" / "alice-frames.toml").read_text().replace("hosts = 72", "hosts = 8")
    ),
    "percs": {
        "fabric": {
            "kind": "percs",
            "supernodes": 3,
            "drawers_per_supernode": 1,
            "nodes_per_drawer": 2,
        },
        "routing": {"engine": "indirect", "seed": 3},
        "placement": {"order": "default"},
        "workload": {"kind": "stencil2d", "tasks_per_node": 2, "message_bytes": 1000},
    },
    "dragonfly": {
        "fabric": {"kind": "dragonfly", "p": 1, "a": 2, "h": 1},
        "routing": {"engine": "direct"},
        "workload": {"kind": "multicast", "targets": 2},
    },
    "ibnetdiscover": {
        "fabric": {"kind": "ibnetdiscover", "file": str(DATA / "ib" / "ibnetdiscover-27.out")},
        "routing": {"engine": "lft-dump", "file": str(DATA / "ib" / "opensm-lfts-27.dump")},
        "placement": {"order": "hostname"},
    },
    "subnet-list": {
        "fabric": {"radix": 8, "hosts": 27},
        "routing": {
            "engine": "lft-dump",
            "file": str(DATA / "ib" / "opensm-lfts-27.dump"),
            "subnet_file": str(DATA / "ib" / "opensm-subnet-27.lst"),
        },
    },
    "slurm-topology": {
        "fabric": {"kind": "slurm-topology", "file": str(DATA / "fuzz" / "topology.conf")},
        "routing": {"engine": "minhop"},
        "placement": {"order": "file", "hosts": "node[01-03,06]"},
    },
    "table-file": {
        "fabric": {"radix": 8, "hosts": 27},
        "routing": {
            "engine": "table",
            "file": str(DATA / "fuzz" / "table_file" / "seed-dmodk-27.txt"),
        },
        "placement": {"order": "file", "file": str(DATA / "fuzz" / "hosts.txt")},
    },
    "steps-file": {
        "fabric": {"radix": 8, "hosts": 27, "naming": "shuffled", "naming_seed": 5},
        "placement": {"order": "random", "ranks": 4, "seed": 9},
        "workload": {"kind": "steps", "file": str(DATA / "fuzz" / "steps.txt")},
        "simulate": {"injection_gbps": 50.0, "ideal": False},
    },
    "shift-3-levels": {
        "fabric": {"radix": 4, "hosts": 16, "levels": 3, "taper": ["1:1", "1:1"]},
        "routing": {"engine": "random", "seed": 2},
        "workload": {"kind": "shift", "shifts": [1, 3, 5]},
    },
}

# Values of every type and range a key can be given wrongly (and a few right ones).
FILES = [DATA / "fuzz" / n for n in ("hosts.txt", "steps.txt", "topology.conf")] + [
    DATA / "ib" / "ibnetdiscover-27.out",
    DATA / "fuzz" / "table_file" / "seed-dmodk-27.txt",
]


class Raw(str):
    """TOML text written as is (what a value strategy cannot express as a Python value)."""


CHOICES = sorted({c for keys in SCHEMA.values() for k in keys.values() for c in k.choices})
INTS = [0, 1, 2, 3, 4, 7, 8, 16, 64, -1, -2, 2**31 - 1, 2**31, -(2**31), 2**63 - 1, -(2**63)]
FLOATS = [0.0, -0.0, 0.5, 1.5, -1.0, 1e-300, 5e-324, 1e308, math.inf, -math.inf, math.nan]
SCALARS = st.one_of(
    st.sampled_from(INTS),
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from(FLOATS),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.sampled_from(CHOICES),
    st.sampled_from(["", " ", "x", "2:1", "1:0", "0:1", "65536:1", "3:2:1", "node[1-", "a,b", "#"]),
    st.sampled_from([str(p) for p in FILES] + [".", "/nonexistent/file", str(ROOT / "examples")]),
    st.text(max_size=12),
    st.sampled_from(
        [Raw("1979-05-27T07:32:00Z"), Raw("07:32:00"), Raw("0x7fffffff"), Raw("1_000"), Raw("+inf")]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.sampled_from(["a", "b", "kind"]), inner, max_size=3),
    ),
    max_leaves=8,
) | st.sampled_from(
    [
        [],
        [1] * 300,
        ["1:1"] * 5,
        Raw("[" * 50 + "]" * 50),
        Raw("[" * 2000 + "]" * 2000),
        Raw("{a = " * 600 + "1" + "}" * 600),
        "x" * 10_000,
    ]
)


def _toml_string(s: str) -> str:
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F or 0xD800 <= ord(c) <= 0xDFFF:
            out.append(f"\\u{ord(c):04x}" if ord(c) < 0xD800 else "?")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def toml_value(v: Any) -> str:
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return (
            "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        )
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_toml_string(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def toml_document(doc: dict[str, Any]) -> str:
    """The document as TOML text, tables as [sections] (anything else as an inline value)."""
    lines = [
        f"{_toml_string(k)} = {toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict)
    ]
    for name, table in doc.items():
        if isinstance(table, dict):
            lines.append(f"[{_toml_string(name)}]")
            lines += [f"{_toml_string(k)} = {toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


# What a value, as TOML reads it, must be for a key of each kind (Scenario's own check,
# written again here).
def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


KIND_OK = {
    "int": _int,
    "seed": _int,
    "float": _number,
    "str": lambda v: isinstance(v, str),
    "path": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "float_list": lambda v: isinstance(v, list) and all(_number(x) for x in v),
    "int_list": lambda v: isinstance(v, list) and all(_int(x) for x in v),
    "taper": lambda v: (
        isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
    ),
}


def wrong_type(section: str, key: str, value: Any) -> bool:
    """Whether `value` is of a type the key never takes (False when unsure)."""
    spec = SCHEMA.get(section, {}).get(key)
    if spec is None:
        return False
    try:
        parsed = tomllib.loads("v = " + toml_value(value))["v"]
    except RecursionError:
        return False
    return not KIND_OK[spec.kind](parsed)


KEYS = [(s, k) for s, keys in SCHEMA.items() for k in keys]
SMALL_INTS = st.integers(-3, 70)


def typed(section: str, key: str) -> st.SearchStrategy[Any]:
    """Values of the key's own type, edges and plausible ones: they reach the builders."""
    spec = SCHEMA[section][key]
    ints = st.sampled_from(INTS) | SMALL_INTS
    return {
        "int": ints,
        "seed": ints | st.sampled_from([2**64 - 1, 2**64]),
        "float": st.sampled_from(FLOATS) | st.floats(-10, 1e4) | SMALL_INTS,
        "str": st.sampled_from(spec.choices or CHOICES)
        | st.sampled_from(["", "node", "a b", "x" * 300]),
        "path": st.sampled_from([str(p) for p in FILES] + [".", "/nonexistent/file"]),
        "bool": st.booleans(),
        "float_list": st.lists(
            st.sampled_from(FLOATS) | st.floats(0, 1e9) | SMALL_INTS, max_size=6
        ),
        "int_list": st.lists(ints, max_size=6),
        "taper": st.sampled_from(["1:1", "2:1", "3:1", "1:2", "0:1", "2:0", "36:1", "5:3", "1:1:1"])
        | st.lists(st.sampled_from(["1:1", "2:1", "3:1", "x"]), max_size=3),
    }[spec.kind]


@st.composite
def mutations(draw: st.DrawFn, seed: str) -> list[tuple[str, ...]]:
    """Edits of a seed: ("set", section, key, value) and the like; half of them on keys the
    seed gives (those its fabric kind, engine and workload read), the rest on any key."""
    given = [(s, k) for s, keys in SEEDS[seed].items() if isinstance(keys, dict) for k in keys]
    out = []
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):  # mostly one: it gets further
        op = draw(st.sampled_from(["set"] * 6 + ["drop", "unknown", "section", "top"]))
        mine = given and draw(st.booleans())
        section, key = draw(st.sampled_from(given) if mine else st.sampled_from(KEYS))
        if op == "set":
            value = draw(typed(section, key) if draw(st.integers(0, 3)) else VALUES)
            out.append(("set", section, key, value))
        elif op == "drop":
            out.append(("drop", section, key))
        elif op == "unknown":
            out.append(("set", draw(st.sampled_from([*SCHEMA, "fabrik"])), "radixx", draw(VALUES)))
        elif op == "section":
            out.append(("section", section, draw(VALUES)))
        else:
            out.append(
                ("top", draw(st.sampled_from(["name", "description", "version"])), draw(VALUES))
            )
    return out


def apply(doc: dict[str, Any], edits: list[tuple[str, ...]]) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))  # a deep copy (seeds are JSON-able)
    for e in edits:
        if e[0] == "set":
            _, section, key, value = e
            if not isinstance(doc.get(section), dict):
                doc[section] = {}
            doc[section][key] = value
        elif e[0] == "drop":
            if isinstance(doc.get(e[1]), dict):
                doc[e[1]].pop(e[2], None)
        else:  # "section", "top": a whole section, or a top-level key, replaced
            doc[e[1]] = e[2]
    return doc


@pytest.fixture
def guarded() -> Iterator[None]:
    """Memory beyond MEMORY_BYTES more is a MemoryError (a finding), not the kernel's kill."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * resource.getpagesize()
    limit = used + MEMORY_BYTES
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _check_message(err: Exception, path: Path, overrides: list[str], files: set[str]) -> str:
    """One line naming the scenario, the --set item, a file the scenario names (an imported
    topology, a host list: the error is then at its line), or the key."""
    msg = str(err) if not isinstance(err, OSError) else f"{err.filename}: {err.strerror}"
    assert msg.strip() and "\n" not in msg.strip(), f"not one line: {msg!r}"
    named = (
        path.name in msg
        or any(msg.startswith(f"set {shown(o)}") for o in overrides)
        or any(f in msg for f in files)
        or any(f"{section}.{key}" in msg for section, key in KEYS)
    )
    assert named, f"names neither the file nor the --set item: {msg!r}"
    return msg


def _files(doc: Any) -> set[str]:
    """The existing files a document names (as it names them)."""
    if isinstance(doc, dict):
        return set().union(*map(_files, doc.values())) if doc else set()
    if isinstance(doc, list):
        return set().union(*map(_files, doc)) if doc else set()
    try:
        return {doc} if isinstance(doc, str) and Path(doc).is_file() else set()
    except (OSError, ValueError):  # not a path at all
        return set()


def _typed(kind: str, value: object) -> object:
    """A value of run_config as daqnet-evb should read it back."""
    text = "true" if value is True else "false" if value is False else str(value)
    if kind in ("integer", "seed"):
        return int(text)
    if kind == "number":
        return float(text)
    if kind == "boolean":
        return text == "true"
    if kind == "number_list":
        return [float(t) for t in text.split(",") if t.strip()]
    if kind == "text_list":
        return [t.strip() for t in text.split(",") if t.strip()]
    return text


def bench_path(scenario: Scenario) -> None:
    """daqnet bench --prepare's checks; its run.cfg is read back by daqnet-evb's reader as
    written."""
    cfg = run_config(scenario, check_memory=False)
    back = _core.evb.read_config(run_config_text(cfg, scenario.source), "run.cfg")
    for key in run_config_keys():
        want, got = _typed(key["kind"], cfg[key["name"]]), back[key["name"]]
        assert got == want, f"run.cfg {key['name']}: wrote {want!r}, daqnet-evb reads {got!r}"


def command_paths(scenario: Scenario) -> dict[str, Any]:
    """What the commands do after loading that costs little on a small run, each on its own
    (one may refuse the scenario where another runs it)."""

    def stages() -> None:
        fabric, routing, placement, workload = scenario.build()
        cells = placement.ranks * workload.num_steps
        if cells <= 20_000:
            conflicts(routing, placement, workload, threads=1)
        if cells <= 2_000 and scenario["simulate"]["mode"] == "steps":
            r = simulate_steps(scenario, stages=(fabric, routing, placement, workload), threads=1)
            # A wrong answer, not a crash: every figure of the document is a finite number.
            json.dumps(r.to_dict(), allow_nan=False)
        check_protocol(scenario, placement.ranks)

    def key_use() -> None:
        for command in ("conflicts", "simulate", "bench"):
            for key in scenario.given:
                unused(scenario, command, key)

    return {"stages": stages, "key use": key_use, "bench": lambda: bench_path(scenario)}


def load_and_exercise(
    tmp_path: Path, seed: str, edits: list[tuple[str, ...]], as_set: bool
) -> None:
    doc = SEEDS[seed]
    overrides: list[str] = []
    if as_set and len(edits) == 1 and edits[0][0] == "set":
        _, section, key, value = edits[0]
        overrides = [f"{section}.{key}={toml_value(value)}"]
    else:
        doc = apply(doc, edits)
    path = tmp_path / "fuzzed.toml"
    path.write_text(toml_document(doc), encoding="utf-8")
    files = _files(doc) | _files([e[-1] for e in edits])
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)  # a hang ends the run, loudly
    try:
        try:
            scenario = Scenario.load(path, overrides)
        except USER_ERRORS as err:
            event("refused when loaded")
            msg = _check_message(err, path, overrides, files)
            # One wrong-typed key alone is named with its section.
            if len(edits) == 1 and edits[0][0] == "set" and wrong_type(*edits[0][1:]):
                section, key = edits[0][1:3]
                assert f"{section}.{key}" in msg, f"{section}.{key} = {edits[0][3]!r}: {msg!r}"
            return
        for name, path_of_a_command in command_paths(scenario).items():
            try:
                path_of_a_command()
                event(f"{name}: ran")
            except USER_ERRORS as err:
                event(f"{name}: refused")
                _check_message(err, path, overrides, files)
    finally:
        faulthandler.cancel_dump_traceback_later()


@SETTINGS
@given(data=st.data(), seed=st.sampled_from(sorted(SEEDS)), as_set=st.booleans())
def test_fuzz_scenario(tmp_path, guarded, data, seed, as_set):
    load_and_exercise(tmp_path, seed, data.draw(mutations(seed), label="edits"), as_set)


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_seeds_load_and_run(tmp_path, seed):
    """Every seed is a valid scenario: mutations start from something that works."""
    path = tmp_path / "seed.toml"
    path.write_text(toml_document(SEEDS[seed]))
    scenario = Scenario.load(path)
    scenario.build()


@settings(SETTINGS, max_examples=max(3, EXAMPLES // 6))  # a process each: 10 by default
@given(data=st.data(), seed=st.sampled_from(["small", "small-bench", "steps-file", "table-file"]))
def test_fuzz_scenario_command_line(tmp_path, data, seed):
    """The command line on mutated files: exit 0, or 2 with one line and no traceback."""
    edits = data.draw(mutations(seed), label="edits")
    path = tmp_path / "fuzzed.toml"
    path.write_text(toml_document(apply(SEEDS[seed], edits)), encoding="utf-8")
    p = subprocess.run(
        [sys.executable, "-m", "daqnet", "conflicts", str(path), "--threads", "1"],
        capture_output=True,
        text=True,
        timeout=HANG_SECONDS,
    )
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode in (0, 2), (p.returncode, p.stderr)
    if p.returncode == 2:
        errors = [ln for ln in p.stderr.splitlines() if not ln.startswith("daqnet: warning:")]
        assert len(errors) == 1 and errors[0].startswith("daqnet: error: "), p.stderr
        assert path.name in errors[0], errors[0]
