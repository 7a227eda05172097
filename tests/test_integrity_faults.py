"""Every integrity counter of `daqnet bench` provoked: the test hooks of daqnet-evb lose,
delay and corrupt fragments of readout unit 0, and each is counted exactly once.

A counter that is only ever asserted to be zero would pass just as well if the event
builder never counted anything; here the hook reports how many fragments it touched (in
RU 0's rank file) and the result must name that many, in PUSH and PULL, over MPI and TCP.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_bench import _mpi_shm, bench

# warm-up 0: every event counts towards bench.events, so RU 0 sends a known number of
# fragments (the events plus those assigned while the last ones were built).
FIXED_RUN = ("bench.seconds=0", "bench.events=150", "bench.warmup_seconds=0")


def ru0(out: Path) -> dict:
    """Readout unit 0's fields from its rank's latest snapshot."""
    for path in out.glob("rank-*.json"):
        for u in json.loads(path.read_text())["units"]:
            if u["unit"] == "ru" and u["index"] == 0:
                return u
    raise AssertionError("no rank file holds RU 0")


@pytest.mark.parametrize("transport", ["mpi", "tcp"])
@pytest.mark.parametrize("protocol", ["push", "pull"])
def test_dropped_fragment_is_lost_once(tmp_path, protocol, transport):
    # The 100th fragment of RU 0 is never sent: its event can never be built.
    before = _mpi_shm()
    p, r = bench(
        tmp_path,
        *FIXED_RUN,
        f"bench.protocol={protocol}",
        f"bench.transport={transport}",
        "bench.fragment_timeout_seconds=0.5",
        env={"DAQNET_EVB_FAULTS": "fault_drop_every=100"},
    )
    assert p.returncode == 1, p.stderr
    assert ru0(tmp_path / "out")["fault_dropped_fragments"] == 1
    assert r["lost_fragments"] == 1
    assert r["duplicate_fragments"] == r["corrupt_fragments"] == 0
    assert r["status"] == "failed"
    assert any("fragment_timeout_seconds" in e and "from RU 0)" in e for e in r["errors"]), r
    assert "1 fragment(s) lost (from RU 0)" in p.stderr
    # Every other event was built: the run went on until its end.
    assert r["events_built"] >= 150
    assert not (_mpi_shm() - before)  # the failed run's MPI segments are gone (see shm.py)


@pytest.mark.parametrize("protocol", ["push", "pull"])
def test_fragment_delayed_past_the_timeout_is_lost_once(tmp_path, protocol):
    p, r = bench(
        tmp_path,
        *FIXED_RUN,
        f"bench.protocol={protocol}",
        "bench.fragment_timeout_seconds=0.5",
        env={"DAQNET_EVB_FAULTS": "fault_delay_every=100,fault_delay_ms=5000"},
    )
    assert p.returncode == 1, p.stderr
    assert ru0(tmp_path / "out")["fault_delayed_fragments"] == 1
    assert r["lost_fragments"] == 1
    assert r["duplicate_fragments"] == r["corrupt_fragments"] == 0


@pytest.mark.parametrize("transport", ["mpi", "tcp"])
def test_fragment_delayed_within_the_timeout_is_late_not_lost(tmp_path, transport):
    p, r = bench(
        tmp_path,
        *FIXED_RUN,
        f"bench.transport={transport}",
        "bench.fragment_timeout_seconds=5",
        env={"DAQNET_EVB_FAULTS": "fault_delay_every=100,fault_delay_ms=300"},
    )
    assert p.returncode == 0, p.stderr
    assert ru0(tmp_path / "out")["fault_delayed_fragments"] == 1
    assert r["lost_fragments"] == r["in_flight_fragments"] == 0
    assert r["duplicate_fragments"] == r["corrupt_fragments"] == 0
    assert r["events_built"] >= 150
    # The held-back event waited for its fragment: the builders' longest latency shows the
    # delay (the EM's window closed at 150 events, before this one was built), less the
    # moments between the RU and the builder hearing of the event.
    assert r["builder_latency_seconds"]["max"] >= 0.25


@pytest.mark.parametrize("transport", ["mpi", "tcp"])
@pytest.mark.parametrize("protocol", ["push", "pull"])
def test_each_corrupted_fragment_is_counted_once(tmp_path, protocol, transport):
    p, r = bench(
        tmp_path,
        *FIXED_RUN,
        f"bench.protocol={protocol}",
        f"bench.transport={transport}",
        env={"DAQNET_EVB_FAULTS": "fault_corrupt_every=7"},
    )
    assert p.returncode == 1
    corrupted = ru0(tmp_path / "out")["fault_corrupted_fragments"]
    assert corrupted >= 150 // 7
    assert r["corrupt_fragments"] == corrupted
    assert r["lost_fragments"] == r["duplicate_fragments"] == 0


def test_a_corrupted_fragment_sent_twice_is_one_corrupt_and_one_duplicate(tmp_path):
    # The copy of a damaged fragment failed the duplicate test (its checksum) and was taken
    # for the next event's fragment in that slot: 752 corrupt counted against 677 damaged.
    p, r = bench(
        tmp_path,
        *FIXED_RUN,
        "bench.drain_timeout_seconds=1",  # the last copy may find no receive: unmatched
        env={"DAQNET_EVB_FAULTS": "fault_corrupt_every=7,fault_duplicate_every=9"},
    )
    assert p.returncode == 1
    hooks = ru0(tmp_path / "out")
    assert hooks["fault_corrupted_fragments"] >= 150 // 7
    assert r["corrupt_fragments"] == hooks["fault_corrupted_fragments"]
    # Every copy that arrived is a duplicate (the last ones may still be on their way).
    assert 0 < r["duplicate_fragments"] <= hooks["fault_duplicated_fragments"]
    assert r["lost_fragments"] == 0
