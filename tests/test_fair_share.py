"""Max-min fair rates against hand-computed cases and a slow exact reference."""

import math

import daqnet
import numpy as np
import pytest
from daqnet.simulate.fair_share import fair_share, flow_rates
from fair_share_reference import is_max_min, max_min
from hypothesis import given, settings
from hypothesis import strategies as st

INF = math.inf


def test_hand_cases():
    # Two flows on one link share it; a third on another link alone takes it all.
    assert list(fair_share([10, 4], [[0], [0], [1]])) == [5, 5, 4]
    # The classic: A over both links, B on link 0, C on link 1 (capacities 10 and 4).
    # C and A share link 1 (2 each); B takes what A leaves on link 0.
    assert list(fair_share([10, 4], [[0, 1], [0], [1]])) == [2, 8, 2]
    # Parking lot: one long flow over 3 links of 1, one short flow on each link.
    assert list(fair_share([1, 1, 1], [[0, 1, 2], [0], [1], [2]])) == [0.5] * 4
    # A per-flow cap frees bandwidth for the others.
    assert list(fair_share([10], [[0], [0], [0]], caps=[1, INF, INF])) == [1, 4.5, 4.5]
    # Unlimited resources and no resources.
    assert list(fair_share([INF], [[0], []], caps=[INF, 3])) == [INF, 3]
    # A resource listed twice counts twice (a flow crossing it both ways).
    assert list(fair_share([6], [[0, 0], [0]])) == [2, 2]


def test_nic_limits_on_a_fabric():
    fab = daqnet.fat_tree(radix=8, hosts=32)
    rt = daqnet.routing.dmodk(fab)
    # Host 0 sends to 4 and 5 (other leaves): its 100 Gb/s link is shared.
    assert list(flow_rates(rt, [(0, 4), (0, 5)])) == [50, 50]
    # A NIC that injects only 60 Gb/s: 30 each.
    assert list(flow_rates(rt, [(0, 4), (0, 5)], injection_gbps=60)) == [30, 30]
    # Ejection limits of 20 Gb/s at every host cap both flows; host 6 takes two flows.
    assert list(flow_rates(rt, [(0, 4), (0, 5)], injection_gbps=60, ejection_gbps=20)) == [20, 20]
    np.testing.assert_allclose(
        flow_rates(rt, [(0, 6), (1, 6), (2, 7)], ejection_gbps=30), [15, 15, 30]
    )
    # Per-flow caps in Gb/s.
    np.testing.assert_allclose(flow_rates(rt, [(0, 4), (0, 5)], caps_gbps=[10, INF]), [10, 90])


def test_bad_input_is_one_clear_error():
    with pytest.raises(daqnet.DaqnetError, match="resource 3 out of range"):
        fair_share([1, 1], [[3]])
    with pytest.raises(daqnet.DaqnetError, match="capacity of resource 0"):
        fair_share([-1], [[0]])
    with pytest.raises(daqnet.DaqnetError, match="caps for"):
        fair_share([1], [[0]], caps=[1, 2])
    with pytest.raises(daqnet.DaqnetError, match="cap of flow 0"):
        fair_share([1], [[0]], caps=[math.nan])


@st.composite
def instances(draw):
    nres = draw(st.integers(1, 6))
    capacity = [draw(st.integers(1, 20)) for _ in range(nres)]
    nflows = draw(st.integers(1, 8))
    flows = [
        draw(st.lists(st.integers(0, nres - 1), min_size=0, max_size=4)) for _ in range(nflows)
    ]
    # Flows without resources need a cap to be comparable; give every flow a cap or not.
    caps = [draw(st.one_of(st.none(), st.integers(1, 15))) for _ in range(nflows)]
    caps = [c if (c is not None or f) else 5 for c, f in zip(caps, flows, strict=True)]
    return capacity, flows, caps


@settings(max_examples=300, deadline=None)
@given(instances())
def test_against_exact_reference(inst):
    capacity, flows, caps = inst
    expected = max_min(capacity, flows, caps)
    got = fair_share(capacity, flows, [INF if c is None else c for c in caps])
    for g, e in zip(got, expected, strict=True):
        assert g == pytest.approx(float(e), rel=1e-12)
    assert is_max_min(capacity, flows, [INF if c is None else c for c in caps], got)


def test_reference_detects_a_wrong_allocation():
    # Equal split is feasible but not max-min here: B could grow on link 0.
    assert not is_max_min([10, 4], [[0, 1], [0], [1]], None, [2, 2, 2])
    assert is_max_min([10, 4], [[0, 1], [0], [1]], None, [2, 8, 2])


@settings(max_examples=100, deadline=None)
@given(instances(), st.integers(0, 2**32 - 1))
def test_heap_and_scan_paths_agree(inst, seed):
    # Few resources are solved by scanning, many with a heap: padding the same problem with
    # unused resources switches paths and must not change a rate.
    capacity, flows, caps = inst
    caps = [INF if c is None else c for c in caps]
    small = fair_share(capacity, flows, caps)
    rng = np.random.default_rng(seed)
    padding = list(rng.integers(1, 20, size=100).astype(float))
    big = fair_share(capacity + padding, flows, caps)
    np.testing.assert_allclose(big, small, rtol=1e-12)


def test_large_random_instance_is_max_min():
    rng = np.random.default_rng(7)
    capacity = list(rng.integers(1, 50, size=150).astype(float))
    flows = [list(rng.choice(150, size=rng.integers(1, 6), replace=False)) for _ in range(400)]
    caps = [float(c) if c < 8 else INF for c in rng.integers(1, 40, size=400)]
    rates = fair_share(capacity, flows, caps)
    assert is_max_min(capacity, flows, caps, rates)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(4, 24),
    st.lists(st.tuples(st.integers(0, 23), st.integers(0, 23)), min_size=1, max_size=10),
    st.sampled_from([0.0, 30.0, 100.0]),
    st.sampled_from([0.0, 20.0, 70.0]),
)
def test_host_flows_with_nic_limits_against_reference(hosts, pairs, inject, eject):
    # Routes from the fabric, NIC limits as resources of their own; the exact reference
    # builds its own resource lists from the route's links.
    fab = daqnet.fat_tree(radix=8, hosts=hosts, taper="2:1")
    rt = daqnet.routing.dmodk(fab)
    pairs = [(a % hosts, b % hosts) for a, b in pairs if a % hosts != b % hosts]
    if not pairs:
        return
    links = fab.links()
    nlinks = len(links["gbps"])
    capacity = (
        [float(g) for g in links["gbps"]] + [inject or None] * hosts + [eject or None] * hosts
    )
    flows = [[int(x) for x in rt.path(a, b)] + [nlinks + a, nlinks + hosts + b] for a, b in pairs]
    expected = max_min(capacity, flows)
    got = flow_rates(rt, pairs, injection_gbps=inject, ejection_gbps=eject)
    np.testing.assert_allclose(got, [float(e) for e in expected], rtol=1e-9)
