"""The protocol simulation against an independent discrete-event reference (exact arithmetic).

tests/protocol_reference.py plays the same protocol from the documentation with Fractions;
with fixed fragment sizes every time is then exact, so daqnet's per-event times, window,
payload, throughput, latency and link bytes must agree to 1e-9 relative (in practice
~1e-12: floating-point rounding, and daqnet ending flows within 1e-12 of each other together).

Events that end at the same instant at different builders reach the event manager together
and may get their event numbers in either order (daqnet's order among equal times comes from
floating-point noise); the times do not depend on it. So events are compared per builder as
sorted times, not by event number, and every compared case is first checked to give the same
answer in the reference whichever way its ties are taken (PULL with a process cap on a
symmetric fabric does not: which transfer takes a freed token decides the run, see
test_tied_process_caps_have_no_single_answer).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from daqnet import Scenario, _core
from daqnet.bench.config import run_config_text
from daqnet.simulate import simulate_protocol
from daqnet.simulate.model import network_model
from daqnet.simulate.protocol import check_protocol, protocol_run_length
from protocol_reference import Network, max_min_rates, simulate

LATENCY = 1e-7
FABRICS = {
    # one switch
    "switch": {"radix": 16, "hosts": 8},
    # 2 leaves of 3 hosts, one up-link each: 3:1 tapered, the up-links shared
    "tapered": {"radix": 4, "hosts": 6, "taper": "3:1", "hosts_per_leaf": 3},
    # 4 leaves of 2 hosts, 2 spines, d-mod-k routes
    "tree": {"radix": 4, "hosts": 8},
}
SIZES = {"fragment_bytes": 65536, "meta_bytes": 1024, "command_bytes": 64}


def scenario(fabric, nodes, bench, events, warmup, local_gbps=0.0):
    bench = {**SIZES, **bench}
    schedule = bench.pop("schedule", "barrel")
    return Scenario(
        {
            "fabric": {**FABRICS[fabric], "latency_seconds": LATENCY},
            "placement": {"ranks": nodes},
            "workload": {"schedule": schedule},
            "bench": bench,
            "simulate": {
                "mode": "protocol",
                "events": events,
                "warmup_events": warmup,
                "local_gbps": local_gbps,
            },
        },
        source="<protocol reference test>",
    )


def run_daqnet(sc):
    """daqnet's result document, and the core's per-event arrays (the document keeps only
    percentiles), from the same inputs as simulate_protocol."""
    doc = simulate_protocol(sc)
    fabric, routing, placement, _ = sc.build()
    nodes, cfg = check_protocol(sc, placement.ranks)
    run = protocol_run_length(sc, nodes)
    hosts = np.ascontiguousarray(placement.hosts[:nodes], dtype=np.int32)
    core = _core.simulate.simulate_protocol(
        network_model(sc, routing),
        hosts,
        run_config_text(cfg, sc.source),
        sc.source,
        run["events"],
        run["seconds"],
        run["warmup_events"],
        run["warmup_seconds"],
        sc["simulate"]["local_gbps"],
    )
    return doc, core, Network.of(fabric, routing), [int(h) for h in hosts]


def reference(net, hosts, bench, events, warmup, local_gbps=0.0, last_first=False):
    b = {**SIZES, **bench}
    if "fragment_bytes_per_ru" in b:
        b["fragment_bytes"] = b.pop("fragment_bytes_per_ru")
    b["eager"] = b.pop("transport", "mpi") == "tcp"  # TCP's sends do not wait for receives
    return simulate(
        net,
        hosts,
        events=events,
        warmup_events=warmup,
        local_gbps=local_gbps,
        last_first=last_first,
        **b,
    )


def per_builder(builders, assigned, built, nodes):
    """Per builder: its events' assignment times and build times, each sorted."""
    out = []
    for b in range(nodes):
        mine = [k for k in range(len(builders)) if builders[k] == b]
        out.append((sorted(assigned[k] for k in mine), sorted(built[k] for k in mine)))
    return out


def of_reference(r, nodes):
    return per_builder(
        [e.builder for e in r.built],
        [e.built - e.latency for e in r.built],  # the assignment, or when made (rate_hz)
        [e.built for e in r.built],
        nodes,
    )


