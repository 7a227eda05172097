"""PERCS and dragonfly networks, direct and indirect routing, job mappings and patterns.

Link counts are checked against closed forms; routes against an independent construction
from the link table (breadth-first search for reachability and hop counts); simulated iteration times
against the exact max-min reference (tests/fair_share_reference.py) fed with flows built
here from the pattern's definition, and against closed forms where one link is obviously
the bottleneck.
"""

from __future__ import annotations

import math
from collections import deque
from fractions import Fraction
from itertools import pairwise, product

import numpy as np
import pytest
from daqnet import _core
from daqnet.errors import USER_ERRORS, DaqnetError
from daqnet.fabric import dragonfly, percs
from daqnet.mapping import blocked_order, map_tasks
from daqnet.routing import group
from daqnet.scenario import Scenario
from daqnet.simulate import simulate
from daqnet.workload import bisection, grid, multicast, stencil
from fair_share_reference import flow_times


def class_counts(fabric):
    names = fabric.link_classes()
    return {c: names.count(c) for c in set(names)}


@pytest.mark.parametrize(
    ("s", "d", "n", "links"), [(4, 4, 8, 1), (3, 2, 3, 2), (1, 4, 8, 1), (9, 1, 2, 3)]
)
def test_percs_link_counts_are_the_closed_forms(s, d, n, links):
    f = percs(s, d, n, links)
    hubs = s * d * n
    c = class_counts(f)
    assert f.num_hosts == hubs and f.num_switches == hubs
    assert c["host->hub"] == c["hub->host"] == hubs
    assert c.get("LL", 0) == 2 * s * d * math.comb(n, 2)
    assert c.get("LR", 0) == 2 * s * math.comb(d, 2) * n * n
    assert c.get("D", 0) == 2 * math.comb(s, 2) * links
    # Round robin: the D links of a supernode differ by at most one between its hubs.
    table = f.links()
    dlinks = np.array(f.link_classes()) == "D"
    per_hub = np.bincount(table["src"][dlinks] - hubs, minlength=hubs).reshape(s, d * n)
    assert (per_hub.max(axis=1) - per_hub.min(axis=1) <= 1).all()


@pytest.mark.parametrize(
    ("p", "a", "h", "g"), [(2, 4, 2, 9), (1, 2, 1, 3), (2, 4, 2, 5), (3, 6, 3, 19)]
)
def test_dragonfly_link_counts_are_the_closed_forms(p, a, h, g):
    f = dragonfly(p, a, h, g)
    c = class_counts(f)
    assert f.num_hosts == g * a * p and f.num_switches == g * a
    assert c["local"] == 2 * g * math.comb(a, 2)
    assert c["global"] == 2 * math.comb(g, 2) * ((a * h) // (g - 1))


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="fabric.g = 10"):
        dragonfly(2, 4, 2, 10)
    with pytest.raises(ValueError, match="fabric.supernodes = 0"):
        percs(0)
    with pytest.raises(ValueError, match="d_gbps"):
        percs(2, d_gbps=0)


@pytest.mark.parametrize(
    ("p", "a", "h"), [(1, 2**31 - 1, 1), (2**31 - 1, 2**31 - 1, 2**31 - 1), (1, 65535, 2**31 - 1)]
)
def test_a_dragonfly_too_large_is_refused_by_name(p, a, h):
    # Found by the scenario fuzzer: the default g = a·h + 1 past 2^31 was a TypeError from
    # the binding, and g·a·ports could overflow 64 bits in the size check.
    s = Scenario({"fabric": {"kind": "dragonfly", "p": p, "a": a, "h": h}}, "big.toml")
    with pytest.raises(
        DaqnetError,
        match=rf"^big.toml: fabric: a dragonfly with p={p} a={a} h={h} g=\d+ is too large",
    ):
        s.build_fabric()


def hop_counts(fabric):
    """Fewest links from every host to every node, by breadth-first search (hosts do not
    forward: a path may only end at a host)."""
    t = fabric.links()
    out_links: dict[int, list[int]] = {}
    for a, b in zip(t["src"], t["dst"], strict=True):
        out_links.setdefault(int(a), []).append(int(b))
    dist = {}
    for h in range(fabric.num_hosts):
        d = {h: 0}
        todo = deque([h])
        while todo:
            n = todo.popleft()
            if n != h and n < fabric.num_hosts:
                continue
            for m in out_links.get(n, []):
                if m not in d:
                    d[m] = d[n] + 1
                    todo.append(m)
        dist[h] = d
    return dist


