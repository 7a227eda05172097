"""The general network model: any cabling, link classes, paths from any engine.

A fat tree rebuilt cable by cable with `daqnet.fabric.graph` and the builder's tables must
analyse and simulate exactly as the builder's own; a ring of switches (no tree, no "up")
with explicit per-pair paths, single and weighted, is checked against brute-force loads and
an exact max-min event simulation written independently in the tests.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from fractions import Fraction

import daqnet
import numpy as np
import pytest
from daqnet import DaqnetError, Scenario, routing
from daqnet.fabric import graph
from daqnet.placement import topology
from daqnet.simulate import simulate_protocol, simulate_steps
from daqnet.workload import event_building
from fair_share_reference import flow_times


def cables_of(fab):
    """The fabric as a cable list, the way a user writes one by hand (no levels given)."""
    names, lt = fab.node_names, fab.links()
    return [
        (
            names[lt["src"][i]],
            int(lt["src_port"][i]),
            names[lt["dst"][i]],
            int(lt["dst_port"][i]),
            float(lt["gbps"][i]),
            float(lt["latency_seconds"][i]),
        )
        for i in range(0, fab.num_links, 2)
    ]


def by_hand(fab):
    nodes = fab.nodes()
    switches = [
        (fab.name(n), int(nodes["ports"][n])) for n in range(fab.num_hosts, len(fab.node_names))
    ]
    return graph(fab.host_names, switches, cables_of(fab), description=fab.describe())


def strip(doc: dict) -> str:
    """A result without the keys that name the routing engine or the solver's work."""
    drop = {"routing", "solver", "config", "scenario", "name"}
    return json.dumps({k: v for k, v in doc.items() if k not in drop}, sort_keys=True)


SCENARIO = {"fabric": {"radix": 8, "hosts": 20}, "bench": {"fragment_bytes": 65536}}


@pytest.mark.parametrize(
    ("radix", "hosts", "levels", "taper"),
    [(8, 32, 2, "1:1"), (8, 20, 2, "2:1"), (4, 14, 3, "1:1")],
)
def test_fat_tree_by_hand_equals_the_builder(radix, hosts, levels, taper):
    fab = daqnet.fat_tree(radix=radix, hosts=hosts, levels=levels, taper=taper, naming="shuffled")
    hand = by_hand(fab)
    # The same cabling, and the same link classes, found from inferred levels.
    for key in ("src", "dst", "src_port", "dst_port", "class", "gbps", "latency_seconds"):
        np.testing.assert_array_equal(hand.links()[key], fab.links()[key])
    assert hand.link_class_names() == fab.link_class_names()
    np.testing.assert_array_equal(hand.nodes()["level"], fab.nodes()["level"])
    # The builder's tables, given to the hand-built fabric as a plain table.
    rt = routing.dmodk(fab)
    rt_hand = routing.from_ports(hand, rt.table(), "copied tables")
    pl, pl_hand = daqnet.placement.hostname(fab), daqnet.placement.hostname(hand)
    np.testing.assert_array_equal(pl.hosts, pl_hand.hosts)
    wl = event_building(pl.ranks, "barrel")
    a, b = daqnet.conflicts(rt, pl, wl).summary(), daqnet.conflicts(rt_hand, pl_hand, wl).summary()
    assert a["total_conflicts"] > 0  # hostname order on shuffled names: something to compare
    for key in ("fabric", "routing"):
        a.pop(key), b.pop(key)
    assert a == b
    sc = Scenario({**SCENARIO, "simulate": {"events": 40}})
    steps = [
        simulate_steps(sc, stages=(f, r, p, wl))
        for f, r, p in ((fab, rt, pl), (hand, rt_hand, pl_hand))
    ]
    assert strip(steps[0]) == strip(steps[1])
    proto = [
        simulate_protocol(sc, stages=(f, r, p, wl))
        for f, r, p in ((fab, rt, pl), (hand, rt_hand, pl_hand))
    ]
    assert strip(proto[0]) == strip(proto[1])


# -- a ring of switches -----------------------------------------------------------------------
SW, PER = 5, 2  # switches on the ring, hosts per switch
GBPS = 8.0  # 1 GB/s: simple numbers for the exact reference


def ring():
    hosts = [f"h{s}{k}" for s in range(SW) for k in range(PER)]
    switches = [(f"s{s}", PER + 2) for s in range(SW)]
    cables = [(f"h{s}{k}", 1, f"s{s}", k + 1, GBPS, 0.0) for s in range(SW) for k in range(PER)]
    # port PER+1 clockwise to the next switch's port PER+2, one class for ring cables
    cables += [
        (f"s{s}", PER + 1, f"s{(s + 1) % SW}", PER + 2, GBPS, 0.0, "ring", "ring")
        for s in range(SW)
    ]
    return graph(hosts, switches, cables)