def of_core(core, nodes):
    built, latency = list(core.built_at), list(core.latency)
    assigned = [t - lat for t, lat in zip(built, latency, strict=True)]
    return per_builder(list(core.builder), assigned, built, nodes)


def difference(core, r, nodes):
    """Largest relative difference between daqnet's per-builder times and the reference's
    (over the events both built; assignment times near 0 relative to the run's length)."""
    scale = float(r.window_end)
    worst = 0.0
    for (ca, cb), (ra, rb) in zip(of_core(core, nodes), of_reference(r, nodes), strict=True):
        for x, y in zip(ca, ra, strict=False):
            worst = max(worst, abs(float(x) - float(y)) / max(float(y), scale))
        for x, y in zip(cb, rb, strict=False):
            worst = max(worst, abs(float(x) - float(y)) / float(y))
    return worst


def agree(core, r, nodes, rel=1e-9):
    """The same events at every builder, at the same times."""
    same_counts = [len(b) for _, b in of_core(core, nodes)] == [
        len(b) for _, b in of_reference(r, nodes)
    ]
    return same_counts and difference(core, r, nodes) <= rel


def edges_tied(r):
    """An event built at the same instant as the first of the window (or the last): which of
    them the window holds is a tie."""
    first, last = r.first_in_window, r.first_in_window + r.window_events - 1
    t = [e.built for e in r.built]
    return (first > 0 and t[first - 1] == t[first]) or (
        last + 1 < len(t) and t[last + 1] == t[last]
    )


def tied_bytes(r):
    """The bytes of the events built at the instants of the window's first and last events:
    the fragments whose side of a tied edge depends on the order within the instant."""
    first, last = r.first_in_window, r.first_in_window + r.window_events - 1
    at = {r.built[first].built, r.built[last].built}
    return sum(e.bytes for e in r.built if e.built in at)


# (fabric, nodes, bench): PUSH and PULL, in_flight 1, 2, 4 and all at once, 1-3 credits, a
# process cap, unequal (fixed) fragment sizes per RU, a local copy rate.
CASES = [
    ("switch", 4, {"protocol": "push", "credits": 1, "in_flight": 1}),
    ("switch", 4, {"protocol": "pull", "credits": 2, "in_flight": 2}),
    ("switch", 4, {"protocol": "push", "credits": 3, "in_flight": 4}),
    ("switch", 4, {"protocol": "pull", "credits": 2, "schedule": "all-at-once"}),
    (
        "switch",
        4,
        {
            "protocol": "pull",
            "credits": 3,
            "in_flight": 2,
            "max_in_flight": 2,
            "fragment_bytes_per_ru": [65536, 40000, 50008, 30000, 70000],
        },
    ),
    ("switch", 8, {"protocol": "pull", "credits": 1, "in_flight": 1}),
    ("switch", 8, {"protocol": "push", "credits": 2, "in_flight": 2, "local_gbps": 50.0}),
    ("tapered", 6, {"protocol": "push", "credits": 1, "in_flight": 1}),
    ("tapered", 6, {"protocol": "pull", "credits": 2, "in_flight": 2}),
    ("tapered", 6, {"protocol": "push", "credits": 3, "in_flight": 4}),
    ("tapered", 6, {"protocol": "push", "credits": 2, "schedule": "all-at-once"}),
    ("tapered", 6, {"protocol": "pull", "credits": 3, "in_flight": 2, "max_in_flight": 2}),
    (
        "tapered",
        6,
        {
            "protocol": "pull",
            "credits": 2,
            "in_flight": 2,
            "fragment_bytes_per_ru": [65536, 40000, 50008],
        },
    ),
    ("tree", 8, {"protocol": "push", "credits": 2, "in_flight": 2}),
    ("tree", 8, {"protocol": "pull", "credits": 3, "in_flight": 4}),
    ("tree", 8, {"protocol": "push", "credits": 3, "in_flight": 2, "max_in_flight": 2}),
    # TCP's eager sends: PUSH fragments move before their receives are posted.
    ("tapered", 6, {"protocol": "push", "credits": 2, "in_flight": 1, "transport": "tcp"}),
    ("tapered", 6, {"protocol": "push", "credits": 3, "in_flight": 2, "transport": "tcp"}),
    (
        "tree",
        8,
        {"protocol": "push", "credits": 3, "in_flight": 2, "max_in_flight": 2, "transport": "tcp"},
    ),
    (
        "switch",
        4,
        {
            "protocol": "push",
            "credits": 2,
            "in_flight": 1,
            "transport": "tcp",
            "fragment_bytes_per_ru": [65536, 40000, 50008, 30000],
        },
    ),
    ("tree", 8, {"protocol": "pull", "credits": 2, "in_flight": 2, "transport": "tcp"}),
    # Fragments made at a rate: events assigned ahead wait for their data; PULL's requests
    # reach an RU out of event order; above what the builders sustain, a backlog.
    ("tree", 8, {"protocol": "push", "credits": 2, "in_flight": 2, "rate_hz": 100000.0}),
    ("tree", 8, {"protocol": "pull", "credits": 3, "in_flight": 4, "rate_hz": 100000.0}),
    ("switch", 4, {"protocol": "pull", "credits": 2, "schedule": "all-at-once", "rate_hz": 2e5}),
    ("tree", 8, {"protocol": "push", "credits": 2, "in_flight": 2, "rate_hz": 4e5}),
]
EVENTS = 40