NETWORKS = {
    "percs": lambda: percs(4, 2, 3, 2),
    "percs-one-link": lambda: percs(5, 2, 2, 1),
    "dragonfly": lambda: dragonfly(2, 4, 2, 9),
    "dragonfly-parallel": lambda: dragonfly(1, 4, 3, 5),
}


@pytest.mark.parametrize(
    ("make", "groups"),
    [(lambda: dragonfly(2, 4, 2, 2), "2 groups"), (lambda: percs(1, 2, 2), "1 group")],
)
def test_indirect_needs_a_third_group(make, groups):
    # With 2 groups there is no intermediate one: indirect routed as direct, without a word.
    f = make()
    assert len(group(f, "direct").path(0, f.num_hosts - 1)) > 0
    with pytest.raises(DaqnetError) as err:
        group(f, "indirect")
    assert str(err.value) == (
        "routing.engine = indirect: Valiant routing goes through a group other than the "
        f"source's and the destination's, and this network has {groups}: use "
        'routing.engine = "direct"'
    )


@pytest.mark.parametrize("name", NETWORKS)
def test_direct_paths_are_minimal_and_valiant_at_most_twice(name):
    f = NETWORKS[name]()
    hosts = range(f.num_hosts)
    dist = hop_counts(f)
    assert all(b in dist[a] for a in hosts for b in hosts)  # every host reaches every other
    direct, indirect = group(f, "direct"), group(f, "indirect", seed=3)
    groups = _core.fabric.Fabric.switch_groups(f._core)
    diameter = max(dist[a][b] for a in hosts for b in hosts if a != b)
    links = f.links()
    for a, b in product(hosts, hosts):
        if a == b:
            continue
        p = direct.path(a, b)
        sa, sb = int(links["dst"][p[0]]), int(links["src"][p[-1]])
        if groups[sa - f.num_hosts] == groups[sb - f.num_hosts]:
            assert len(p) == dist[a][b], (a, b)  # inside a group: fewest hops
        else:
            # Minimal = one global link and the fewest local hops around it (the graph may
            # have shorter paths over two global links: those are not minimal routes).
            gl = [
                i
                for i in range(len(links["src"]))
                if links["src"][i] >= f.num_hosts
                and links["dst"][i] >= f.num_hosts
                and groups[links["src"][i] - f.num_hosts] == groups[sa - f.num_hosts]
                and groups[links["dst"][i] - f.num_hosts] == groups[sb - f.num_hosts]
            ]
            best = min(3 + (links["src"][i] != sa) + (links["dst"][i] != sb) for i in gl)
            assert len(p) == best, (a, b)
        for ps in (p, *[q for _, q in indirect.paths(a, b, flow=a * 7 + b)]):
            assert links["src"][ps[0]] == a and links["dst"][ps[-1]] == b
            assert all(links["dst"][x] == links["src"][y] for x, y in pairwise(ps))
            assert len(ps) <= 2 * diameter
        # Valiant between groups crosses exactly one other group.
        ga = groups[links["dst"][p[0]] - f.num_hosts]
        gb = groups[links["src"][p[-1]] - f.num_hosts]
        for _, q in indirect.paths(a, b, flow=a * 7 + b):
            seen = {int(groups[links["dst"][x] - f.num_hosts]) for x in q[:-1]}
            assert seen == ({ga} if ga == gb else {ga, gb} | (seen - {ga, gb}))
            if ga != gb:
                assert len(seen - {ga, gb}) == 1


def test_valiant_is_seeded_and_spreads_over_intermediate_groups():
    f = dragonfly(1, 2, 2, 5)
    a, b = 0, f.num_hosts - 1
    links = f.links()
    groups = _core.fabric.Fabric.switch_groups(f._core)

    def middle(r, flow):
        ((_, q),) = r.paths(a, b, flow=flow)
        return {int(groups[links["dst"][x] - f.num_hosts]) for x in q[:-1]} - {0, 4}

    r1, r2, r3 = (
        group(f, "indirect", seed=1),
        group(f, "indirect", seed=1),
        group(f, "indirect", seed=2),
    )
    draws1 = [middle(r1, k) for k in range(300)]
    assert draws1 == [middle(r2, k) for k in range(300)]
    assert draws1 != [middle(r3, k) for k in range(300)]
    counts = {gi: sum(d == {gi} for d in draws1) for gi in (1, 2, 3)}
    assert all(60 < c < 140 for c in counts.values()), counts


