"""The incremental flow network: every rate equals a full max-min solve, at every instant."""

import math

import numpy as np
import pytest
from daqnet import _core
from daqnet.simulate.fair_share import fair_share
from hypothesis import given, settings
from hypothesis import strategies as st

FlowNetwork = _core.simulate.FlowNetwork


def run_and_compare(capacity, script, full=False):
    net = FlowNetwork(np.asarray(capacity, dtype=np.float64))
    net.set_full_recompute(full)
    active = {}  # flow id -> (resources, cap)
    tag_to_id = {}
    finished = []
    for op in script:
        if op[0] == "start":
            _, res, nbytes, cap = op
            tag = len(tag_to_id)
            fid = net.start(np.asarray(res, dtype=np.int32), nbytes, cap, tag)
            tag_to_id[tag] = fid
            active[fid] = (res, cap)
        else:
            t = net.next_completion()
            if math.isinf(t):
                continue
            for tag in net.advance(t):
                finished.append((tag, t))
                del active[tag_to_id[tag]]
        net.next_completion()  # settle
        ids = sorted(active)
        if not ids:
            continue
        expected = fair_share(capacity, [active[i][0] for i in ids], [active[i][1] for i in ids])
        got = [net.rate(i) for i in ids]
        np.testing.assert_allclose(got, expected, rtol=1e-9)
    return finished, net


@st.composite
def scripts(draw):
    nres = draw(st.integers(1, 8))
    capacity = [float(draw(st.integers(1, 10))) for _ in range(nres)]
    ops = []
    for _ in range(draw(st.integers(1, 40))):
        if draw(st.booleans()):
            # Repeats allowed: a route may cross a resource twice (it then takes its rate twice).
            res = draw(st.lists(st.integers(0, nres - 1), min_size=1, max_size=4))
            cap = draw(st.sampled_from([math.inf, math.inf, 1.0, 2.5]))
            ops.append(("start", res, float(draw(st.integers(1, 30))), cap))
        else:
            ops.append(("next",))
    return capacity, ops


@settings(max_examples=300, deadline=None)
@given(scripts())
def test_incremental_rates_equal_full_solve(case):
    capacity, ops = case
    incremental, _ = run_and_compare(capacity, ops)
    full, _ = run_and_compare(capacity, ops, full=True)
    # The same flows complete at the same times (flows ending together may come back in
    # either order, so compare by tag).
    assert sorted(tag for tag, _ in incremental) == sorted(tag for tag, _ in full)
    for (ta, a), (tb, b) in zip(sorted(incremental), sorted(full), strict=True):
        assert ta == tb
        assert a == pytest.approx(b, rel=1e-9)


def test_completion_times_by_hand():
    # Two flows of 10 and 20 bytes on one resource of 10 B/s: 5 B/s each until t=2, when
    # the first ends; the second then has 10 bytes left at 10 B/s: done at t=3.
    net = FlowNetwork(np.array([10.0]))
    net.start(np.array([0], dtype=np.int32), 10.0, math.inf, 1)
    net.start(np.array([0], dtype=np.int32), 20.0, math.inf, 2)
    assert net.next_completion() == pytest.approx(2.0)
    assert net.advance(2.0) == [1]
    assert net.next_completion() == pytest.approx(3.0)
    assert net.advance(3.0) == [2]
    assert net.active == 0 and math.isinf(net.next_completion())


def test_bad_flows_are_refused():
    net = FlowNetwork(np.array([1.0]))
    with pytest.raises(ValueError, match="out of range"):
        net.start(np.array([1], dtype=np.int32), 1.0)
    with pytest.raises(ValueError, match="bytes > 0"):
        net.start(np.array([0], dtype=np.int32), 0.0)