def case_id(case):
    fabric, nodes, bench = case
    return (
        f"{fabric}{nodes}-"
        + "-".join(f"{k}={v}" for k, v in bench.items() if k != "fragment_bytes_per_ru")
        + ("-unequal" if "fragment_bytes_per_ru" in bench else "")
    )


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_protocol_matches_the_reference(case):
    fabric, nodes, bench = case
    bench = dict(bench)
    local_gbps = bench.pop("local_gbps", 0.0)
    warmup = nodes
    doc, core, net, hosts = run_daqnet(scenario(fabric, nodes, bench, EVENTS, warmup, local_gbps))
    r = reference(net, hosts, bench, EVENTS, warmup, local_gbps)
    # The case has one answer: the reference gives it whichever way its ties are taken.
    other = reference(net, hosts, bench, EVENTS, warmup, local_gbps, last_first=True)
    assert of_reference(other, nodes) == of_reference(r, nodes)
    assert other.window_payload == r.window_payload and other.link_bytes == r.link_bytes

    # Every event: who built it, when it was assigned and when built.
    assert len(core.built_at) == len(r.built) == doc["events_total"]
    assert agree(core, r, nodes)
    # The window, its payload (moving parts included) and the figures made of it.
    t0, t1 = r.window_start, r.window_end
    assert doc["warmup_seconds"] == pytest.approx(float(t0), rel=1e-9)
    assert doc["total_seconds"] == pytest.approx(float(t1), rel=1e-9)
    assert doc["window_seconds"] == pytest.approx(float(t1 - t0), rel=1e-9)
    assert doc["events_built"] == EVENTS
    payload = float(r.window_payload)
    if edges_tied(r):
        # Events built at one instant are taken in some order within it, and which of the
        # fragments delivered then fall inside the window follows that order (an eager
        # receive completed at the instant, say): a tie, held to those events' bytes.
        assert abs(doc["window_payload_bytes"] - payload) <= tied_bytes(r) + 1e-9 * payload
        payload = doc["window_payload_bytes"]  # the figures below are made of it
    else:
        assert doc["window_payload_bytes"] == pytest.approx(payload, rel=1e-9)
    bps = payload / float(t1 - t0)
    assert doc["throughput_gbps"] == pytest.approx(bps * 8 / 10**9, rel=1e-9)
    event_bytes = r.built[0].bytes  # fixed sizes: every event has the same payload
    assert doc["events_per_second"] == pytest.approx(bps / event_bytes, rel=1e-9)
    if not edges_tied(r):  # which events the window holds is then certain
        lat = np.array([float(e.latency) for e in r.in_window])
        for key, value in (
            ("p50", np.percentile(lat, 50)),
            ("p99", np.percentile(lat, 99)),
            ("max", lat.max()),
        ):
            assert doc["latency_seconds"][key] == pytest.approx(value, rel=1e-9), key
    # What was under way at the end, and the bytes every link carried.
    assert doc["partial_fragments"] == r.partial_fragments
    assert doc["partial_bytes"] == r.partial_bytes
    link_bytes = [ln["bytes"] for ln in doc["links"]]
    np.testing.assert_allclose(link_bytes, [float(b) for b in r.link_bytes], rtol=1e-9, atol=1e-3)
    # Limits reached as configured (the case exercises them), never passed.
    assert doc["limits"]["max_busy_slots"] == r.max_busy_slots == bench["credits"]
    window = nodes if bench.get("schedule") == "all-at-once" else bench["in_flight"]
    assert doc["limits"]["max_gather_in_flight"] == r.max_gather_in_flight == window


