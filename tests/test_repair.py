"""daqnet repair: every repaired item is judged again by the analysis, on fabrics whose
tables do not follow the hostnames (irregular up-port order per leaf, missing hosts)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from daqnet import _core, fabric, placement, routing, workload
from daqnet.cli import main
from daqnet.errors import DaqnetError
from daqnet.io.files import read_toml
from daqnet.io.hostlist import expand
from daqnet.io.steps_file import read_steps
from daqnet.repair import Judge, repair_node_set, repair_rank_order, repair_schedule
from daqnet.scenario import Scenario
from daqnet.simulate.model import network_model


def two_level(leaves: int, k: int, missing: dict[int, int] | None = None, seed: int = 0):
    """A 2-level tree of `leaves` leaves with k host ports and k spines, hosts named in a
    shuffled order; leaf i lacks its last missing[i] hosts."""
    rng = np.random.default_rng(seed)
    missing = missing or {}
    slots = [(leaf, j) for leaf in range(leaves) for j in range(k - missing.get(leaf, 0))]
    names = [f"n{i:03d}" for i in rng.permutation(len(slots))]
    hosts = {slot: names[i] for i, slot in enumerate(slots)}
    switches = [(f"leaf{i}", 2 * k) for i in range(leaves)] + [
        (f"spine{j}", leaves) for j in range(k)
    ]
    cables = [(hosts[(leaf, j)], 1, f"leaf{leaf}", j + 1) for (leaf, j) in slots]
    cables += [(f"leaf{i}", k + 1 + j, f"spine{j}", i + 1) for i in range(leaves) for j in range(k)]
    f = fabric.graph([hosts[s] for s in slots], switches, cables)
    return f, [(leaf, j) for (leaf, j) in slots]


def irregular_tables(f, slots, k: int, seed: int, per_source: bool = False):
    """Forwarding tables: a host's leaf delivers it; every other leaf sends it up to a spine
    chosen by a random permutation of the destination leaf's slots (the same for every source
    leaf, or drawn per source leaf with per_source); spines deliver down."""
    rng = np.random.default_rng(seed)
    H = f.num_hosts
    nodes = f.node_names
    idx = {n: i for i, n in enumerate(nodes)}
    leaves = sorted({leaf for leaf, _ in slots})
    perm = {m: rng.permutation(k) for m in leaves}
    ports = np.zeros((len(nodes) - H, H), dtype=np.uint16)
    for d, (m, j) in enumerate(slots):
        for src_leaf in leaves:
            row = idx[f"leaf{src_leaf}"] - H
            if src_leaf == m:
                ports[row, d] = j + 1
            else:
                p = rng.permutation(k) if per_source else perm[m]
                ports[row, d] = k + 1 + int(p[j])
        for s in range(k):
            ports[idx[f"spine{s}"] - H, d] = m + 1
    return routing.from_ports(f, ports, "irregular")


def judge(r):
    model = _core.simulate.NetworkModel(r._core, 0.0, 0.0)
    return Judge(r, model, 1 << 20)


def analysed(r, hosts, w) -> int:
    res, _ = _core.analysis.analyze_conflicts(r._core, np.asarray(hosts, np.int32), w._core)
    return int(res.total_conflicts)


def test_irregular_up_port_order_is_repaired_to_zero_conflicts():
    f, slots = two_level(leaves=8, k=6)
    r = irregular_tables(f, slots, 6, seed=3)
    p = placement.hostname(f)
    w = workload.event_building(p.ranks)
    before = analysed(r, p.hosts, w)
    found = repair_rank_order(r, p.hosts, w, judge(r), moves=0)
    assert before > 100
    assert found.conflicts == 0 == analysed(r, found.hosts, w)
    assert sorted(found.hosts) == sorted(p.hosts)  # the same hosts, reordered
    assert found.lower_bound == 0


def test_missing_hosts_search_never_worse_and_matches_the_analysis():
    f, slots = two_level(leaves=6, k=4, missing={1: 1, 4: 2})
    r = irregular_tables(f, slots, 4, seed=5)
    p = placement.hostname(f)
    w = workload.event_building(p.ranks)
    before = analysed(r, p.hosts, w)
    found = repair_rank_order(r, p.hosts, w, judge(r), moves=20_000, seed=1)
    assert found.conflicts == analysed(r, found.hosts, w)
    assert found.lower_bound is not None and found.lower_bound <= found.conflicts < before
    assert found.search is not None and found.search["conflicts"] <= found.search["conflicts_start"]


def test_source_dependent_tables_get_fewer_conflicts():
    f, slots = two_level(leaves=6, k=4)
    r = irregular_tables(f, slots, 4, seed=2, per_source=True)
    p = placement.hostname(f)
    w = workload.event_building(p.ranks)
    before = analysed(r, p.hosts, w)
    j = judge(r)
    found = repair_rank_order(r, p.hosts, w, j, moves=20_000, seed=1)
    assert found.conflicts == analysed(r, found.hosts, w)
    assert found.search is not None and found.search["conflicts"] < before
    # Fewer conflicts, yet slower here (5.21 against 5.04 ms): the answer is never slower
    # than the order it was given, by a simulation of its own.
    assert simulated(r, found.hosts, w) <= simulated(r, p.hosts, w)


def simulated(r, hosts, w) -> float:
    """The order's time in a fresh judge (nothing remembered from the repair's)."""
    return judge(r).seconds(np.asarray(hosts, np.int32), w)


def test_rank_search_keeps_exact_totals_on_random_starts():
    # The core's incremental bookkeeping against a full analysis, on a 3-level tree
    # (two routes through each pod) and a random schedule.
    f = fabric.fat_tree(radix=8, hosts=100, levels=3)
    r = routing.dmodk(f)
    for seed in range(3):
        p = placement.random(f, seed=seed)
        w = workload.event_building(p.ranks, "random", seed=seed)
        res, _ = _core.analysis.improve_rank_order(r._core, p.hosts, w._core, seed, 3000)
        assert res.conflicts_start == analysed(r, p.hosts, w)
        assert res.conflicts == analysed(r, res.placement, w) <= res.conflicts_start
        assert sorted(res.placement) == sorted(p.hosts)


def test_lower_bound_holds_against_brute_force_on_a_tiny_tapered_tree():
    # 8 hosts on a 2:1 tree (leaves of 4 hosts, 2 up-links): every one of the 40,320
    # orders has at least the bound, and the search finds the best of them.
    f = fabric.fat_tree(radix=6, hosts=8, levels=2, taper="2:1", hosts_per_leaf=4)
    r = routing.dmodk(f)
    w = workload.event_building(8)
    given = np.arange(8, dtype=np.int32)
    found = repair_rank_order(r, given, w, judge(r), moves=5000)
    best = min(analysed(r, order, w) for order in itertools.permutations(range(8)))
    assert found.lower_bound is not None and 0 < found.lower_bound <= best
    assert found.search is not None and found.search["conflicts"] == best
    # The fewest conflicts (12) crowd a step's busiest up-link more than the given order's
    # 16 (0.926 against 0.842 ms): the repair keeps the given order, and says why.
    fewest = found.candidates[-1]
    assert fewest["conflicts"] == best and fewest["seconds"] > simulated(r, given, w)
    assert list(found.hosts) == list(given) and found.conflicts == analysed(r, given, w)
    assert "fewer conflicts but is slower" in found.method


def test_node_set_fills_leaves_when_n_cannot_be_conflict_free():
    f, slots = two_level(leaves=8, k=6)
    r = irregular_tables(f, slots, 6, seed=7)
    found = repair_node_set(
        r, np.arange(f.num_hosts, dtype=np.int32), 20, workload.event_building, judge(r), 5000
    )
    assert found.chosen.conflicts == analysed(r, found.chosen.hosts, workload.event_building(20))
    if found.chosen.conflicts > 0:
        assert found.nearest is not None
        n2, order = found.nearest
        assert n2 == 24 and order.conflicts == 0  # four whole leaves of 6
        leaves = {slots[h][0] for h in order.hosts}
        assert len(leaves) == 4


def test_node_set_says_when_no_larger_set_is_conflict_free(tmp_path, capsys):
    # 14 hosts on radix-8 leaves: 4, 4, 4, 2; the pool has no host to add. It ended at 4
    # conflicts with no word of a nearest set.
    p = tmp_path / "s.toml"
    p.write_text('[fabric]\nradix = 8\nhosts = 14\n[placement]\norder = "random"\n')
    assert main(["repair", str(p), "--what", "node-set", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["conflicts_after"] > 0 and doc.get("nearest") is None
    assert "no set of whole leaves from the pool (14 hosts)" in doc["no_nearest"]
    assert main(["repair", str(p), "--what", "node-set"]) == 0
    assert "  nearest    none: no set of whole leaves" in capsys.readouterr().out


def test_node_set_is_judged_against_the_pool_and_never_slower(capsys):
    # lhcb-540 under hostname order of shuffled names: its first 280 hosts lie mostly outside
    # a pool of node[001-300]. "Before" was those 280 (1,120 conflicts, the same for any
    # pool), and the repair read x0.968 against them. It is now the first 280 of the order
    # within the pool, and a repair no faster than that leaves the given set.
    example = Path(__file__).resolve().parents[1] / "examples" / "lhcb-540.toml"
    docs = []
    for pool in ("node[001-300]", "node[240-539]"):
        args = ["repair", str(example), "--what", "node-set", "--ranks", "280"]
        assert main([*args, "--pool", pool, "--moves", "2000", "--json"]) == 0
        docs.append(json.loads(capsys.readouterr().out))
    sc = Scenario.load(example)
    f, r, p, _ = sc.build()
    for doc, pool in zip(docs, ("node[001-300]", "node[240-539]"), strict=True):
        inside = [h for h in p.hosts if f.host_names[h] in expand(pool, "pool")][:280]
        j = Judge(r, network_model(sc, r), sc.message_bytes())
        w = sc.build_workload(280)
        assert doc["conflicts_before"] == j.conflicts(np.array(inside), w).total_conflicts
        assert set(doc["hosts"]) <= set(expand(pool, "pool"))
        assert doc["speedup"] >= 1 - 1e-9, doc["speedup"]
    assert docs[0]["conflicts_before"] != docs[1]["conflicts_before"]


@pytest.mark.parametrize("method", ["barrel-rand", "random-steps"])
def test_schedule_repairs_cover_every_flow_once_without_conflicts(method):
    f = fabric.fat_tree(radix=8, hosts=28, levels=2)
    r = routing.dmodk(f)
    p = placement.random(f, seed=4)
    w = workload.event_building(p.ranks)
    found = repair_schedule(r, p.hosts, w, judge(r), method, seed=2)
    pairs = np.concatenate(found.steps)
    assert len(pairs) == 28 * 27
    assert len({(int(a), int(b)) for a, b in pairs}) == 28 * 27
    assert analysed(r, p.hosts, found.workload) == 0
    for step in found.steps:  # each rank sends and receives at most once per step
        assert len(set(step[:, 0])) == len(step) and len(set(step[:, 1])) == len(step)
    if method == "barrel-rand":
        assert len(found.steps) >= w.num_steps


def test_repair_cli_writes_files_the_analysis_confirms(tmp_path, capsys):
    scen = tmp_path / "s.toml"
    scen.write_text(
        '[fabric]\nradix = 8\nhosts = 32\nnaming = "shuffled"\n[placement]\norder = "hostname"\n'
    )
    out = tmp_path / "fix"
    assert main(["repair", str(scen), "--what", "rank-order", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["what"] == "rank-order" and doc["conflicts_before"] > 0 == doc["conflicts_after"]
    assert doc["seconds_after"] < doc["seconds_before"]
    hostfile = (out / "hostfile").read_text().split()
    assert hostfile == doc["hosts"] and len(hostfile) == 32
    assert (
        "SLURM_HOSTFILE=" in doc["launch"]["srun"]
        and "--distribution=arbitrary" in doc["launch"]["srun"]
    )
    assert main(["conflicts", str(out / "scenario.toml"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total_conflicts"] == 0
    # The keys given, the placement changed, no defaults: written out, bench.events = 0 with
    # bench.seconds = 0 made the protocol simulation refuse the file.
    written = read_toml(out / "scenario.toml", "repaired scenario")
    assert {k: v for k, v in written.items() if k != "name"} == {
        "fabric": {"radix": 8, "hosts": 32, "naming": "shuffled"},
        "placement": {"order": "file", "file": "hostfile"},
    }
    protocol = ["simulate", str(out / "scenario.toml"), "--set", "simulate.mode=protocol", "--json"]
    assert main([*protocol, "--set", "simulate.events=64"]) == 0
    assert json.loads(capsys.readouterr().out)["events_built"] == 64

    sched = tmp_path / "sched"
    assert main(["repair", str(scen), "--what", "schedule", "--out", str(sched), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ranks, steps = read_steps(sched / "steps.txt")
    assert ranks == 32 and len(steps) == doc["steps_after"]
    assert main(["conflicts", str(sched / "scenario.toml"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total_conflicts"] == 0
    assert main(["simulate", str(sched / "scenario.toml"), "--json"]) == 0
    sim = json.loads(capsys.readouterr().out)
    assert sim["total_seconds"] == pytest.approx(doc["seconds_after"])


def test_a_rank_order_of_several_tasks_a_node_is_a_file_every_tool_reads(tmp_path, capsys):
    # Two tasks a node: the hostfile lists each host twice, a line per rank (SLURM_HOSTFILE).
    # The repaired scenario did not load ("host 'node52' already listed on line 2"), sbatch
    # asked for 128 nodes of 64, and Hydra's one slot a host, round robin, placed rank 2 on
    # another host than the file's line 2.
    scen = tmp_path / "s.toml"
    scen.write_text(
        '[fabric]\nradix = 8\nhosts = 16\nnaming = "shuffled"\n[placement]\norder = "hostname"\n'
        "[workload]\ntasks_per_node = 2\n"
    )
    out = tmp_path / "fix"
    assert main(["repair", str(scen), "--what", "rank-order", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    lines = (out / "hostfile").read_text().split()
    assert len(lines) == 32 and all(lines.count(h) == 2 for h in lines)
    assert main(["conflicts", str(out / "scenario.toml"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total_conflicts"] == doc["conflicts_after"]
    sc = Scenario.load(out / "scenario.toml")
    _fab, _rt, pl, _wl = sc.build()
    assert [sc.build()[0].host_names[h] for h in pl.hosts] == lines  # line i is rank i
    launch = doc["launch"]
    assert "sbatch --nodes=16 " in launch["sbatch"] and "--ntasks=32" in launch["srun"]
    assert "mpiexec" not in launch and "--map-by seq -np 32" in launch["openmpi"]
    # The event builder reads the same file: ranks take their host's lines in turn.
    assert main(["bench", str(out / "scenario.toml"), "--set", "bench.ranks=32", "--prepare",
                 "--out", str(tmp_path / "run")]) == 0  # fmt: skip
    cfg = (tmp_path / "run" / "run.cfg").read_text()
    assert f"placement_hosts = {','.join(lines)}" in cfg
    # A file whose hosts are listed unevenly is neither a host list nor one of tasks.
    (out / "hostfile").write_text("\n".join(lines[:31]) + "\n")
    with pytest.raises(DaqnetError, match=r"lists hosts once per task, so each of them 2 times"):
        Scenario.load(out / "scenario.toml").build()
    (out / "hostfile").write_text("\n".join([*lines, lines[0]]) + "\n")
    with pytest.raises(DaqnetError, match=r"hostfile:33: host '.*' already listed 2 times \("):
        Scenario.load(out / "scenario.toml").build()


def repair_schedule_out(tmp_path, capsys, scenario: str) -> tuple[dict, Path]:
    """`daqnet repair --what schedule --out` of a scenario's text: the document, the directory."""
    scen = tmp_path / "s.toml"
    scen.write_text(scenario)
    out = tmp_path / "out"
    assert main(["repair", str(scen), "--what", "schedule", "--out", str(out), "--json"]) == 0
    return json.loads(capsys.readouterr().out), out


