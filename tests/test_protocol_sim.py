"""The protocol simulation: conservation, limits, determinism, a closed form, bad input."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from daqnet import DaqnetError, Scenario
from daqnet.simulate import simulate_protocol


def scenario(bench=None, simulate=None, fabric=None, placement=None, workload=None):
    data = {
        "fabric": {"radix": 8, "hosts": 16, "latency_seconds": 1e-7, **(fabric or {})},
        "placement": placement or {},
        "workload": workload or {},
        "bench": {"fragment_bytes": 65536, "meta_bytes": 1024, **(bench or {})},
        "simulate": {"mode": "protocol", "events": 60, **(simulate or {})},
    }
    return Scenario(data, source="<protocol test>")


CASES = [
    {"protocol": "push"},
    {"protocol": "pull"},
    {"protocol": "pull", "max_in_flight": 3, "in_flight": 4, "credits": 3},
    {"protocol": "push", "max_in_flight": 2, "credits": 2, "in_flight": 2},
    {"protocol": "push", "fragment_distribution": "lognormal", "fragment_sigma": 0.5},
    {"protocol": "pull", "processes_per_node": 2, "max_in_flight": 2},
]


@pytest.mark.parametrize("schedule", ["barrel", "random", "all-at-once"])
@pytest.mark.parametrize("bench", CASES)
def test_conservation_and_limits(bench, schedule):
    r = simulate_protocol(scenario(bench, workload={"schedule": schedule}))
    b = {"credits": 2, "in_flight": 8, "max_in_flight": 0, **bench}
    nodes = r["nodes"]
    assert r["events_built"] == 60 and r["status"] == "finished"
    units = r["units"]
    sent = sum(u.get("bytes_out", 0) for u in units)
    received = sum(u.get("bytes_in", 0) for u in units)
    built = sum(u.get("built_bytes", 0) for u in units)
    frags_in = sum(u.get("fragments_in", 0) for u in units)
    # Every fragment sent arrives; every event has one fragment per RU (+ meta-data).
    assert sent == pytest.approx(received, rel=1e-12)
    assert frags_in == 60 * nodes
    assert received == pytest.approx(built + 60 * nodes * 1024, rel=1e-12)
    if bench.get("fragment_distribution", "fixed") == "fixed":
        assert built == 60 * nodes * 65536
    # Bytes over the hosts' links = bytes of the fragments that left their host.
    up = sum(ln["bytes"] for ln in r["links"] if ln["class"] == "host->leaf")
    down = sum(ln["bytes"] for ln in r["links"] if ln["class"] == "leaf->host")
    assert up == pytest.approx(down, rel=1e-12)
    assert up == pytest.approx(sent * (nodes - 1) / nodes, rel=0.05)  # one local fragment in N
    # Limits never exceeded.
    lim = r["limits"]
    assert lim["max_busy_slots"] <= b["credits"]
    per_gather = nodes if schedule == "all-at-once" else b["in_flight"]
    assert lim["max_gather_in_flight"] <= per_gather
    if b["max_in_flight"]:
        # A transfer of an event older than all of its unit's transfers may pass the cap
        # (so shared caps cannot deadlock): at most one per assigned event, and one for the
        # builder's oldest gather. The cap must still bind, see test_process_cap_binds.
        assert lim["max_process_in_flight"] <= b["max_in_flight"] + nodes * b["credits"] + 1
    # The time series adds up to the events built.
    ts = r["timeseries"]
    assert sum(p["events"] for p in ts) == 60
    assert sum(p["built_bytes"] for p in ts) == pytest.approx(built, rel=1e-12)
    # Throughput is what the events carry over the window.
    assert r["throughput_gbps"] == pytest.approx(built * 8 / r["window_seconds"] / 1e9, rel=1e-9)


def test_limits_bind():
    # The checks above would pass vacuously if limits were never reached: they are.
    r = simulate_protocol(scenario({"credits": 3, "in_flight": 4}))
    assert r["limits"]["max_busy_slots"] == 3
    assert r["limits"]["max_gather_in_flight"] == 4


def test_process_cap_binds():
    free = simulate_protocol(scenario({"protocol": "push"}))
    capped = simulate_protocol(scenario({"protocol": "push", "max_in_flight": 2}))
    assert capped["limits"]["max_process_in_flight"] < free["limits"]["max_process_in_flight"]
    assert capped["limits"]["max_process_in_flight"] <= 4


def test_deterministic_for_a_seed():
    sc = {"protocol": "pull", "fragment_distribution": "normal", "fragment_sigma": 0.3}
    a = simulate_protocol(scenario(sc, workload={"schedule": "random", "seed": 4}))
    b = simulate_protocol(scenario(sc, workload={"schedule": "random", "seed": 4}))
    c = simulate_protocol(scenario(sc, workload={"schedule": "random", "seed": 5}))
    strip = ("solver",)
    assert json.dumps({k: v for k, v in a.items() if k not in strip}) == json.dumps(
        {k: v for k, v in b.items() if k not in strip}
    )
    assert a["latency_seconds"] != c["latency_seconds"]


@pytest.mark.parametrize("protocol", ["push", "pull"])
def test_one_builder_closed_form(protocol):
    # One event, N nodes on one leaf, every fragment at once: the N-1 remote fragments
    # start together once the command (latency 2L + command/C) and then the data's route
    # latency (2L) are paid, share the builder's link equally, and end together.
    n, frag, meta, cmd, lat, gbps = 6, 200_000, 1000, 64, 3e-7, 100.0
    r = simulate_protocol(
        scenario(
            {"protocol": protocol, "fragment_bytes": frag, "meta_bytes": meta, "credits": 1},
            {"events": 1},
            fabric={"radix": 16, "hosts": 8, "latency_seconds": lat, "link_gbps": gbps},
            placement={"ranks": n},
            workload={"schedule": "all-at-once"},
        )
    )
    c = gbps * 1e9 / 8
    expected = 2 * lat + cmd / c + 2 * lat + (n - 1) * (frag + meta) / c
    assert r["latency_seconds"]["max"] == pytest.approx(expected, rel=1e-12)
    assert r["throughput_gbps"] == pytest.approx(n * frag * 8 / expected / 1e9, rel=1e-12)


def test_injection_limit_bounds_the_throughput():
    # An injection limit of 25 Gb/s per NIC bounds what a node sends; its own fragment of
    # every event stays local (free), so a node builds at most 25 · N/(N-1) Gb/s.
    sc = {"workload": {"schedule": "all-at-once"}}
    base = simulate_protocol(scenario(simulate={"events": 80}, **sc))
    slow = simulate_protocol(scenario(simulate={"events": 80, "injection_gbps": 25.0}, **sc))
    bound = 25 * 16 / 15
    assert slow["gbps_per_host"] <= bound * (1 + 1e-9)
    assert slow["gbps_per_host"] > 0.8 * bound
    assert base["gbps_per_host"] > 1.5 * bound


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bench": {"mode": "time-frames", "senders": 2, "receivers": 2}}, "event-manager"),
        ({"simulate": {"warmup_events": 60}}, "warmup_events"),
        ({"bench": {"ranks": 40}}, "bench.ranks = 40"),
        ({"bench": {"processes_per_node": 3}}, "processes_per_node"),
        ({"bench": {"meta_bytes": 10}}, "meta_bytes"),
    ],
)
def test_bad_input_one_clear_error(change, message):
    with pytest.raises(DaqnetError, match=message):
        simulate_protocol(scenario(**change))


def test_cli_bad_input_and_interrupt(tmp_path, examples_dir):
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "daqnet",
            "simulate",
            str(examples_dir / "lhcb-540.toml"),
            "--set",
            "simulate.mode=protocol",
            "--set",
            "simulate.events=0",
        ],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "simulate.events" in bad.stderr
    assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr

    out = tmp_path / "out"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daqnet",
            "simulate",
            str(examples_dir / "lhcb-540.toml"),
            "--set",
            "fabric.hosts=72",
            "--set",
            "simulate.mode=protocol",
            "--set",
            "simulate.events=10000000",
            "--json",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    time.sleep(3)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    doc = json.loads(stdout)
    assert doc["interrupted"] and 0 < doc["events_built"] < 10000000
    assert json.loads((out / "result.json").read_text())["events_built"] == doc["events_built"]
    assert np.isfinite(doc["throughput_gbps"])


@pytest.mark.parametrize("protocol", ["push", "pull"])
def test_incremental_equals_full_recompute(protocol):
    # Recomputing only what a change touches gives the same run as re-solving everything.
    sc = scenario(
        {"protocol": protocol, "fragment_distribution": "lognormal", "credits": 3},
        {"events": 40},
        fabric={"radix": 8, "hosts": 32, "taper": "2:1"},
        workload={"schedule": "random"},
    )
    fast = simulate_protocol(sc)
    slow = simulate_protocol(sc, full_recompute=True)
    assert fast["events_built"] == slow["events_built"] == 40
    np.testing.assert_allclose(fast["total_seconds"], slow["total_seconds"], rtol=1e-9)
    for a, b in zip(fast["units"], slow["units"], strict=True):
        assert a.keys() == b.keys()
        for k in a:
            assert a[k] == (pytest.approx(b[k], rel=1e-9) if isinstance(b[k], float) else b[k])
    assert fast["solver"]["flows_solved"] < slow["solver"]["flows_solved"]