@pytest.mark.parametrize(
    "case",
    [CASES[1], CASES[8], CASES[13], CASES[14]],
    ids=case_id,
)
def test_a_changed_reference_disagrees(case):
    # The comparison can fail: one credit fewer, one transfer fewer in flight, or the
    # commands twice as long give other times.
    fabric, nodes, bench = case
    _, core, net, hosts = run_daqnet(scenario(fabric, nodes, bench, EVENTS, nodes))
    assert agree(core, reference(net, hosts, bench, EVENTS, nodes), nodes)
    for change in (
        {"credits": bench["credits"] - 1},
        {"in_flight": bench["in_flight"] - 1},
        {"command_bytes": 128},
    ):
        changed = reference(net, hosts, {**bench, **change}, EVENTS, nodes)
        # Not a matter of counting: the times the events have in common differ.
        assert difference(core, changed, nodes) > 1e-6, change


@pytest.mark.parametrize("fabric", ["tapered", "tree"])
def test_eager_sends_change_push_and_not_pull(fabric):
    # TCP (eager) against MPI (rendezvous) on the same scenario: PUSH times differ, in daqnet
    # and in the reference alike, and the reference of the other semantics disagrees with
    # daqnet; PULL sends only when asked, so both give the same run.
    nodes = 6 if fabric == "tapered" else 8
    push = {"protocol": "push", "credits": 2, "in_flight": 1}
    _, mpi, net, hosts = run_daqnet(scenario(fabric, nodes, push, EVENTS, nodes))
    _, tcp, _, _ = run_daqnet(scenario(fabric, nodes, {**push, "transport": "tcp"}, EVENTS, nodes))
    assert list(mpi.built_at) != list(tcp.built_at)
    assert not agree(tcp, reference(net, hosts, push, EVENTS, nodes), nodes)
    assert agree(tcp, reference(net, hosts, {**push, "transport": "tcp"}, EVENTS, nodes), nodes)
    pull = {"protocol": "pull", "credits": 2, "in_flight": 1}
    _, a, _, _ = run_daqnet(scenario(fabric, nodes, pull, EVENTS, nodes))
    _, b, _, _ = run_daqnet(scenario(fabric, nodes, {**pull, "transport": "tcp"}, EVENTS, nodes))
    assert list(a.built_at) == list(b.built_at)


def test_tied_process_caps_have_no_single_answer():
    # PULL with a process cap on one switch: two fragments ending at the same instant free
    # tokens that the next transfers race for, and the order decides the run. The reference
    # differs from itself with its ties taken the other way, so daqnet (whose order among
    # equal times is floating-point noise) is not compared there; unequal sizes remove the
    # ties (CASES[4]).
    bench = {"protocol": "pull", "credits": 3, "in_flight": 2, "max_in_flight": 2}
    _, _, net, hosts = run_daqnet(scenario("switch", 4, bench, EVENTS, 4))
    a = reference(net, hosts, bench, EVENTS, 4)
    b = reference(net, hosts, bench, EVENTS, 4, last_first=True)
    assert of_reference(a, 4) != of_reference(b, 4)


def test_reference_max_min():
    # Progressive filling on a textbook case: two flows share link 0 (10), one of them also
    # link 1 (4) with a third flow: 2, 2 on link 1, then 8 for the flow alone on link 0.
    rates = max_min_rates({0: ([0, 1], None), 1: ([0], None), 2: ([1], None)}, {0: 10, 1: 4})
    assert rates == {0: 2, 1: 8, 2: 2}
    assert max_min_rates({0: ([0], Fraction(1)), 1: ([0], None)}, {0: 10}) == {0: 1, 1: 9}
    assert max_min_rates({0: ([], None)}, {}) == {0: None}


# -- closed forms -----------------------------------------------------------------------------
C = Fraction(100 * 10**9, 8)  # bytes/s of a 100 Gb/s link
L = Fraction(LATENCY)