def test_a_repaired_schedule_keeps_the_message_size_given(tmp_path, capsys):
    # The steps replace [workload]; its message_bytes was dropped with the rest, and the
    # written scenario simulated 1 MiB flows instead of the 4 KiB repaired.
    doc, out = repair_schedule_out(
        tmp_path,
        capsys,
        '[fabric]\nradix = 8\nhosts = 32\nnaming = "shuffled"\n[placement]\norder = "hostname"\n'
        '[workload]\nmessage_bytes = 4096\nschedule = "random"\nseed = 3\n',
    )
    written = read_toml(out / "scenario.toml", "repaired scenario")
    assert written["workload"] == {"message_bytes": 4096, "kind": "steps", "file": "steps.txt"}
    # As given: a whole byte count, not the float it is kept as (4096.0).
    assert "message_bytes = 4096\n" in (out / "scenario.toml").read_text()
    assert main(["simulate", str(out / "scenario.toml"), "--json"]) == 0
    sim = json.loads(capsys.readouterr().out)
    assert sim["total_seconds"] == pytest.approx(doc["seconds_after"])


def test_a_schedule_repair_never_slower_than_the_given_schedule(tmp_path, capsys):
    # All pairs at once over a full tree: its 144 conflicts are flows sharing their NICs,
    # which no schedule avoids, and the conflict-free repairs take 9 steps, 0.758 ms against
    # 0.587. That slower schedule was the answer ("x0.775"); the given one stays now.
    doc, out = repair_schedule_out(
        tmp_path,
        capsys,
        '[fabric]\nradix = 8\nhosts = 8\nhosts_per_leaf = 4\n[workload]\nschedule = "all-at-once"\n',
    )
    assert doc["method"].startswith("the given schedule")
    assert doc["seconds_after"] == doc["seconds_before"] and doc["speedup"] == 1.0
    assert doc["conflicts_after"] == doc["conflicts_before"] == 144
    assert doc["steps_after"] == doc["steps_before"] == 1
    given, *repairs = doc["candidates"]
    assert given["method"] == "given" and all(
        r["conflicts"] == 0 and r["seconds"] > given["seconds"] for r in repairs
    )
    # The plain barrel of these 8 hosts has no conflict: weighed too (7 steps, not 9).
    assert [(r["method"], r["steps"]) for r in repairs][-1] == ("barrel", 7)
    ranks, steps = read_steps(out / "steps.txt")
    assert ranks == 8 and len(steps) == 1 and len(steps[0]) == 8 * 7


