"""Coverage-guided fuzzing of daqnet's Python readers with atheris (libFuzzer for Python).

    python tests/fuzz_readers.py TARGET [libFuzzer options] CORPUS_DIR [SEED_DIR ...]

TARGET is one of READERS below. Each input is written to a file (or, for expressions and
--set items, taken as text) and handed to the reader: it must either be read or refused with
one of USER_ERRORS, a message of one line that names the file (or the key, the option). Any
other exception, a hang (-timeout) or a message without a name is a crash: libFuzzer keeps
the input (-artifact_prefix). tests/test_fuzz_python.py runs every target briefly from its
committed seeds; docs/fuzzing.md gives the long run.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["daqnet", "hostlist", "tomllib", "tomli"]):
    from daqnet import _core, fabric, placement, workload
    from daqnet.bench.collect import collect, read_run_config
    from daqnet.errors import USER_ERRORS
    from daqnet.io.hostlist import expand, read_hostnames
    from daqnet.io.slurm_topology import read_slurm_topology
    from daqnet.io.steps_file import read_steps
    from daqnet.plan import plan, read_prices
    from daqnet.scenario import Scenario, parse_set, parse_vary

WORK = Path(tempfile.mkdtemp(prefix="daqnet-atheris-"))
SMALL = WORK / "small.toml"
SMALL.write_text('[fabric]\nradix = 8\nhosts = 27\n[workload]\nschedule = "barrel"\n')
FABRIC_27 = fabric.fat_tree(radix=8, hosts=27)


class NotNamed(AssertionError):
    """A refusal whose message does not say where the problem is."""


def refused(err: BaseException, *names: str) -> None:
    msg = str(err) if not isinstance(err, OSError) else f"{err.filename}: {err.strerror}"
    if not msg.strip() or "\n" in msg.strip():
        raise NotNamed(f"not one line: {msg!r}") from err
    if not any(n in msg for n in names):
        raise NotNamed(f"names none of {names}: {msg!r}") from err


def as_file(data: bytes, name: str) -> Path:
    path = WORK / name
    path.write_bytes(data)
    return path


def text_of(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def scenario(data: bytes) -> None:
    path = as_file(data, "fuzzed.toml")
    try:
        s = Scenario.load(path)
        f = s["fabric"]
        # Building is what a command does next; huge fabrics are slow, not wrong: skip them.
        if (f["hosts"] or 0) <= 2048 and (f["supernodes"] or 0) <= 8 and f["kind"] != "dragonfly":
            s.build()
    except USER_ERRORS as err:
        refused(err, path.name, "fabric.", "routing.", "placement.", "workload.")


def steps(data: bytes) -> None:
    path = as_file(data, "steps.txt")
    try:
        ranks, _ = read_steps(path)
        workload.from_steps_file(max(ranks, 2), path)
    except USER_ERRORS as err:
        refused(err, path.name)


def hosts(data: bytes) -> None:
    """A host list as placement.file and as fabric.naming_file."""
    path = as_file(data, "hosts.txt")
    for read in (
        lambda: read_hostnames(path, "placement.file"),
        lambda: placement.from_file(FABRIC_27, path),
        lambda: fabric.fat_tree(radix=8, hosts=4, naming="file", naming_file=path),
    ):
        try:
            read()
        except USER_ERRORS as err:
            refused(err, path.name, "placement.file", "fabric.naming_file")


def topology(data: bytes) -> None:
    path = as_file(data, "topology.conf")
    try:
        read_slurm_topology(path)
    except USER_ERRORS as err:
        refused(err, path.name)


def prices(data: bytes) -> None:
    """A prices file, and the plan priced with it: every figure a finite number."""
    path = as_file(data, "prices.toml")
    try:
        priced = plan(64, 100.0, 8, ["1:1"], read_prices(path))
    except USER_ERRORS as err:
        refused(err, path.name)
    else:
        json.dumps(priced.to_dict(), allow_nan=False)


def hostlist(data: bytes) -> None:
    try:
        names = expand(text_of(data), "--pool")
    except USER_ERRORS as err:
        refused(err, "--pool")
    else:
        if not names or len(set(names)) != len(names):
            raise AssertionError(f"expand gave {len(names)} names, {len(set(names))} distinct")


def overrides(data: bytes) -> None:
    """--set and --vary items, and a scenario loaded with the --set item."""
    item = text_of(data)
    for parse in (parse_set, parse_vary, lambda i: Scenario.load(SMALL, [i]).build()):
        try:
            parse(item)
        except USER_ERRORS as err:
            refused(err, "set ", "vary ", "small.toml")


RUN_CFG_KINDS = {k["name"]: k["kind"] for k in _core.evb.config_keys()}


def as_read(kind: str, text: str) -> object:
    """A run.cfg value as docs/bench.md describes the format (written again here)."""
    if kind in ("integer", "seed"):
        if not re.fullmatch(r"-?[0-9]+", text):
            raise ValueError(f"{text!r} is no whole number")
        return int(text)
    if kind == "number":
        return float(text)
    if kind == "boolean":
        return text in ("1", "true")
    items = [t.strip(" \t\r") for t in text.split(",")]
    if kind == "number_list":
        return [float(t) for t in items if t]
    if kind == "text_list":
        return [t for t in items if t]
    return text


def run_cfg(data: bytes) -> None:
    """run.cfg as daqnet-evb reads it (the core's reader) and as daqnet collect reads it
    back: where daqnet-evb accepts a file, both readers agree on every key it gives."""
    given = read_run_config(as_file(data, "run.cfg"))  # never raises: it reads what is there
    try:
        text = data.decode("utf-8")  # the binding takes text; other bytes: collect's side only
    except UnicodeDecodeError:
        return
    try:
        back = _core.evb.read_config(text, "run.cfg")
    except USER_ERRORS as err:
        refused(err, "run.cfg")
        return
    for key, value in given.items():
        if key not in RUN_CFG_KINDS:
            continue
        try:
            same = as_read(RUN_CFG_KINDS[key], value) == back[key]
        except ValueError:
            same = False
        if not same:
            raise AssertionError(f"run.cfg {key} = {value!r}: daqnet-evb reads {back[key]!r}")


RUN = Path(__file__).resolve().parent / "data" / "fuzz" / "collect-run"


def collected(data: bytes) -> None:
    """A run directory of daqnet-evb (2 ranks, tests/data/fuzz/collect-run/) whose
    rank-0.json (first byte 'J') or rank-0.csv (any other) is the input: daqnet collect
    gives a result, or one line naming the directory or the file."""
    run = WORK / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(RUN, run)
    (run / ("rank-0.json" if data[:1] == b"J" else "rank-0.csv")).write_bytes(data[1:])
    try:
        collect(run).to_dict()
    except USER_ERRORS as err:
        refused(err, str(run), "rank-0")


READERS: dict[str, Callable[[bytes], None]] = {
    "scenario": scenario,
    "steps": steps,
    "hosts": hosts,
    "topology": topology,
    "prices": prices,
    "hostlist": hostlist,
    "overrides": overrides,
    "run_cfg": run_cfg,
    "collect": collected,
}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in READERS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(READERS)}}} [libFuzzer options] CORPUS...")
    target = READERS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