def test_spread_splits_a_flow_over_parallel_global_links():
    f = percs(2, 1, 2, 2)  # two supernodes of two hubs, two D links: one per hub
    r = group(f, "direct", spread=True)
    ways = r.paths(0, 3)
    assert len(ways) == 2 and all(w == pytest.approx(0.5) for w, _ in ways)


def test_conflicts_give_no_slowdown_where_flow_counts_are_not_times():
    from daqnet import conflicts
    from daqnet.report.conflicts import conflict_summary

    # Host links at 1,536 Gb/s, D links at 80: 8 flows on a D link against 4 on a host link
    # is not "x2 as long". With spread, a flow counts on both D links of its pair.
    base = {
        "fabric": {
            "kind": "percs",
            "supernodes": 3,
            "drawers_per_supernode": 1,
            "nodes_per_drawer": 2,
        },
        "workload": {"kind": "all-to-all", "tasks_per_node": 1},
    }
    for spread, split in ((False, False), (True, True)):
        sc = Scenario(
            {
                **base,
                "fabric": {**base["fabric"], "d_links_per_pair": 2},
                "routing": {"engine": "direct", "spread": spread},
            },
            source="<percs>",
        )
        _fab, rt, pl, wl = sc.build()
        rep = conflicts(rt, pl, wl)
        assert (rep.spread_flows > 0) is split
        assert "Gb/s" in rep.times_note and ("split over several paths" in rep.times_note) is split
        text = conflict_summary(rep)
        assert "flow counts do not give step times" in text and "as long" not in text


def test_group_routing_refuses_a_fat_tree():
    from daqnet.fabric import fat_tree

    with pytest.raises(DaqnetError, match="two-level direct network"):
        group(fat_tree(hosts=8, radix=4))


# -- patterns and mappings --------------------------------------------------------------------
def test_task_grid_is_as_square_as_the_count_allows():
    assert grid("stencil2d", 65536) == [256, 256]
    assert grid("stencil4d", 65536) == [16, 16, 16, 16]
    assert grid("stencil2d", 2048) == [64, 32]
    assert grid("stencil2d", 7) == [7, 1]


def neighbours(dims, t):
    coords = np.unravel_index(t, dims)
    out = []
    for i, n in enumerate(dims):
        if n == 1:
            continue
        for step in (1, -1):
            c = list(coords)
            c[i] = (c[i] + step) % n
            out.append(int(np.ravel_multi_index(c, dims)))
    return out


@pytest.mark.parametrize("dims", [[4, 4], [3, 5], [2, 2, 2, 2], [4, 3, 2, 2], [6, 1]])
def test_stencil_sends_to_each_periodic_neighbour(dims):
    flows = stencil(dims).step(1)
    expected = sorted((t, n) for t in range(math.prod(dims)) for n in neighbours(dims, t))
    assert sorted(map(tuple, flows.tolist())) == expected


def test_multicast_and_bisection_patterns():
    m = multicast(50, 14, seed=4).step(1)
    assert len(m) == 50 * 14
    for t in range(50):
        dst = m[m[:, 0] == t, 1]
        assert len(set(dst)) == 14 and t not in dst
    b = bisection(10, rounds=3, seed=1)
    assert b.num_steps == 3
    for s in range(1, 4):
        pairs = b.step(s)
        assert sorted(pairs[:, 0]) == list(range(10))  # every task sends once, receives once
        assert {(x, y) for x, y in pairs} == {(y, x) for x, y in pairs}  # pairs exchange
    assert not np.array_equal(b.step(1), b.step(2))