def test_repair_cli_errors_are_one_line(tmp_path, capsys):
    scen = tmp_path / "s.toml"
    scen.write_text("[fabric]\nradix = 8\nhosts = 32\n")
    assert main(["repair", str(scen), "--what", "node-set", "--pool", "node[01-05]"]) == 2
    assert "--pool" in capsys.readouterr().err
    assert main(["repair", str(scen), "--what", "rank-order", "--pool", "node[1-5]"]) == 2
    assert main(["repair", str(scen), "--what", "node-set", "--ranks", "40"]) == 2
    err = capsys.readouterr().err
    assert "has 32 hosts" in err and "Traceback" not in err
    assert main(["repair", str(scen), "--what", "node-set", "--ranks", "1"]) == 2
    assert "--ranks 1: at least 2 ranks" in capsys.readouterr().err
    # Options of another --what were taken in silence (the same answer), where --pool is refused.
    assert main(["repair", str(scen), "--what", "rank-order", "--schedule", "random-steps"]) == 2
    assert "--schedule belongs to --what schedule" in capsys.readouterr().err
    assert main(["repair", str(scen), "--what", "schedule", "--moves", "5"]) == 2
    assert "--moves belongs to --what rank-order and node-set" in capsys.readouterr().err


def test_steps_file_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "steps.txt"
    bad.write_text("0>1 1>0\n2>x\n")
    with pytest.raises(Exception, match=r"steps.txt:2: flow 1 = '2>x'"):
        read_steps(bad)
    bad.write_text("0>0\n")
    with pytest.raises(Exception, match="sends to itself"):
        read_steps(bad)
    bad.write_text("0>5\n")
    with pytest.raises(Exception, match="beyond the 4 placed"):
        read_steps(bad, 4)


