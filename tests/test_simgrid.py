"""Step times of daqnet's flow model against SimGrid (CM02, plain max-min sharing).

SimGrid builds the same fat trees (its FatTreeZone routes D-mod-K, like daqnet's dmodk, and
numbers hosts the same way) and plays the same steps with the same flows; every step must
take the same time to 1e-6 relative. See simgrid_ref.py for how SimGrid is set up.
"""

import numpy as np
import pytest
import simgrid_ref
from daqnet import Scenario
from daqnet.simulate import simulate_steps

_reason = simgrid_ref.unavailable_reason()
pytestmark = pytest.mark.skipif(_reason is not None, reason=f"SimGrid: {_reason}")

MESSAGE = 2**20


def scenario(fabric, placement=None, workload=None, latency=1e-6):
    data = {
        "fabric": {"link_gbps": 100.0, "latency_seconds": latency, **fabric},
        "placement": placement or {},
        "workload": workload or {},
        "simulate": {"message_bytes": float(MESSAGE)},
    }
    return Scenario(data, source="<simgrid test>")


def compare(sc):
    fab, _rt, pl, wl = sc.build()
    got = simulate_steps(sc)
    steps = []
    for flows in wl.steps():
        hosts = pl.hosts[flows]  # rank → host
        steps.append([(int(a), int(b)) for a, b in hosts if a != b])
    x = fab.xgft
    f = sc["fabric"]
    want, _wall = simgrid_ref.step_times(
        x["down"], x["up"], x["hosts"], f["link_gbps"], f["latency_seconds"], steps, MESSAGE
    )
    mine = np.array([s["seconds"] for s in got["steps"]])
    np.testing.assert_allclose(mine, want, rtol=1e-6, atol=0)
    return got


def test_full_two_level_tree_hostname_order():
    # Shuffled hostnames: ranks in hostname order collide on up-links.
    got = compare(
        scenario(
            {"radix": 8, "hosts": 32, "naming": "shuffled", "naming_seed": 3},
            placement={"order": "hostname"},
        )
    )
    assert got["slowdown"] > 1.0  # contention is there, and timed the same


def test_two_to_one_tapered_tree():
    got = compare(scenario({"radix": 8, "hosts": 32, "taper": "2:1"}))
    assert got["slowdown"] > 1.5


def test_random_placement_random_schedule():
    got = compare(
        scenario(
            {"radix": 8, "hosts": 32},
            placement={"order": "random", "seed": 5},
            workload={"schedule": "random", "seed": 2},
        )
    )
    assert got["slowdown"] > 1.0


def test_all_at_once():
    # One step of every pair: flows finish at different times and free bandwidth.
    got = compare(scenario({"radix": 8, "hosts": 16}, workload={"schedule": "all-at-once"}))
    assert got["steps_total"] == 1


def test_three_level_tree_with_partial_leaf():
    compare(
        scenario(
            {"radix": 4, "levels": 3, "hosts": 14, "taper": ["1:1", "2:1"]},
            placement={"order": "random", "seed": 1},
        )
    )
