"""Conflict analysis against the brute-force reference, and the known zero-conflict cases."""

import itertools

import daqnet
import numpy as np
import pytest
import reference
from daqnet import placement, routing, workload
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@st.composite
def scenarios(draw):
    levels = draw(st.sampled_from([2, 3]))
    radix = draw(st.sampled_from([4, 6, 8] if levels == 3 else [4, 6, 8, 10, 12]))
    half = radix // 2
    tapers = [t for t in ("1:1", "2:1", "3:1", "3:2") if half * int(t[-1]) % int(t[0]) == 0]
    taper = [draw(st.sampled_from(tapers)) for _ in range(levels - 1)]
    capacity = half ** (levels - 1) * radix
    hosts = draw(st.integers(2, min(capacity, 40)))
    fab = daqnet.fat_tree(
        radix=radix,
        hosts=hosts,
        levels=levels,
        taper=taper,
        naming="shuffled",
        naming_seed=draw(st.integers(0, 3)),
    )
    rt = routing.build(
        fab, draw(st.sampled_from(["dmodk", "random"])), seed=draw(st.integers(0, 9))
    )
    ranks = draw(st.integers(2, hosts))
    pl = placement.build(
        fab,
        draw(st.sampled_from(["topology", "hostname", "random"])),
        ranks,
        seed=draw(st.integers(0, 9)),
    )
    kind = draw(st.sampled_from(["barrel", "random", "all-at-once", "shift"]))
    if kind == "shift":
        wl = workload.shifts(
            ranks, draw(st.lists(st.integers(1, ranks - 1), min_size=1, max_size=4))
        )
    else:
        wl = workload.event_building(ranks, kind, seed=draw(st.integers(0, 9)))
    return rt, pl, wl


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_matches_brute_force(case):
    rt, pl, wl = case
    rep = daqnet.conflicts(rt, pl, wl)
    per_step, link_flows, link_conflicts, hops = reference.conflicts(rt, pl.hosts, wl.steps())
    steps = rep.steps()
    assert list(steps["step"]) == list(range(1, wl.num_steps + 1))
    assert list(steps["conflicts"]) == [c for c, _, _ in per_step]
    assert list(steps["max_link_load"]) == [m for _, m, _ in per_step]
    assert list(steps["links_used"]) == [len(load) for _, _, load in per_step]
    assert list(steps["conflicting_links"]) == [
        sum(v > 1 for v in load.values()) for _, _, load in per_step
    ]
    assert rep.total_conflicts == sum(c for c, _, _ in per_step)
    links = rep.links()
    assert {i: int(v) for i, v in enumerate(links["flows"]) if v} == dict(link_flows)
    assert {i: int(v) for i, v in enumerate(links["conflicts"]) if v} == dict(link_conflicts)
    # invariants: the sum of link loads is the sum of path lengths
    assert rep.total_link_traversals == hops == int(links["flows"].sum())
    assert rep.total_flows == sum(len(f) for f in wl.steps())
    # load histograms count every (link, step) pair once, per link class, as brute force does
    klass = rt.fabric.links()["class"]
    names = rt.fabric.link_class_names()
    for c, lv in enumerate(rep.levels()):
        assert lv["class"] == names[c]
        assert lv["link_steps"] == lv["links"] * wl.num_steps
        members = [i for i, k in enumerate(klass) if k == c]
        expect: dict[int, int] = {}
        for _, _, load in per_step:
            for i in members:
                expect[load.get(i, 0)] = expect.get(load.get(i, 0), 0) + 1
        assert lv["histogram"] == expect
    # full link loads of a step
    s_mid = (wl.num_steps + 1) // 2
    loads = rep.step_loads(s_mid)
    assert {i: int(v) for i, v in enumerate(loads) if v} == dict(per_step[s_mid - 1][2])
    # the conflicting links of a step and the flows on them
    worst = rep.worst_steps(1)
    if worst:
        s = worst[0]
        _, _, load = per_step[s - 1]
        det = rep.step_details(s)
        assert {d["link"]: d["load"] for d in det} == {k: v for k, v in load.items() if v > 1}
        for d in det:
            assert len(d["flows"]) == d["load"]
            for f in d["flows"]:
                assert d["link"] in rt.path(
                    int(pl.hosts[f["src_rank"]]), int(pl.hosts[f["dst_rank"]])
                )