def test_blocked_mappings_give_compact_blocks():
    f = percs(2, 2, 2)  # 8 nodes: drawers of 2, supernodes of 4
    host = map_tasks(f, "blocked-node", 4, [8, 4])
    grid_hosts = host.reshape(8, 4)
    # 4 tasks per node on an 8 x 4 grid: 2 x 2 blocks, node order row-major over blocks.
    assert grid_hosts[:2, :2].tolist() == [[0, 0], [0, 0]]
    assert grid_hosts[:2, 2:].tolist() == [[1, 1], [1, 1]]
    assert grid_hosts[2:4, :2].tolist() == [[2, 2], [2, 2]]
    sup = map_tasks(f, "blocked-supernode", 4, [8, 4]).reshape(8, 4) // 4
    assert (sup[:4] == 0).all() and (sup[4:] == 1).all()  # each supernode a 4 x 4 block
    for order, per_unit in (("blocked-drawer", 2), ("blocked-node", 1)):
        unit = map_tasks(f, order, 4, [8, 4]).reshape(8, 4) // per_unit
        for u in range(8 // per_unit):
            rows, cols = np.nonzero(unit == u)
            box = (rows.max() - rows.min() + 1) * (cols.max() - cols.min() + 1)
            assert box == len(rows) == 4 * per_unit, (order, u)  # a full rectangle
    for order in (
        "default",
        "blocked-node",
        "blocked-drawer",
        "blocked-supernode",
        "random-node",
        "random-drawer",
    ):
        h = map_tasks(f, order, 4, [8, 4], seed=2)
        assert np.bincount(h, minlength=8).tolist() == [4] * 8, order


def test_random_mappings_move_whole_nodes_and_drawers():
    f = percs(2, 2, 2)
    h = map_tasks(f, "random-drawer", 3, [24], seed=5)
    nodes = h.reshape(8, 3)
    assert (nodes == nodes[:, :1]).all()  # a node's tasks stay together
    drawers = nodes[:, 0].reshape(4, 2)
    assert ((drawers[:, 1] - drawers[:, 0]) == 1).all() and (drawers[:, 0] % 2 == 0).all()
    assert (
        map_tasks(f, "random-node", 3, [24], seed=5).tolist()
        == map_tasks(f, "random-node", 3, [24], seed=5).tolist()
    )


def test_a_grid_that_does_not_tile_is_refused():
    with pytest.raises(DaqnetError, match="does not split"):
        blocked_order([6, 1], [4], "blocked-node")


# -- the max-min model against the exact reference --------------------------------------------
def scenario(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(text)
    return Scenario.load(p)


def reference_total(fab, routing, hosts, flows, message):
    """Exact max-min flow times of one step: routes from the routing, flows given here."""
    table = fab.links()
    capacity = [Fraction(int(g * 1e9), 8) for g in table["gbps"]]
    paths, sizes = [], []
    for s, d in flows:
        a, b = int(hosts[s]), int(hosts[d])
        if a == b:
            continue
        for w, p in routing.paths(a, b, flow=_core.routing.flow_key(0, s, d)):
            paths.append([int(x) for x in p])
            sizes.append(Fraction(message) * Fraction(w).limit_denominator(64))
    return float(max(flow_times(capacity, paths, sizes)))


@pytest.mark.parametrize(
    ("kind", "order", "engine"),
    [
        ("stencil2d", "default", "direct"),
        ("stencil2d", "blocked-drawer", "direct"),
        ("stencil4d", "blocked-node", "direct"),
        ("stencil2d", "random-node", "direct"),
        ("multicast", "random-drawer", "direct"),
        ("stencil2d", "default", "indirect"),
        ("multicast", "blocked-node", "indirect"),
    ],
)
def test_iteration_time_matches_the_exact_max_min_reference(tmp_path, kind, order, engine):
    sc = scenario(
        tmp_path,
        f"""
[fabric]
kind = "percs"
supernodes = 3
drawers_per_supernode = 2
nodes_per_drawer = 2
latency_seconds = 0
[routing]
engine = "{engine}"
[placement]
order = "{order}"
seed = 3
[workload]
kind = "{kind}"
tasks_per_node = 4
targets = 3
message_bytes = 1000000
""",
    )
    fab, routing, placement, workload = sc.build()
    tasks = fab.num_hosts * 4
    if kind.startswith("stencil"):
        dims = grid(kind, tasks)
        flows = [(t, n) for t in range(tasks) for n in neighbours(dims, t)]
    else:
        flows = [tuple(x) for x in workload.step(1).tolist()]
    expected = reference_total(fab, routing, placement.hosts, flows, 1_000_000)
    got = simulate(sc, stages=(fab, routing, placement, workload))
    assert got.total_seconds == pytest.approx(expected, rel=1e-9)


def test_row_major_stencil_across_one_d_link_is_the_closed_form(tmp_path):
    # 64 supernodes of 32 nodes x 32 tasks: a 256 x 256 grid, 4 rows per supernode. The row
    # below a supernode is on the next one: 256 messages over its single D link.
    sc = scenario(
        tmp_path,
        """
[fabric]
kind = "percs"
supernodes = 64
latency_seconds = 0
[routing]
engine = "direct"
[placement]
order = "default"
[workload]
kind = "stencil2d"
message_bytes = 2097152
""",
    )
    r = simulate(sc)
    assert r.total_seconds == pytest.approx(256 * 2097152 * 8 / 80e9, rel=1e-9)
    assert r.ideal_seconds == pytest.approx(66 * 2097152 * 8 / 1536e9, rel=1e-9)
    d = next(row for row in r.link_loads if row["class"] == "D")
    assert d["max_bytes"] == 256 * 2097152
    # A 32 x 32 block per supernode: 32 messages per D link.
    text = (tmp_path / "s.toml").read_text().replace('"default"', '"blocked-supernode"')
    blocked = simulate(scenario(tmp_path, text))
    assert blocked.total_seconds == pytest.approx(32 * 2097152 * 8 / 80e9, rel=1e-9)


def test_effective_bisection_of_a_full_fat_tree_and_a_tapered_one(tmp_path):
    base = """
[fabric]
kind = "fat-tree"
radix = 8
hosts = 32
{taper}
[routing]
engine = "dmodk"
[workload]
kind = "bisection"
rounds = 8
"""
    full = simulate(scenario(tmp_path, base.format(taper="")))
    half = simulate(scenario(tmp_path, base.format(taper='taper = "2:1"\nhosts_per_leaf = 4')))
    assert full.effective_bisection["rounds"] == 8
    assert 0 < half.effective_bisection["fraction"] < full.effective_bisection["fraction"] <= 1
    rows = {r["class"]: r for r in half.link_loads}
    assert rows["leaf->spine"]["links"] * 2 == rows["host->leaf"]["links"]


def test_effective_bisection_counts_only_what_the_fabric_adds(tmp_path):
    # One switch carries every bisection at the hosts' rate. With 4 tasks per node the
    # tasks share their node's link in any fabric: 25-33 Gb/s per flow, but 100 % of what
    # a contention-free fabric gives the same flows (it read 27 % against a flow alone).
    text = """
[fabric]
kind = "fat-tree"
radix = 8
hosts = 4
[workload]
kind = "bisection"
rounds = 4
tasks_per_node = {tasks}
"""
    for tasks in (1, 4):
        r = simulate(scenario(tmp_path, text.format(tasks=tasks)))
        ebb = r.effective_bisection
        assert ebb["fraction"] == pytest.approx(1.0, rel=1e-12)
        assert (ebb["gbps"] < 50) is (tasks == 4)


def test_dragonfly_scenario_runs_conflicts_and_simulate(tmp_path, capsys):
    from daqnet.cli import main

    p = tmp_path / "df.toml"
    p.write_text(
        """
[fabric]
kind = "dragonfly"
p = 2
a = 4
h = 2
[routing]
engine = "indirect"
seed = 1
[placement]
order = "blocked-supernode"
[workload]
kind = "stencil2d"
tasks_per_node = 2
"""
    )
    assert main(["simulate", str(p)]) == 0
    out = capsys.readouterr().out
    assert "dragonfly: p=2 a=4 h=2 g=9" in out and "global" in out
    assert main(["conflicts", str(p)]) == 0
    assert "global" in capsys.readouterr().out


@pytest.mark.parametrize("make", [lambda: dragonfly(2, 4, 2, 3), lambda: percs(2, 2, 2)])
def test_a_tree_engine_on_a_direct_network_names_its_engines(make):
    # A PERCS or dragonfly file without [routing] took dmodk and was told to use "minhop".
    from daqnet import routing

    with pytest.raises(USER_ERRORS) as err:
        routing.build(make(), "dmodk")
    assert 'for this direct network use engine "direct" (minimal) or "indirect"' in str(err.value)


def test_conflicts_count_the_flows_within_a_host_apart():
    # 4 tasks per PERCS node, a periodic 8 x 4 stencil: each node holds a row, so its left
    # and right messages stay on the node. The summary read "128 flows" where 64 crossed the
    # network. Counted here from the placement and the steps themselves.
    from daqnet.analysis import conflicts
    from daqnet.report.conflicts import conflict_summary

    sc = Scenario(
        {
            "fabric": {
                "kind": "percs",
                "supernodes": 2,
                "drawers_per_supernode": 2,
                "nodes_per_drawer": 2,
            },
            "routing": {"engine": "direct"},
            "workload": {"kind": "stencil2d", "tasks_per_node": 4, "message_bytes": 1000000},
        }
    )
    _f, routing, placement, workload = sc.build()
    hosts = np.asarray(placement.hosts)
    flows = np.concatenate(list(workload.steps()))
    local = int(np.count_nonzero(hosts[flows[:, 0]] == hosts[flows[:, 1]]))
    report = conflicts(routing, placement, workload)
    assert report.total_flows == len(flows) == 128
    assert report.local_flows == local == 64
    assert report.summary()["local_flows"] == 64
    assert "128 flows (64 within a host, on no link)," in conflict_summary(report, "s")