@pytest.mark.parametrize(
    "sets",
    [
        ["fabric.taper=2:1"],  # 4 hosts on 2 up-links: 2 conflicts per leaf in most steps
        ["fabric.hosts=29"],  # a partial last leaf: windows wrap past the last rank
        ["fabric.naming=shuffled", "placement.order=hostname"],  # ranks off the cabling
    ],
)
def test_uplink_clashes_are_the_barrels_leaf_to_spine_conflicts(tmp_path, capsys, sets):
    # The clashes were counted over windows of as many ranks as the leaf has up-ports, not
    # wrapping round: 0 for a tapered leaf, which conflicts in every step, and for a partial
    # leaf. Summed over leaves and steps they are the analysis's leaf->spine conflicts.
    from daqnet import Scenario
    from daqnet.analysis.uplinks import uplink_usage

    p = tmp_path / "s.toml"
    p.write_text("[fabric]\nradix = 8\nhosts = 32\n")
    sc = Scenario.load(p, sets)
    _, r, pl, _ = sc.build()
    u = uplink_usage(r, pl)
    assert main(["conflicts", str(p), *[a for s in sets for a in ("--set", s)], "--json"]) == 0
    levels = {c["class"]: c for c in json.loads(capsys.readouterr().out)["levels"]}
    expected = levels["leaf->spine"]["conflicts"]
    assert expected > 0
    assert sum(x.clashes_per_step for x in u.leaves) * (pl.ranks - 1) == pytest.approx(expected)