@pytest.mark.parametrize(("radix", "hosts"), [(36, 72), (36, 540), (48, 96), (48, 528)])
def test_barrel_conflict_free_on_full_leaves(radix, hosts):
    fab = daqnet.fat_tree(radix=radix, hosts=hosts, naming="shuffled", naming_seed=1)
    rt = routing.dmodk(fab)
    wl = workload.event_building(hosts, "barrel")
    topo = daqnet.conflicts(rt, placement.topology(fab), wl)
    assert topo.total_conflicts == 0 and topo.max_link_load == 1
    assert topo.steps_done == hosts - 1
    for pl in (placement.hostname(fab), placement.random(fab, seed=3)):
        rep = daqnet.conflicts(rt, pl, wl)
        assert rep.total_conflicts > 0 and rep.max_link_load > 1


@pytest.mark.parametrize(("radix", "hosts"), [(36, 64), (36, 512), (48, 512)])
def test_barrel_conflicts_with_partial_leaf(radix, hosts):
    fab = daqnet.fat_tree(radix=radix, hosts=hosts)
    rep = daqnet.conflicts(
        routing.dmodk(fab), placement.topology(fab), workload.event_building(hosts, "barrel")
    )
    assert rep.total_conflicts > 0
    assert [lv["conflicts"] for lv in rep.levels() if lv["class"] == "spine->leaf"] == [0]


def test_random_schedule_covers_every_pair_once():
    wl = workload.event_building(13, "random", seed=4)
    pairs = []
    for flows in wl.steps():
        assert sorted(flows[:, 0]) == list(range(13)) and sorted(flows[:, 1]) == list(range(13))
        assert (flows[:, 0] != flows[:, 1]).all()
        pairs += [tuple(f) for f in flows]
    assert sorted(pairs) == [(a, b) for a, b in itertools.product(range(13), repeat=2) if a != b]
    again = workload.event_building(13, "random", seed=4)
    other = workload.event_building(13, "random", seed=5)
    assert all((x == y).all() for x, y in zip(wl.steps(), again.steps(), strict=True))
    assert any((x != y).any() for x, y in zip(wl.steps(), other.steps(), strict=True))


def test_barrel_and_all_at_once_flows():
    b = workload.event_building(5, "barrel")
    assert b.num_steps == 4
    np.testing.assert_array_equal(b.step(2), [[0, 2], [1, 3], [2, 4], [3, 0], [4, 1]])
    a = workload.event_building(5, "all-at-once")
    assert a.num_steps == 1 and len(a.step(1)) == 20
    s = workload.shifts(5, [-1, 7])
    np.testing.assert_array_equal(s.step(1)[:, 1], [4, 0, 1, 2, 3])
    np.testing.assert_array_equal(s.step(2)[:, 1], [2, 3, 4, 0, 1])
    with pytest.raises(ValueError, match="shift 10 is a multiple of the 5 ranks"):
        workload.shifts(5, [10])


def test_all_at_once_equals_sum_of_barrel_links():
    fab = daqnet.fat_tree(radix=8, hosts=30)
    rt, pl = routing.dmodk(fab), placement.random(fab, seed=2)
    a = daqnet.conflicts(rt, pl, workload.event_building(30, "all-at-once"))
    b = daqnet.conflicts(rt, pl, workload.event_building(30, "barrel"))
    np.testing.assert_array_equal(a.links()["flows"], b.links()["flows"])
    assert a.total_flows == b.total_flows == 30 * 29


def test_subset_of_ranks_and_progress():
    fab = daqnet.fat_tree(radix=36, hosts=540)
    calls = []
    rep = daqnet.conflicts(
        routing.dmodk(fab),
        placement.topology(fab, ranks=100),
        workload.event_building(100),
        progress=lambda d, t: calls.append((d, t)),
    )
    assert rep.placement.ranks == 100 and rep.steps_done == 99
    assert calls and calls[-1] == (99, 99)
    assert not rep.interrupted


