"""daqnet's routing against the real subnet manager: OpenSM 3.3 under ibsim.

Needs Debian's opensm, ibsim-utils, libumad2sim0 and infiniband-diags (.ci/run installs
them; here the tests skip with the reason when they are missing).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import daqnet
import numpy as np
import pytest
import reference
from daqnet import fabric, placement, routing, workload
from daqnet.analysis import conflicts
from daqnet.cli import main
from daqnet.errors import USER_ERRORS, DaqnetError
from daqnet.io.files import read_toml
from daqnet.subnet_manager import find_tools, run_opensm

try:
    find_tools()
    MISSING = ""
except DaqnetError as err:
    MISSING = str(err)

pytestmark = pytest.mark.skipif(bool(MISSING), reason=MISSING)


def barrel_conflicts(r: routing.Routing, order: str = "topology") -> int:
    p = placement.build(r.fabric, order)
    return conflicts(
        r, p, workload.build(p.ranks, "event-building", "barrel", 0, [1])
    ).total_conflicts


@pytest.mark.parametrize(
    ("radix", "hosts", "naming"),
    [(8, 32, "cabling"), (8, 27, "cabling"), (8, 9, "cabling"), (12, 72, "shuffled")],
    ids=["full", "partial-leaf", "two-leaves", "shuffled-names"],
)
def test_ftree_equals_dmodk_on_two_level_trees(tmp_path, radix, hosts, naming):
    f = daqnet.fat_tree(radix=radix, hosts=hosts, naming=naming, naming_seed=3)
    run = run_opensm(f, "ftree", tmp_path)
    osm = routing.from_lft_dump(f, run.lft_dump, run.subnet_list)
    np.testing.assert_array_equal(osm.table(), routing.dmodk(f).table())


def test_ftree_on_a_full_three_level_tree(tmp_path):
    """Leaves and cores route as D-mod-K; each spine's up-ports for destinations outside
    its pod are D-mod-K's sequence rotated (OpenSM balances with running counters whose
    start differs per spine), so every core port carries as many destinations and the
    barrel shift stays conflict-free. docs/opensm.md explains it."""
    f = daqnet.fat_tree(radix=8, hosts=128, levels=3)
    run = run_opensm(f, "ftree", tmp_path)
    osm = routing.from_lft_dump(f, run.lft_dump, run.subnet_list)
    a, b = routing.dmodk(f).table(), osm.table()
    level = f.nodes()["level"][f.num_hosts :]
    np.testing.assert_array_equal(a[level != 2], b[level != 2])
    pod_hosts = 16
    for s in np.flatnonzero(level == 2):
        pod = f.nodes()["position"][f.num_hosts + s] // 4
        remote = np.ones(f.num_hosts, bool)
        remote[pod * pod_hosts : (pod + 1) * pod_hosts] = False
        np.testing.assert_array_equal(a[s, ~remote], b[s, ~remote])  # down routes
        seq_a, seq_b = a[s, remote], b[s, remote]
        assert any(np.array_equal(np.roll(seq_a, -k), seq_b) for k in range(len(seq_a)))
    assert barrel_conflicts(osm) == barrel_conflicts(routing.dmodk(f)) == 0


def test_rank_order_repair_over_ftree_tables_of_three_levels(tmp_path):
    # ftree rotates each spine's up-ports on 3 levels: the table order's vote per host was
    # arbitrary and scattered the leaves (7,416 conflicts on 216 hosts from a random order,
    # where whole leaves in cabling order have none). The leaf blocks are a candidate now.
    from daqnet import _core
    from daqnet.repair import Judge, repair_rank_order

    f = daqnet.fat_tree(radix=8, hosts=128, levels=3)
    run = run_opensm(f, "ftree", tmp_path)
    osm = routing.from_lft_dump(f, run.lft_dump, run.subnet_list)
    p = placement.build(f, "random")
    w = workload.build(p.ranks, "event-building", "barrel", 0, [1])
    judge = Judge(osm, _core.simulate.NetworkModel(osm._core, 0.0, 0.0), 1 << 20)
    found = repair_rank_order(osm, p.hosts, w, judge, moves=0)
    assert conflicts(osm, p, w).total_conflicts > 0
    assert found.conflicts == 0 and sorted(found.hosts) == sorted(p.hosts)
    assert [c["order"] for c in found.candidates][:3] == ["given", "tables", "leaf blocks"]


def test_ftree_refuses_a_partial_three_level_tree_loudly(tmp_path):
    f = daqnet.fat_tree(radix=8, hosts=100, levels=3)
    with pytest.raises(
        DaqnetError,
        match=r"ftree engine did not route this fabric.*fell back to minhop.*"
        r"\(--engine dfsssp or minhop route any topology; updn routes trees\)",
    ):
        run_opensm(f, "ftree", tmp_path)


@pytest.mark.parametrize("engine", ["ftree", "updn"])
def test_a_tree_engine_on_a_dragonfly_says_why_and_what_routes_it(tmp_path, engine):
    # updn was named as routing any topology, and its reason ("no root nodes") was dropped.
    from daqnet.fabric import dragonfly

    f = dragonfly(p=2, a=4, h=2, g=9)
    why = {"updn": "no root nodes were found", "ftree": "ERR"}[engine]
    with pytest.raises(
        DaqnetError, match=rf"{why}.*\(--engine dfsssp or minhop route any topology\)"
    ):
        run_opensm(f, engine, tmp_path)


@pytest.mark.parametrize("engine", ["updn", "minhop", "dfsssp"])
def test_other_engines_import_and_analyse(tmp_path, engine):
    f = daqnet.fat_tree(radix=8, hosts=27)
    run = run_opensm(f, engine, tmp_path)
    osm = routing.from_lft_dump(f, run.lft_dump, run.subnet_list)
    assert osm.max_hops == 4
    # the analysis of OpenSM's tables agrees with the brute-force walk of them
    p = placement.build(f, "hostname")
    w = workload.build(p.ranks, "event-building", "barrel", 0, [1])
    per_step, *_ = reference.conflicts(osm, p.hosts, w.steps())
    assert conflicts(osm, p, w).total_conflicts == sum(c for c, _, _ in per_step)


def test_real_tools_round_trip(tmp_path):
    """build → ibsim net → OpenSM → ibnetdiscover and dump_lfts → import: the same cables,
    and for ftree the same paths as dmodk."""
    built = daqnet.fat_tree(radix=8, hosts=27)
    run_opensm(built, "ftree", tmp_path)
    seen = fabric.from_ibnetdiscover(tmp_path / "ibnetdiscover.out")
    links = [f.links() for f in (built, seen)]
    assert next(
        sorted(zip(*(ln[k] for k in ("src", "src_port", "dst", "dst_port")), strict=False))
        for ln in links
    ) == sorted(zip(*(links[1][k] for k in ("src", "src_port", "dst", "dst_port")), strict=False))
    assert seen.node_names == built.node_names
    for dump in ("opensm-lfts.dump", "dump_lfts.out"):
        osm = routing.from_lft_dump(seen, tmp_path / dump)
        np.testing.assert_array_equal(osm.table(), routing.dmodk(built).table())


def test_opensm_command_writes_a_scenario_that_uses_the_tables(tmp_path, capsys):
    sc = tmp_path / "s.toml"
    sc.write_text(
        '[fabric]\nradix = 8\nhosts = 30\nnaming = "shuffled"\n[placement]\norder = "hostname"\n'
    )
    out = tmp_path / "osm"
    assert main(["opensm", str(sc), "--engine", "ftree", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["engine"] == "ftree" and doc["dmodk_entries_differing"] == 0
    assert main(["conflicts", str(out / "scenario.toml"), "--json"]) == 0
    routed = json.loads(capsys.readouterr().out)
    assert main(["conflicts", str(sc), "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)
    assert routed["total_conflicts"] == ours["total_conflicts"] > 0  # hostname order conflicts


def test_a_top_lid_dump_lfts_leaves_out_is_said(tmp_path, capsys):
    # 49 hosts, 9 leaves and 6 spines of radix 12 take LIDs 1-64: ibroute rounds its last
    # block of 64 down and never prints LID 64, which routes a host; that dump_lfts.out
    # was written without a word, and its import failed on a black hole.
    sc = tmp_path / "s.toml"
    sc.write_text('[fabric]\nradix = 12\nhosts = 49\nnaming = "shuffled"\nnaming_seed = 1\n')
    out = tmp_path / "osm"
    assert main(["opensm", str(sc), "--engine", "ftree", "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["dump_lfts_missing_lid"] == 64
    assert "dump_lfts.out leaves out LID 0x40, the fabric's top" in captured.err
    seen = fabric.from_ibnetdiscover(out / "ibnetdiscover.out")
    with pytest.raises(USER_ERRORS, match="leave out a top LID that begins a block of 64"):
        routing.from_lft_dump(seen, out / "dump_lfts.out")
    routing.from_lft_dump(seen, out / "opensm-lfts.dump")  # holds it
    # One LID fewer: the last block is whole, and nothing is said.
    sc.write_text("[fabric]\nradix = 12\nhosts = 48\n")
    assert main(["opensm", str(sc), "--engine", "ftree", "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert "dump_lfts_missing_lid" not in json.loads(captured.out)
    assert "leaves out" not in captured.err
    routing.from_lft_dump(
        fabric.from_ibnetdiscover(out / "ibnetdiscover.out"), out / "dump_lfts.out"
    )


def test_opensm_over_a_topology_conf_writes_a_scenario_that_loads(tmp_path, capsys):
    # Tables over a topology.conf are refused (it has no port numbers): the scenario
    # daqnet opensm writes takes the ibsim net OpenSM routed, whose ports its tables use.
    (tmp_path / "topology.conf").write_text(
        "SwitchName=leaf1 Nodes=node[01-04]\nSwitchName=leaf2 Nodes=node[05-08]\n"
        "SwitchName=spine1 Switches=leaf[1-2]\nSwitchName=spine2 Switches=leaf[1-2]\n"
    )
    sc = tmp_path / "s.toml"
    sc.write_text('[fabric]\nkind = "slurm-topology"\nfile = "topology.conf"\n'
                  '[routing]\nengine = "minhop"\n[placement]\norder = "hostname"\n')  # fmt: skip
    out = tmp_path / "osm"
    assert main(["opensm", str(sc), "--engine", "minhop", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["conflicts", str(out / "scenario.toml"), "--json"]) == 0
    routed = json.loads(capsys.readouterr().out)
    assert routed["hosts"] == 8 and routed["total_flows"] == 8 * 7


def _as_captured_elsewhere(text: str) -> str:
    """The 27-host corpus as a production fabric would print it: the vendor's GUIDs, and
    LIDs in the production subnet manager's order (reversed here), not ibsim's."""
    text = re.sub(r"0000000000([12]000[0-9a-f]{2})", r"0c42a10300\1", text)  # ids and guid fields
    text = re.sub(r"0x([12]000[0-9a-f]{2})\b", r"0x0c42a10300\1", text)
    text = re.sub(r"\(([12]000[0-9a-f]{2})\)", r"(c42a10300\1)", text)  # port GUIDs
    return re.sub(r"\blid (\d+)", lambda m: f"lid {200 - int(m.group(1))}", text)


def test_opensm_over_a_capture_with_its_own_lids_and_guids(tmp_path, capsys):
    # An imported fabric's LIDs and GUIDs are those of the live fabric; OpenSM under ibsim
    # numbers its own. Its tables were read against the capture's LIDs: a host's traffic
    # went to another (an error at best). They are read over the net file OpenSM routed.
    corpus = Path(__file__).parent / "data" / "ib" / "ibnetdiscover-27.out"
    (tmp_path / "live.out").write_text(_as_captured_elsewhere(corpus.read_text()))
    (tmp_path / "ibsim.out").write_text(corpus.read_text())
    found = {}
    for name in ("live", "ibsim"):
        sc = tmp_path / f"{name}.toml"
        sc.write_text(f'[fabric]\nkind = "ibnetdiscover"\nfile = "{name}.out"\nlink_gbps = 200\n'
                      '[placement]\norder = "hostname"\n')  # fmt: skip
        out = tmp_path / f"osm-{name}"
        assert main(["opensm", str(sc), "--engine", "updn", "--out", str(out)]) == 0
        capsys.readouterr()
        # The net file in place of the capture, with the rate given; no defaults (every one
        # was written: PERCS rates under an imported fabric).
        written = read_toml(out / "scenario.toml", "derived scenario")
        assert written["fabric"] == {
            "kind": "ibnetdiscover",
            "file": "fabric.net",
            "link_gbps": 200,
        }
        assert main(["conflicts", str(out / "scenario.toml"), "--json"]) == 0
        found[name] = json.loads(capsys.readouterr().out)["total_conflicts"]
    assert (
        fabric.from_ibnetdiscover(tmp_path / "live.out").node_names
        == fabric.from_ibnetdiscover(corpus).node_names
    )
    assert found["live"] == found["ibsim"] > 0


def test_a_host_on_a_core_leaves_the_core_a_core(tmp_path, capsys):
    # A management node on core0 of a 3-level tree, added to what ibnetdiscover printed of
    # the routed tree: by distance to a host core0 was a leaf, its cables to the spines read
    # "leaf->spine". Its siblings (core1 on the same spines) place it among the cores; updn
    # routes the fabric with the node (ftree refuses a CA above the leaves).
    run_opensm(daqnet.fat_tree(radix=8, hosts=64, levels=3), "ftree", tmp_path)
    text = (tmp_path / "ibnetdiscover.out").read_text()
    header = text.index('# "core0" base port')
    last = text.index("\n\n", header)  # core0's last port line ends its block
    text = (
        text[:last]
        + '\n[8]\t"H-00000000001000f0"[1](1000f1) \t\t# "mgmt0" lid 200 4xEDR'
        + text[last:]
    )
    text += (
        "\nvendid=0x0\ndevid=0x0\nsysimgguid=0x1000f0\ncaguid=0x1000f0\n"
        'Ca\t1 "H-00000000001000f0"\t\t# "mgmt0"\n'
        '[1](1000f1) \t"S-0000000000200020"[8]\t\t# lid 200 lmc 0 "core0" lid 49 4xEDR\n'
    )
    (tmp_path / "mgmt.out").write_text(text)
    f = fabric.from_ibnetdiscover(tmp_path / "mgmt.out")
    level = dict(zip(f.node_names, f.nodes()["level"].tolist(), strict=True))
    assert level["core0"] == level["core1"] == 3 and max(level.values()) == 3
    assert "host->core" in f.link_class_names() and "core->leaf" not in f.link_class_names()
    sc = tmp_path / "mgmt.toml"
    sc.write_text('[fabric]\nkind = "ibnetdiscover"\nfile = "mgmt.out"\n')
    assert main(["opensm", str(sc), "--engine", "updn", "--out", str(tmp_path / "osm")]) == 0
    capsys.readouterr()
    assert main(["conflicts", str(tmp_path / "osm" / "scenario.toml")]) == 0
    assert (
        "(16 leaves with 4 hosts each, 1 host on core0 above the leaves)" in capsys.readouterr().out
    )


def test_missing_tools_are_named(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("DAQNET_UMAD2SIM", "")
    monkeypatch.setattr("os.access", lambda *_a, **_k: False)
    with pytest.raises(DaqnetError, match="apt-get install opensm ibsim-utils libumad2sim0"):
        find_tools()


def test_ctrl_c_while_opensm_runs_stops_it_and_says_so(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    sc = tmp_path / "s.toml"
    sc.write_text("[fabric]\nradix = 16\nhosts = 1024\nlevels = 3\n")  # ~3 s of OpenSM
    out = tmp_path / "osm"
    # An earlier run's dumps, which must not stay beside this run's logs.
    out.mkdir()
    for earlier in ("opensm.fdbs", "opensm-lid-matrix.dump", "dump_lfts.out"):
        (out / earlier).write_text("an earlier run's\n")
    cmd = [sys.executable, "-m", "daqnet", "opensm", str(sc), "--engine", "updn", "--out", str(out)]
    # From tmp_path: nothing may be left in the directory daqnet was started from (umad2sim
    # makes a ./sys-<pid> tree in the working directory of the tools it is loaded into).
    p = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    deadline = time.monotonic() + 60
    while not (out / "opensm.log").exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    assert p.poll() is None, "OpenSM finished before it could be interrupted"
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "interrupted before OpenSM's tables were read: no scenario written" in err
    assert "Traceback" not in err and not (out / "scenario.toml").exists()
    assert not list(tmp_path.glob("sys-*")) and not list(out.glob("sys-*"))
    assert {p.name for p in out.iterdir()} <= {"fabric.net", "ibsim.log", "opensm.log"}
    # Neither ibsim nor OpenSM outlives daqnet (both name the output directory; a zombie's
    # command line is empty).
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                line = f.read().decode(errors="replace")
        except OSError:
            continue
        if str(out) in line:
            left.append(line)
    assert not left


def test_tables_cut_short_by_an_interrupt_are_removed(tmp_path, monkeypatch):
    # Ctrl-C while OpenSM wrote its dump left a quarter of opensm-lfts.dump, under the name
    # the docs say to import, where it read as a naming error: a run that does not finish
    # leaves only its logs.
    import daqnet.subnet_manager as sm
    from daqnet import Scenario

    def cut_short(fabric, engine, outdir, *rest):
        (outdir / "opensm-lfts.dump").write_text("Unicast lids [0x0-0x3] of switch Lid 1 guid 0x2")
        (outdir / "opensm.log").write_text("routing\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(sm, "find_tools", lambda: ("ibsim", "opensm", "lib"))
    monkeypatch.setattr(sm, "_route", cut_short)
    fabric = Scenario({"fabric": {"radix": 4, "hosts": 8}}).build_fabric()
    with pytest.raises(KeyboardInterrupt):
        sm.run_opensm(fabric, "updn", tmp_path / "o")
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["fabric.net", "opensm.log"]


def test_engines_other_than_ftree_are_not_sent_to_the_ftree_explanation(tmp_path, capsys):
    # "(docs/opensm.md says why they differ)" was printed for updn too, where the docs
    # explain ftree's rotation only.
    from daqnet.cli import main

    sc = tmp_path / "s.toml"
    sc.write_text("[fabric]\nradix = 8\nhosts = 64\nlevels = 3\n")
    assert main(["opensm", str(sc), "--engine", "updn", "--out", str(tmp_path / "o")]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "vs dmodk" in ln)
    assert "of 3,072 forwarding entries equal (updn balances up-ports by its own counters" in line
    assert "docs/opensm.md" not in line
