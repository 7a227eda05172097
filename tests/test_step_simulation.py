"""The step simulation gives the same figures, to the last bit, whatever the number of
threads and whether identical steps are simulated again or answered from an earlier one."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from daqnet import Scenario
from daqnet.analysis.link_loads import class_loads, link_bytes
from daqnet.errors import DaqnetError
from daqnet.simulate import simulate_steps

CASES = {
    # D-mod-K in topology order: most barrel steps are the same problem on other links.
    "fat tree, topology order": {
        "fabric": {"radix": 8, "hosts": 32},
        "placement": {"order": "topology"},
    },
    # Shuffled names in hostname order: conflicts that differ from step to step.
    "fat tree, hostname order": {
        "fabric": {"radix": 8, "hosts": 48, "levels": 3, "naming": "shuffled", "naming_seed": 3},
        "placement": {"order": "hostname"},
    },
    # Several paths per flow (split over parallel global links), flows of unequal lengths,
    # links of unequal speeds.
    "dragonfly, indirect": {
        "fabric": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2, "global_gbps": 40.0},
        "routing": {"engine": "indirect", "seed": 2, "spread": True},
        "placement": {"order": "random", "seed": 5},
    },
}


def _figures(r):
    return (
        [
            (s["step"], s["seconds"], s["ideal_seconds"], s["flows"], s["min_flow_gbps"])
            for s in r.steps
        ],
        r.total_seconds,
        r.ideal_seconds,
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_threads_and_reuse_change_no_figure(case):
    sc = Scenario({**CASES[case], "simulate": {"ideal": True}}, source=f"<{case}>")
    plain = simulate_steps(sc, threads=1, reuse=False)
    assert plain.solver.reused_steps == 0
    want = _figures(plain)
    assert len(want[0]) == plain.steps_total > 10
    for threads in (1, 2, 3):
        got = simulate_steps(sc, threads=threads)
        assert _figures(got) == want, f"{threads} threads with reuse"
        assert _figures(simulate_steps(sc, threads=threads, reuse=False)) == want
    if case.endswith("topology order"):
        # The reuse path must have been taken for the comparison to mean something.
        assert simulate_steps(sc, threads=1).solver.reused_steps > plain.steps_total


_FRESH = """
import json, sys
from daqnet import Scenario
from daqnet.simulate import simulate_steps
spec = json.loads(sys.argv[1])
r = simulate_steps(Scenario({**spec, "simulate": {"ideal": True}}, source="<fresh>"), threads=2)
print(json.dumps([[s["seconds"], s["ideal_seconds"], s["min_flow_gbps"]] for s in r.steps]))
"""


def _fresh(spec):
    # A process of its own: nothing kept from an earlier call.
    done = subprocess.run(
        [sys.executable, "-c", _FRESH, json.dumps(spec)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_buffers_kept_from_call_to_call_change_no_figure():
    # Each thread's solver, memo and buffers are kept from one call to the next (and from
    # one fabric to another, and after a call that failed): calls in any order must give
    # what a first call in a fresh process gives.
    fresh = {case: _fresh(CASES[case]) for case in sorted(CASES)}
    scenarios = {
        case: Scenario({**CASES[case], "simulate": {"ideal": True}}, source=f"<{case}>")
        for case in sorted(CASES)
    }
    # A call that fails half-way (its threads end with an error) leaves them behind too.
    with pytest.raises(DaqnetError, match="at most 8 are simulated"):
        simulate_steps(_too_long(), threads=2)
    for threads in (2, 1, 3):
        for case in reversed(sorted(CASES)):
            got = simulate_steps(scenarios[case], threads=threads)
            want = [[s["seconds"], s["ideal_seconds"], s["min_flow_gbps"]] for s in got.steps]
            assert want == fresh[case], f"{case}, {threads} threads"


# Two global links per pair of groups: `spread` splits every flow between groups in two.
SPLIT = {
    "fabric": {"kind": "dragonfly", "p": 2, "a": 2, "h": 2, "g": 3},
    "routing": {"engine": "direct", "spread": True},
    "workload": {"kind": "all-to-all"},
}


@pytest.mark.parametrize("case", [*sorted(CASES), "dragonfly, split flows"])
def test_link_loads_are_what_the_routes_carry(case):
    # The simulation counts the messages over each link as it routes them (a routing that
    # splits flows leaves it to the analysis' pass): the loads must be the analysis' own.
    sc = Scenario(CASES.get(case, SPLIT), source=f"<{case}>")
    fabric, routing, placement, workload = sc.build()
    want = class_loads(fabric, link_bytes(routing, placement, workload, sc.message_bytes()))
    assert want and all(row["total_bytes"] > 0 for row in want if row["used"])
    for threads in (1, 2):
        assert simulate_steps(sc, threads=threads)["link_loads"] == want


def _too_long():
    # Indirect dragonfly routes (up to 7 links) plus both NIC limits: 9 resources, one more
    # than the flow network takes.
    return Scenario(
        {
            "fabric": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2},
            "routing": {"engine": "indirect"},
            "workload": {"kind": "all-to-all"},
            "simulate": {"injection_gbps": 50.0, "ejection_gbps": 50.0},
        },
        source="<long routes>",
    )


def test_a_route_too_long_is_refused_whatever_the_steps():
    # Refused at once, not only in steps the solver leaves to the flow network.
    with pytest.raises(DaqnetError, match=r"<long routes>: .* has 9 resources .* at most 8"):
        simulate_steps(_too_long(), threads=1)


def test_ctrl_c_inside_one_long_step_stops_it():
    # One multicast step of 65,536 tasks runs for seconds: the user's stop is seen inside it
    # (it was seen only once the step ended, which then read as "the last step ended").
    from daqnet.report.simulate import simulate_summary

    sc = Scenario.load("examples/percs-64.toml", overrides=["workload.kind=multicast"])
    calls = []

    def stop(done, total):
        calls.append((done, total))
        raise KeyboardInterrupt

    r = simulate_steps(sc, progress=stop, threads=2)
    assert calls == [(0, 1)]
    assert r.interrupted and r.steps_done == 0 and r.steps_total == 1
    # No time was measured: no rate or slowdown (0 Gb/s and x1 read as figures).
    assert r.gbps_per_host is None and r.slowdown is None and r.ideal_gbps_per_host is None
    text = simulate_summary(r.to_dict())
    assert "no step finished before the interrupt" in text and "total " not in text