def ring_path(src: int, dst: int, clockwise: bool) -> list[str]:
    a, b = src // PER, dst // PER
    step = 1 if clockwise else -1
    hops = [f"s{a}"]
    while int(hops[-1][1:]) != b:
        hops.append(f"s{(int(hops[-1][1:]) + step) % SW}")
    return [f"h{a}{src % PER}", *hops, f"h{b}{dst % PER}"]


def ring_paths(spread: bool) -> dict:
    """Shortest way round; with `spread`, a pair two switches apart splits 3:1 both ways."""
    n = SW * PER
    out = {}
    for s in range(n):
        for d in range(n):
            if s == d:
                continue
            cw = (d // PER - s // PER) % SW
            if spread and cw == 2:
                out[(s, d)] = [(3.0, ring_path(s, d, True)), (1.0, ring_path(s, d, False))]
            else:
                out[(s, d)] = ring_path(s, d, cw <= SW // 2)
    return out


def links_by_name(fab, nodes: list[str]) -> list[int]:
    """Link ids of a node path, from the link table alone (independent of daqnet's lookup)."""
    names, lt = fab.node_names, fab.links()
    table = {
        (names[s], names[d]): i for i, (s, d) in enumerate(zip(lt["src"], lt["dst"], strict=True))
    }
    return [table[(a, b)] for a, b in itertools.pairwise(nodes)]


def weighted(spec) -> list[tuple[float, list[str]]]:
    if spec and isinstance(spec[0], tuple):
        total = sum(w for w, _ in spec)
        return [(w / total, p) for w, p in spec]
    return [(1.0, spec)]


@pytest.mark.parametrize("spread", [False, True])
def test_ring_analysis_against_brute_force(spread):
    fab = ring()
    assert fab.link_class_names() == ["host->leaf", "leaf->host", "ring"]
    paths = ring_paths(spread)
    rt = routing.from_paths(fab, paths)
    assert rt.single_path is not spread and not rt.has_tables
    pl = topology(fab)
    for schedule in ("barrel", "all-at-once"):
        wl = event_building(pl.ranks, schedule)
        rep = daqnet.conflicts(rt, pl, wl)
        steps = rep.steps()
        totals = Counter()
        split = 0
        for i, flows in enumerate(wl.steps()):
            load = Counter()
            for s, d in flows:
                links = set()  # a flow spread over paths loads each of their links once
                ways = weighted(paths[(int(pl.hosts[s]), int(pl.hosts[d]))])
                split += len(ways) > 1
                for _, nodes in ways:
                    links.update(links_by_name(fab, nodes))
                load.update(links)
            assert steps["conflicts"][i] == sum(max(0, v - 1) for v in load.values())
            assert steps["max_link_load"][i] == max(load.values())
            np.testing.assert_array_equal(
                rep.step_loads(i + 1), [load[k] for k in range(fab.num_links)]
            )
            totals.update(load)
        assert list(rep.links()["flows"]) == [totals[k] for k in range(fab.num_links)]
        classes = {lv["class"]: lv for lv in rep.levels()}
        assert set(classes) == {"host->leaf", "leaf->host", "ring"}
        # Split flows are counted, and then flow counts are not offered as times.
        assert rep.spread_flows == split and (split > 0) is spread
        assert (rep.times_note is not None) is spread


@pytest.mark.parametrize("spread", [False, True])
def test_ring_step_times_against_exact_max_min(spread):
    fab = ring()
    paths = ring_paths(spread)
    rt = routing.from_paths(fab, paths)
    pl = topology(fab)
    wl = event_building(pl.ranks, "barrel")
    message = 1_000_000
    sc = Scenario({**SCENARIO, "simulate": {"message_bytes": message}})
    got = simulate_steps(sc, stages=(fab, rt, pl, wl))
    capacity = [Fraction(int(g * 1e9 / 8)) for g in fab.links()["gbps"]]
    for step, flows in zip(got["steps"], wl.steps(), strict=True):
        subs, sizes = [], []
        for s, d in flows:
            for w, nodes in weighted(paths[(int(pl.hosts[s]), int(pl.hosts[d]))]):
                subs.append(links_by_name(fab, nodes))
                sizes.append(Fraction(message) * Fraction(w).limit_denominator(1000))
        want = float(max(flow_times(capacity, subs, sizes)))
        assert step["seconds"] == pytest.approx(want, rel=1e-9), step["step"]


def test_ring_tables_and_paths_agree():
    # Clockwise-shortest paths as forwarding tables: the same routes as explicit paths.
    fab = ring()
    paths = ring_paths(False)
    rt_paths = routing.from_paths(fab, paths)
    n = fab.num_hosts
    table = np.zeros((fab.num_switches, n), dtype=np.uint16)
    for (_, d), nodes in paths.items():
        for here, nxt in itertools.pairwise(nodes[1:]):
            sw = fab.node(here)
            port = next(p for p, peer, _, _ in fab.ports(sw) if peer == fab.node(nxt))
            table[sw - n, d] = port
    rt_tables = routing.from_ports(fab, table, "ring tables")
    for s in range(n):
        for d in range(n):
            if s != d:
                np.testing.assert_array_equal(rt_tables.path(s, d), rt_paths.path(s, d))
    pl = topology(fab)
    wl = event_building(pl.ranks, "random", seed=3)
    a = daqnet.conflicts(rt_tables, pl, wl).summary()
    b = daqnet.conflicts(rt_paths, pl, wl).summary()
    a.pop("routing"), b.pop("routing")
    assert a == b
    sc = Scenario({**SCENARIO, "simulate": {"events": 30}})
    x = simulate_protocol(sc, stages=(fab, rt_tables, pl, wl))
    y = simulate_protocol(sc, stages=(fab, rt_paths, pl, wl))
    assert strip(x) == strip(y)


def test_ring_protocol_with_spread_paths_conserves_bytes():
    fab = ring()
    rt = routing.from_paths(fab, ring_paths(True))
    pl = topology(fab)
    wl = event_building(pl.ranks, "barrel")
    sc = Scenario({**SCENARIO, "simulate": {"events": 60}})
    r = simulate_protocol(sc, stages=(fab, rt, pl, wl))
    assert r["events_built"] == 60 and r["status"] == "finished"
    units = r["units"]
    received = sum(u.get("bytes_in", 0) for u in units)
    frags_in = sum(u.get("fragments_in", 0) for u in units)
    assert frags_in == r["events_total"] * r["nodes"] + r["partial_fragments"]
    assert received == pytest.approx(
        sum(u.get("built_bytes", 0) for u in units)
        + r["partial_bytes"]
        + frags_in * 10240,  # meta-data travels with every fragment
        rel=1e-12,
    )
    assert all(ln["utilization"] <= 1 + 1e-9 for ln in r["links"])
    assert r["network_gbps_per_host"] <= GBPS * (1 + 1e-9)


@pytest.mark.parametrize(
    ("paths", "message"),
    [
        ({("h00", "h10"): ["h00", "s0", "s2", "h10"]}, "no cable from s0 to s2"),
        ({("h00", "h10"): [0, 2]}, "leaves"),
        ({("h00", "h10"): ["h00", "s0", "s1", "h11"]}, "ends at h11"),
        ({("h00", "h10"): [(0.0, ["h00", "s0", "s1", "h10"])]}, "weight must be > 0"),
        ({("h00", "h10"): ["h00", "s0", "s1", "h10"]}, "no path from h00 to h01"),
    ],
)
def test_bad_paths_one_line(paths, message):
    with pytest.raises(DaqnetError, match=message):
        routing.from_paths(ring(), paths)


@pytest.mark.parametrize(
    ("cables", "message"),
    [
        ([("h0", 1, "h1", 1)], "a cable between hosts h0 and h1"),
        ([("h0", 2, "s0", 1)], "h0 has no port 2"),  # a host has one NIC, its port 1
        ([("h0", 1, "s0", 9)], "s0 has no port 9"),
        ([("h0", 1, "s0", 1), ("h1", 1, "s0", 1)], "port already cabled"),
        ([("h0", 1, "sx", 1)], "no host or switch named 'sx'"),
        ([("h0", 1, "s0", 1, -5.0)], "link rate must be"),
    ],
)
def test_bad_cabling_one_line(cables, message):
    with pytest.raises(DaqnetError, match=message):
        graph(["h0", "h1"], [("s0", 4)], cables)


def test_tables_of_a_path_routing_are_refused(tmp_path):
    rt = routing.from_paths(ring(), ring_paths(False))
    with pytest.raises(DaqnetError, match="has no forwarding tables"):
        rt.write_table(tmp_path / "t.txt")
