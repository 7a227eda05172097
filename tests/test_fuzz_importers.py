"""Fuzzing of the importers (hypothesis): files made by mutating the committed corpus
(tests/data/ib: real ibnetdiscover, OpenSM and dump_lfts output; tests/data/fuzz: Slurm
topology.conf, steps files, hostlist expressions, routing table files, host lists, and a
run directory of daqnet-evb) must either load or fail with one DaqnetError/core Error naming
the file, never crash the process, hang or raise anything else. tests/test_fuzz_cpp.py and
tests/test_fuzz_python.py fuzz the same readers guided by coverage.

The short run here is part of every test run (DAQNET_FUZZ_EXAMPLES examples per importer,
default 60); set DAQNET_FUZZ_EXAMPLES=5000 for a long run. A failing input hypothesis finds
is kept in its example database (.hypothesis/) and should be added to the corpus.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from daqnet import fabric, placement, routing
from daqnet.bench import collect
from daqnet.errors import USER_ERRORS
from daqnet.io.hostlist import expand, read_hostnames
from daqnet.io.slurm_topology import read_slurm_topology
from daqnet.io.steps_file import read_steps
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

IB = Path(__file__).parent / "data" / "ib"
FUZZ = Path(__file__).parent / "data" / "fuzz"
EXAMPLES = int(os.environ.get("DAQNET_FUZZ_EXAMPLES", "60"))
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=5000,  # ms per input: an importer that hangs fails here
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Tokens that make inputs near-valid: the words and numbers the formats use.
TOKENS = [
    "Switch", "Ca", "Hca", "Rt", "lid", "port", "0x", "[1]", "[99]", "#", '"', "S-", "H-",
    "4xEDR", "4xHDR", "1xSDR", "12xQDR", "-1", "0", "65535", "99999999999", "\t", " ", "\n",
    "Unicast", "lids", "Channel", "SwitchName=", "Switches=", "Nodes=", "node[1-", "]", ",",
    ">", "x", "\ufeff", "\x00", "é", "leaf0", "spine3", "node07", "node26", "37", "\r",
]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    """The text after a few random edits: drop, repeat or swap lines, replace or insert
    tokens and bytes, truncate."""
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["drop", "repeat", "swap", "token", "insert", "truncate"]))
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        if op == "drop":
            del lines[i : i + draw(st.integers(1, 5))]
        elif op == "repeat":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op in ("token", "insert"):
            line = lines[i]
            at = draw(st.integers(0, len(line)))
            new = draw(st.one_of(st.sampled_from(TOKENS), st.text(max_size=6)))
            cut = at + (draw(st.integers(0, 8)) if op == "token" else 0)
            lines[i] = line[:at] + new + line[cut:]
        else:
            lines = [*lines[:i], lines[i][: draw(st.integers(0, len(lines[i])))]]
    return "".join(lines)


def check(load, path: Path) -> None:
    try:
        load(path)
    except USER_ERRORS as err:
        msg = str(err)
        assert "\n" not in msg.strip(), f"not one line: {msg!r}"
        assert path.name in msg, f"does not name the file: {msg!r}"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8", "surrogatepass"))
    return p


@FUZZ_SETTINGS
@given(data=st.data())
def test_fuzz_ibnetdiscover(tmp_path, data):
    text = data.draw(mutated((IB / "ibnetdiscover-27.out").read_text()))
    check(fabric.from_ibnetdiscover, _write(tmp_path, "ibnet.out", text))


FABRIC_27 = None


def _fabric_27():
    global FABRIC_27
    if FABRIC_27 is None:
        FABRIC_27 = fabric.from_ibnetdiscover(IB / "ibnetdiscover-27.out")
    return FABRIC_27


@FUZZ_SETTINGS
@given(data=st.data(), source=st.sampled_from(["opensm-lfts-27.dump", "dump_lfts-27.out"]))
def test_fuzz_lft_dumps(tmp_path, data, source):
    text = data.draw(mutated((IB / source).read_text()))
    check(lambda p: routing.from_lft_dump(_fabric_27(), p), _write(tmp_path, "lfts.dump", text))


@FUZZ_SETTINGS
@given(data=st.data())
def test_fuzz_subnet_list(tmp_path, data):
    # The fabric from the ibsim net daqnet writes has no LIDs: they come from the subnet list.
    text = data.draw(mutated((IB / "opensm-subnet-27.lst").read_text()))
    sub = _write(tmp_path, "subnet.lst", text)
    f = fabric.fat_tree(radix=8, hosts=27, levels=2)
    check(lambda p: routing.from_lft_dump(f, IB / "opensm-lfts-27.dump", p), sub)


@FUZZ_SETTINGS
@given(data=st.data())
def test_fuzz_topology_conf(tmp_path, data):
    text = data.draw(mutated((FUZZ / "topology.conf").read_text()))
    check(read_slurm_topology, _write(tmp_path, "topology.conf", text))


@FUZZ_SETTINGS
@given(data=st.data())
def test_fuzz_steps_file(tmp_path, data):
    text = data.draw(mutated((FUZZ / "steps.txt").read_text()))
    check(read_steps, _write(tmp_path, "steps.txt", text))


@FUZZ_SETTINGS
@given(data=st.data())
def test_fuzz_hostlist(data):
    seeds = (FUZZ / "hostlists.txt").read_text().splitlines()
    expr = data.draw(mutated(data.draw(st.sampled_from(seeds)))).replace("\n", "")
    try:
        names = expand(expr, "--pool")
    except USER_ERRORS as err:
        assert "--pool" in str(err)
    else:
        assert names and len(set(names)) == len(names)


@pytest.mark.parametrize("name", ["ibnetdiscover-27.out", "opensm-lfts-27.dump"])
def test_corpus_itself_loads(name):
    f = _fabric_27()
    if name.endswith(".dump"):
        assert routing.from_lft_dump(f, IB / name).engine.startswith("lft-dump")
    else:
        assert f.num_hosts == 27


@FUZZ_SETTINGS
@given(data=st.data(), seed=st.sampled_from(["seed-dmodk-27.txt", "seed-random-27.txt"]))
def test_fuzz_table_file(tmp_path, data, seed):
    text = data.draw(mutated((FUZZ / "table_file" / seed).read_text()))
    f = fabric.fat_tree(radix=8, hosts=27)
    check(lambda p: routing.from_file(f, p), _write(tmp_path, "tables.txt", text))


@FUZZ_SETTINGS
@given(data=st.data())
def test_fuzz_host_file(tmp_path, data):
    """A host list as placement.file (alone, and placing ranks) and as fabric.naming_file."""
    text = data.draw(mutated((FUZZ / "hosts.txt").read_text()))
    path = _write(tmp_path, "hosts.txt", text)
    f = fabric.fat_tree(radix=8, hosts=27)
    check(lambda p: read_hostnames(p, "placement.file"), path)
    check(lambda p: placement.from_file(f, p), path)
    check(lambda p: fabric.fat_tree(radix=8, hosts=4, naming="file", naming_file=p), path)


JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.text(max_size=5),
    st.builds(list),
    st.builds(dict),
    st.builds(lambda: [[1e308, 2]]),  # a fresh list each time: edits must not leak between examples
)


@st.composite
def edited_json(draw: st.DrawFn, doc: object) -> object:
    """The document with a few values replaced (any type) or keys dropped."""
    doc = json.loads(json.dumps(doc))
    for _ in range(draw(st.integers(1, 3))):
        node, path = doc, []
        while isinstance(node, (dict, list)) and node and draw(st.integers(0, 3)):
            key = draw(
                st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node)))
            )
            path.append((node, key))
            node = node[key]
        if not path:
            continue
        parent, key = path[-1]
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[key]
        else:
            parent[key] = draw(JSON_VALUES)
    return doc


RUN = FUZZ / "collect-run"


@FUZZ_SETTINGS
@given(data=st.data())
def test_fuzz_rank_snapshot(tmp_path, data):
    """daqnet collect on a run whose rank-0.json holds other values or lacks keys (a file of
    another version, or edited): a result, or one line naming the run directory."""
    run = tmp_path / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(RUN, run)
    doc = data.draw(edited_json(json.loads((RUN / "rank-0.json").read_text())))
    (run / "rank-0.json").write_text(json.dumps(doc))
    try:
        collect(run).to_dict()
    except USER_ERRORS as err:
        assert "\n" not in str(err) and str(run) in str(err), str(err)