def test_uplink_clashes_of_ranks_all_on_one_leaf(tmp_path):
    # Every destination on the leaf itself: no up-port is used (this raised a ValueError).
    from daqnet import Scenario
    from daqnet.analysis.uplinks import uplink_usage

    p = tmp_path / "s.toml"
    p.write_text("[fabric]\nradix = 8\nhosts = 4\n")
    _, r, pl, _ = Scenario.load(p).build()
    assert [x.clashes_per_step for x in uplink_usage(r, pl).leaves] == [0.0]


def test_uplinks_refuse_a_direct_network(tmp_path, capsys):
    # A dragonfly's routers were 'leaves' with 5 'up-ports' (local and global links).
    p = tmp_path / "df.toml"
    p.write_text(
        '[fabric]\nkind = "dragonfly"\np = 2\na = 4\nh = 2\n[routing]\nengine = "direct"\n'
    )
    assert main(["uplinks", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"{p}: up-ports belong to a tree's leaves" in err and "direct network" in err


def test_uplink_usage_tells_regular_from_irregular_tables(tmp_path):
    from daqnet.analysis.uplinks import uplink_usage
    from daqnet.report.uplinks import plot_uplinks, uplinks_summary

    f, slots = two_level(leaves=6, k=4)
    p = placement.hostname(f)
    regular = uplink_usage(irregular_tables(f, slots, 4, seed=1), p)
    assert regular.patterns == 1
    assert all(r.same_as == "leaf0" for r in regular.leaves[1:])
    assert all(r.destinations_per_port == [5, 5, 5, 5] for r in regular.leaves)
    irregular = uplink_usage(irregular_tables(f, slots, 4, seed=1, per_source=True), p)
    assert irregular.patterns > 1
    # The matrix against the tables, entry by entry.
    r = irregular_tables(f, slots, 4, seed=1, per_source=True)
    for i, leaf in enumerate(sorted({s[0] for s in slots})):
        for rank, host in enumerate(p.hosts):
            port = r.port(f"leaf{leaf}", int(host))
            want = -1 if slots[host][0] == leaf else port - 5
            assert irregular.matrix[i, rank] == want
    # After a rank-order repair of regular tables no window of 4 ranks repeats an up-port.
    rr = irregular_tables(f, slots, 4, seed=1)
    w = workload.event_building(p.ranks)
    fixed = repair_rank_order(rr, p.hosts, w, judge(rr), moves=0)
    after = uplink_usage(rr, placement.Placement(f, fixed.hosts, "file"))
    assert max(x.clashes_per_step for x in after.leaves) == 0.0
    assert min(x.clashes_per_step for x in regular.leaves) > 0
    assert "leaf0" in uplinks_summary(after)
    assert plot_uplinks(after, tmp_path / "up.png").stat().st_size > 0


def test_uplink_patterns_of_three_levels_and_of_two_leaves(tmp_path):
    # Leaves of different pods share no spine: compared by spine, D-mod-K's tables on three
    # levels read as 3 patterns (one per pod), never "regular". Two leaves have no rank off
    # both: they "agreed" on nothing and were called regular, a changed table included.
    from daqnet import Scenario
    from daqnet.analysis.uplinks import uplink_usage
    from daqnet.report.uplinks import uplinks_summary

    three = Scenario({"fabric": {"radix": 8, "hosts": 33, "levels": 3}}, source="<3>")
    _, rt, pl, _ = three.build()
    u = uplink_usage(rt, pl)
    assert len(u.leaves) == 9 and u.patterns == 1
    assert all(r.same_as == "leaf0" for r in u.leaves[1:])
    assert "(regular tables: every leaf agrees)" in uplinks_summary(u)
    # ... at the leaves only: with no word of the spines, updn's tables on three levels,
    # alike on every leaf, read as if only the rank order were at fault.
    assert u.levels == 3
    assert "leaves only: the spines' up-ports of this 3-level tree are not shown" in (
        uplinks_summary(u)
    )
    two = Scenario({"fabric": {"radix": 8, "hosts": 8}}, source="<2>")
    _, rt, pl, _ = two.build()
    u = uplink_usage(rt, pl)
    assert u.patterns == 2 and u.leaves[1].same_as is None
    text = uplinks_summary(u)
    assert "cannot be compared" in text and "regular" not in text
    assert u.levels == 2 and "leaves only" not in text


def test_summary_reads_the_lower_bound_for_what_it_says():
    from daqnet.report.repair import _bound

    assert _bound({"conflicts_after": 80}) == ""  # no bound holds (not event building)
    assert "the fewest any order" in _bound({"conflicts_after": 12, "lower_bound": 12})
    assert "can go below 12" in _bound({"conflicts_after": 80, "lower_bound": 12})
    # Once "no order of these hosts can go below 0": true of any order, and read as a verdict.
    said = _bound({"conflicts_after": 80, "lower_bound": 0})
    assert "below 0" not in said and "not known" in said
    assert "the fewest" in _bound({"conflicts_after": 0, "lower_bound": 0})


def test_repair_and_study_documents_give_their_tables(tmp_path, capsys):
    # The page and the DataFrames tell results apart by content: a repair.json once raised
    # KeyError in daqnet.tables once the page recognised it.
    pytest.importorskip("pandas", reason="pandas is in daqnet's test extra")
    from pathlib import Path

    from daqnet.tables import read_tables

    example = Path(__file__).resolve().parents[1] / "examples" / "slurm-hostname-64.toml"
    out = tmp_path / "r"
    assert main(["repair", str(example), "--what", "schedule", "--out", str(out)]) == 0
    doc = json.loads((out / "repair.json").read_text())
    frames = read_tables(out)
    assert list(frames) == ["candidates"]
    assert frames["candidates"].to_dict("records") == doc["candidates"]
    assert doc["provenance"]["daqnet_version"]
    sc = tmp_path / "t.toml"
    sc.write_text("[fabric]\nradix = 12\nhosts = 48\n")
    assert main(["study", "taper", str(sc), "--out", str(tmp_path / "s"), "-j", "1"]) == 0
    capsys.readouterr()
    frames = read_tables(tmp_path / "s")
    study = json.loads((tmp_path / "s" / "study.json").read_text())
    assert list(frames) == ["study"] and len(frames["study"]) == len(study["rows"]) == 6
    assert study["provenance"]["daqnet_version"]


def test_rank_order_of_all_pairs_at_once_is_not_searched(tmp_path, capsys):
    # Every rank sends to every other in one step: any order maps the step onto itself. The
    # search tried 50,000 swaps, kept all 50,000 and reported 916 -> 916 conflicts.
    sc = tmp_path / "p.toml"
    sc.write_text(
        '[fabric]\nkind = "percs"\nsupernodes = 3\ndrawers_per_supernode = 2\nnodes_per_drawer = 2\n'
        '[routing]\nengine = "direct"\n[workload]\nkind = "all-to-all"\ntasks_per_node = 2\n'
    )
    assert main(["repair", str(sc), "--what", "rank-order", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (
        doc["method"]
        == "given order (every step exchanges all pairs of ranks: no order changes it)"
    )
    assert not doc.get("search") and doc["conflicts_after"] == doc["conflicts_before"]