@pytest.mark.parametrize("protocol", ["push", "pull"])
def test_one_readout_unit_to_one_builder(protocol):
    # Two nodes on one switch, one credit, one fragment at a time; the window closes with the
    # first event. Builder 0 shares the EM's host: assigned at 0, it takes its own fragment at
    # once and posts the receive from RU 1. RU 1 hears of the event from the EM (PUSH) or of
    # the request from builder 0 (PULL) one command later, d = 2L + command/C; the fragment
    # then waits the route's latency 2L and crosses at C: built at d + 2L + (F + M)/C.
    frag, meta, cmd = SIZES["fragment_bytes"], SIZES["meta_bytes"], SIZES["command_bytes"]
    bench = {"protocol": protocol, "credits": 1, "in_flight": 1}
    doc, core, net, hosts = run_daqnet(scenario("switch", 2, bench, 1, 0))
    d = 2 * L + cmd / C
    expected = d + 2 * L + Fraction(frag + meta) / C
    r = reference(net, hosts, bench, 1, 0)
    assert r.built[0].builder == 0 and r.built[0].latency == expected and r.window_end == expected
    assert core.builder[0] == 0 and float(core.latency[0]) == pytest.approx(
        float(expected), rel=1e-12
    )
    assert doc["latency_seconds"]["max"] == pytest.approx(float(expected), rel=1e-12)
    # Payload by then: both of event 0's fragments and what RU 0's fragment to builder 1
    # moved since it started at 2d + 2L (builder 1's credit and then its assignment crossed
    # the switch; PULL: its request too, 3d). Builder 1's own fragment, copied at once, counts
    # once its event is built, not yet.
    start = (2 if protocol == "push" else 3) * d + 2 * L
    moved = max(Fraction(0), (expected - start) * C) * frag / (frag + meta)
    assert r.window_payload == 2 * frag + moved
    assert doc["window_payload_bytes"] == pytest.approx(float(2 * frag + moved), rel=1e-12)


def test_many_readout_units_to_one_builder_reference():
    # The closed form of test_protocol_sim.test_one_builder_closed_form, for the reference:
    # N nodes on one switch, one credit, all fragments at once; builder 0's N-1 remote
    # fragments share its link and end together at d + 2L + (N-1)(F + M)/C.
    n, frag, meta = 6, 200_000, 1000
    bench = {
        "protocol": "push",
        "credits": 1,
        "schedule": "all-at-once",
        "fragment_bytes": frag,
        "meta_bytes": meta,
    }
    _, _, net, hosts = run_daqnet(scenario("switch", n, bench, 1, 0))
    r = reference(net, hosts, bench, 1, 0)
    d = 2 * L + SIZES["command_bytes"] / C
    expected = d + 2 * L + (n - 1) * Fraction(frag + meta) / C
    assert [(e.builder, e.latency) for e in r.built] == [(0, expected)]
    later = ((n - 1) * (frag + meta) - C * d) * Fraction(frag, frag + meta)
    assert r.window_payload == n * frag + (n - 1) * later  # only builder 0's own fragment


@pytest.mark.parametrize("transport", ["mpi", "tcp"])
def test_a_window_in_events_opens_and_closes_as_its_edge_events_are_built(transport):
    # Over TCP, an event built as its builder posts a receive for a fragment already in
    # (a message, not a flow ending) took its window edge at the next instant: the window
    # opened 0.07 ms late and closed 0.2 ms late on 4 nodes (8.5 % long, 42.33 Gb/s per
    # node instead of 42.74). The edges are the build times of events 4 and 12 (counted
    # from 1), whatever the transport.
    bench = {"protocol": "push", "credits": 1, "in_flight": 1, "transport": transport}
    sc = Scenario(
        {
            "fabric": {**FABRICS["switch"], "latency_seconds": 1e-4},
            "placement": {"ranks": 4},
            "bench": {**SIZES, **bench},
            "simulate": {"mode": "protocol", "events": 8, "warmup_events": 4},
        },
        source="<edges>",
    )
    _, core, _, _ = run_daqnet(sc)
    built = sorted(float(t) for t in core.built_at)
    assert core.window_start_seconds == built[3] and core.window_end_seconds == built[11]