def test_placement_orders(tmp_path):
    fab = daqnet.fat_tree(
        radix=8,
        hosts=12,
        naming="file",
        naming_file=_names(tmp_path, ["n10", "n9", "n2", "n1"] + [f"x{i}" for i in range(8)]),
    )
    assert placement.hostname(fab, ranks=4).host_names() == ["n1", "n2", "n9", "n10"]
    assert list(placement.topology(fab, ranks=3).hosts) == [0, 1, 2]
    r = placement.random(fab, seed=1)
    assert sorted(r.hosts) == list(range(12))
    f = _names(tmp_path, ["x3", "n9", "# comment", "", "x1"], "ranks.txt")
    assert placement.from_file(fab, f).host_names() == ["x3", "n9", "x1"]
    with pytest.raises(ValueError, match=r"ranks.txt: lists 3 hosts but placement.ranks = 5"):
        placement.from_file(fab, f, ranks=5)
    bad = _names(tmp_path, ["x3", "zz"], "bad.txt")
    with pytest.raises(ValueError, match=r"bad.txt:2: no host named 'zz' in the fabric"):
        placement.from_file(fab, bad)
    dup = _names(tmp_path, ["x3", "x3"], "dup.txt")
    with pytest.raises(ValueError, match=r"dup.txt:2: host 'x3' already listed on line 1"):
        placement.from_file(fab, dup)
    with pytest.raises(
        ValueError, match="placement.ranks = 13: must be between 2 and the 12 hosts"
    ):
        placement.topology(fab, ranks=13)


def _names(tmp_path, names, fname="names.txt"):
    p = tmp_path / fname
    p.write_text("\n".join(names) + "\n")
    return p


def _everything(rep):
    """Every figure of a report, as plain lists, for exact comparison."""
    links = rep.links()
    return (
        {k: list(v) for k, v in rep.steps().items()},
        {k: list(v) for k, v in links.items()},
        [list(h) for h in rep._core.load_histogram()],
        (rep.total_conflicts, rep.total_link_traversals, rep.total_flows, rep.max_link_load),
    )


@pytest.mark.parametrize(
    "case",
    [
        (
            "fat tree, hostname order",
            lambda: daqnet.fat_tree(radix=8, hosts=100, levels=3),
            "hostname",
        ),
        ("fat tree, random order", lambda: daqnet.fat_tree(radix=12, hosts=70), "random"),
        ("dragonfly, Valiant", lambda: daqnet.fabric.dragonfly(2, 4, 2, 9), "random"),
    ],
)
@pytest.mark.parametrize("kind", ["barrel", "random", "all-at-once"])
def test_threads_give_identical_results(case, kind):
    """The analysis shares steps out over threads; every figure must stay bit-identical."""
    _, make_fabric, order = case
    fab = make_fabric()
    rt = routing.group(fab, "indirect", seed=2) if fab.units else routing.dmodk(fab)
    pl = placement.build(fab, order, seed=4)
    wl = workload.event_building(pl.ranks, kind, seed=1)
    one = _everything(daqnet.conflicts(rt, pl, wl, threads=1))
    assert one[3][0] > 0  # the cases have conflicts, so the conflict counters are exercised
    for threads in (2, 3, 7):
        assert _everything(daqnet.conflicts(rt, pl, wl, threads=threads)) == one


def test_threads_stopped_early_keep_a_prefix_of_steps():
    fab = daqnet.fat_tree(radix=8, hosts=100, levels=3)
    rt, pl = routing.dmodk(fab), placement.build(fab, "hostname", seed=1)
    wl = workload.event_building(pl.ranks)
    full = daqnet.conflicts(rt, pl, wl, threads=1).steps()
    core, _ = daqnet._core.analysis.analyze_conflicts(
        rt._core, pl.hosts, wl._core, lambda done, total: False, 0.0, threads=2
    )
    steps = core.step_table()
    done = len(steps["step"])
    assert core.interrupted and 0 < done < wl.num_steps
    assert list(steps["step"]) == list(range(done))
    assert list(steps["conflicts"]) == list(full["conflicts"][:done])
    assert core.total_conflicts == int(full["conflicts"][:done].sum())


def test_switches_with_more_than_255_ports():
    """Routes of switches with over 255 ports are cached in 16 bits: same loads as brute force."""
    fab = daqnet.fat_tree(radix=600, hosts=900, levels=2)
    rt = routing.dmodk(fab)
    assert (
        max(len(fab.ports(v)) for v in range(fab.num_hosts, fab.num_hosts + fab.num_switches)) > 256
    )
    pl = placement.build(fab, "random", seed=3)
    wl = workload.shifts(pl.ranks, [1, 299, 450])
    rep = daqnet.conflicts(rt, pl, wl)
    per_step, link_flows, _, hops = reference.conflicts(rt, pl.hosts, wl.steps())
    assert list(rep.steps()["conflicts"]) == [c for c, _, _ in per_step]
    assert {i: int(v) for i, v in enumerate(rep.links()["flows"]) if v} == dict(link_flows)
    assert rep.total_link_traversals == hops
