"""Failure recovery of daqnet-evb (bench.recover, docs/bench.md "Failure recovery"): ranks
killed, hung or cut off mid-run over TCP, on loopback and with every rank in its own network
namespace; the run goes on without them, or stops, as the configuration says."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daqnet.bench.shm import mapped_segments

EXAMPLE = Path(__file__).parent.parent / "examples" / "bench-local.toml"
# 4 ranks in nodes of 2 processes: RU 0 and the EM on rank 0, BU 0 on rank 1, RU 1 on rank 2,
# BU 1 on rank 3 (a builder alone in its process, not the EM's).
SETS = [
    "bench.transport=tcp",
    "bench.recover=true",
    "bench.processes_per_node=2",
    "bench.seconds=4",
    "bench.warmup_seconds=0.1",
    "bench.fragment_bytes=65536",
    "bench.report_seconds=0.2",
    "bench.heartbeat_seconds=1",
]
BU_RANK, RU_RANK = 3, 2


def _start(out: Path, *sets: str, prepare: bool = False) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "daqnet", "bench", str(EXAMPLE), "--json", "--out", str(out)]
    if prepare:
        args.append("--prepare")
    for s in [*SETS, *sets]:
        args += ["--set", s]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _em_events(out: Path) -> int:
    try:
        doc = json.loads((out / "rank-0.json").read_text())
    except (OSError, ValueError):
        return -1
    em = [u for u in doc.get("units", []) if u["unit"] == "em"]
    return em[0]["events_done"] if em else -1


def _wait_for_events(out: Path, timeout: float = 30) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        n = _em_events(out)
        if n > 100:
            return n
        time.sleep(0.1)
    raise AssertionError("the run never reported built events")


def _rank_pids(out: Path) -> dict[int, int]:
    """rank -> pid of this run's daqnet-evb processes (MPICH's hydra sets PMI_RANK)."""
    pids = {}
    for proc in Path("/proc").iterdir():
        try:
            if (proc / "comm").read_text().strip() != "daqnet-evb":
                continue
            if str(out) not in (proc / "cmdline").read_text():
                continue
            env = dict(
                x.split("=", 1) for x in (proc / "environ").read_text().split("\0") if "=" in x
            )
            pids[int(env["PMI_RANK"])] = int(proc.name)
        except (OSError, ValueError, KeyError):
            continue
    return pids


def _mpi_segments(pids: dict[int, int]) -> set[str]:
    """The /dev/shm segments the MPI library mapped into these processes."""
    found: set[str] = set()
    for pid in pids.values():
        with contextlib.suppress(OSError):
            found |= mapped_segments(Path(f"/proc/{pid}/maps").read_text())
    return found


def _check_degraded(r: dict[str, Any], before: int, rank: int = BU_RANK, role: str = "bu") -> None:
    assert r["status"] == "degraded", r["errors"]
    assert r["errors"] == []
    assert [f["rank"] for f in r["failures"]] == [rank]
    f = r["failures"][0]
    assert f["role"] == role
    # From the rank's last word to the next event built: under 2 s (heartbeat_seconds = 1).
    assert f["recovery_seconds"] is not None and f["recovery_seconds"] < 2
    # Events were built after the failure, every one of them intact.
    em = next(u for u in r["units"] if u["unit"] == "em")
    assert em["rank"] == 0
    assert r["events_assigned"] > before
    assert r["lost_fragments"] == r["duplicate_fragments"] == r["corrupt_fragments"] == 0
    assert r["abandoned_events"] >= 0
    if "ru" not in role:
        assert r["incomplete_events"] == 0
    else:  # every event built after the readout unit's death lacks its fragment
        assert r["incomplete_events"] > 0
        assert r["incomplete_events"] <= r["events_built"]
    # Abandoned events are never counted as built.
    assert r["events_built"] + r["abandoned_events"] <= r["events_assigned"]


def test_killed_builder_is_recovered_from(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _start(out)
    before = _wait_for_events(out)
    pids = _rank_pids(out)
    assert sorted(pids) == [0, 1, 2, 3]
    segments = _mpi_segments(pids)
    os.kill(pids[BU_RANK], signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=90)
    assert proc.returncode == 0, stderr
    r = json.loads(stdout)
    _check_degraded(r, before)
    # The survivors leave without MPI_Finalize: they remove MPICH's segments themselves, or
    # each such run would leave its 4 MiB in /dev/shm (RAM) for good.
    assert segments, "no MPICH shared-memory segment seen (has MPICH changed its names?)"
    assert not [p for p in segments if Path(p).exists()]
    built_after = _em_events(out) - before
    assert built_after > 0
    assert json.loads((out / "result.json").read_text())["status"] == "degraded"
    assert "rank 3 lost" in (out / "launcher.log").read_text()


def test_rank_dead_in_start_up_stops_the_run_at_once(tmp_path: Path) -> None:
    # A rank that dies before MPI_Init is done leaves the others inside it, where no
    # heartbeat runs: the run waited out its silence limit (77 s) and said "Killed". It now
    # stops a period and a heartbeat later, naming the rank, with no process or MPI segment
    # left. (Rank 3 kills itself before it starts: a rank killed at once, every time.)
    from daqnet import Scenario
    from daqnet.bench.launch import run
    from daqnet.bench.shm import _segments_in_shm
    from daqnet.errors import DaqnetError

    out = tmp_path / "out"
    before = _segments_in_shm()
    die = 'if [ "${PMI_RANK:-$SLURM_PROCID}" = 3 ]; then kill -9 $$; fi; exec "$@"'
    start = time.monotonic()
    with pytest.raises(DaqnetError) as err:
        run(Scenario.load(str(EXAMPLE), SETS), out, wrapper=["/bin/sh", "-c", die, "x"])
    took = time.monotonic() - start
    said = str(err.value)
    assert (
        "rank 3 (exit status 137, SIGKILL) ended during the start-up, before the run began" in said
    )
    assert "bench.recover goes on without ranks lost once the run has started" in said
    assert took < 30, took
    assert not _rank_pids(out)
    assert not _segments_in_shm() - before


def test_hung_builder_is_declared_dead_after_heartbeat_seconds(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _start(out)
    before = _wait_for_events(out)
    pids = _rank_pids(out)
    os.kill(pids[BU_RANK], signal.SIGSTOP)  # alive, connections open, silent
    try:
        stdout, _ = proc.communicate(timeout=90)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pids[BU_RANK], signal.SIGKILL)
    log = (out / "launcher.log").read_text()
    assert "heartbeat_seconds" in log, log
    r = json.loads(stdout)
    _check_degraded(r, before)
    # Declared dead after about heartbeat_seconds of silence, not at once.
    assert r["failures"][0]["detected_at_seconds"] > 0


def test_killed_readout_unit_leaves_later_events_incomplete(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _start(out)
    before = _wait_for_events(out)
    os.kill(_rank_pids(out)[RU_RANK], signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=90)
    assert proc.returncode == 0, stderr
    r = json.loads(stdout)
    _check_degraded(r, before, RU_RANK, "ru")
    # Built without RU 1: the builders' payload is RU 0's alone from then on.
    built = sum(u["events_built"] for u in r["units"] if u["unit"] == "bu")
    assert r["incomplete_events"] < built


def test_killed_rank_with_both_units_under_pull(tmp_path: Path) -> None:
    # One process per node: rank 2 holds RU 2 and BU 2; the builders pull.
    out = tmp_path / "out"
    proc = _start(out, "bench.processes_per_node=1", "bench.protocol=pull")
    before = _wait_for_events(out)
    os.kill(_rank_pids(out)[2], signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=90)
    assert proc.returncode == 0, stderr
    _check_degraded(json.loads(stdout), before, 2, "ru+bu")


def test_readout_unit_death_stops_the_run_when_asked(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _start(out, "bench.on_ru_failure=stop", "bench.seconds=20")
    _wait_for_events(out)
    os.kill(_rank_pids(out)[RU_RANK], signal.SIGKILL)
    t0 = time.monotonic()
    stdout, _ = proc.communicate(timeout=90)
    assert time.monotonic() - t0 < 10  # stopped, not run to its 20 s
    assert proc.returncode == 1
    r = json.loads(stdout)
    assert r["status"] == "failed"
    assert [(f["rank"], f["role"]) for f in r["failures"]] == [(RU_RANK, "ru")]
    assert r["errors"] == [
        'ranks 0, 1, 3: rank 2 (readout unit 1) died: the run stops (bench.on_ru_failure = "stop")'
    ]
    assert r["duplicate_fragments"] == r["corrupt_fragments"] == 0
    assert r["events_built"] > 0  # what was measured is kept


def test_event_manager_death_ends_the_run_with_results_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _start(out, "bench.seconds=20")
    _wait_for_events(out)
    os.kill(_rank_pids(out)[0], signal.SIGKILL)
    stdout, _ = proc.communicate(timeout=90)
    assert proc.returncode == 1
    r = json.loads(stdout)
    assert r["status"] == "failed"
    assert "ranks 1, 2, 3: the event manager's rank 0 died: the run ends" in r["errors"]
    assert not any("launcher exited" in e for e in r["errors"])
    for rank in (1, 2, 3):  # the survivors wrote their results
        assert json.loads((out / f"rank-{rank}.json").read_text())["status"] == "error"
    assert r["duplicate_fragments"] == r["corrupt_fragments"] == 0


# --- every rank in its own network namespace, joined by a bridge (a cluster in miniature) ---


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@pytest.fixture
def namespaces() -> Iterator[str]:
    """Namespaces PREFIX-r0..3 (eth0, 198.18.0.1-4/24: RFC 2544's benchmarking range) on a
    bridge in PREFIX-br; the prefix is returned and everything removed afterwards."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        pytest.skip("network namespaces need root and iproute2 (ip)")
    prefix = f"dqfr{os.getpid() % 100000}"
    made = []
    try:
        _ip("netns", "add", f"{prefix}-br")
        made.append(f"{prefix}-br")
        _ip("-n", f"{prefix}-br", "link", "add", "br0", "type", "bridge")
        _ip("-n", f"{prefix}-br", "link", "set", "br0", "up")
        for i in range(4):
            ns = f"{prefix}-r{i}"
            _ip("netns", "add", ns)
            made.append(ns)
            _ip("link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", f"p{i}",
                "netns", f"{prefix}-br")  # fmt: skip
            _ip("-n", f"{prefix}-br", "link", "set", f"p{i}", "master", "br0", "up")
            _ip("-n", ns, "addr", "add", f"198.18.0.{i + 1}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield prefix
    finally:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)


def _launch_in_namespaces(out: Path, prefix: str, *sets: str) -> subprocess.Popen[str]:
    """daqnet bench --prepare, then the ranks by hand as on a cluster: MPICH's mpiexec with
    -disable-auto-cleanup, each rank under the supervising shell daqnet bench uses and in
    the namespace of its rank (ip netns exec keeps the PMI descriptor hydra passes)."""
    prep = _start(out, "bench.tcp_interface=eth0", *sets, prepare=True)
    _, err = prep.communicate(timeout=60)
    assert prep.returncode == 0, err
    from daqnet.bench import executable, mpiexec

    script = 'trap "" USR1; ip netns exec "$0-r$PMI_RANK" "$@"; exit $?'
    cmd = [mpiexec(), "-n", "4", "-disable-auto-cleanup", "/bin/sh", "-c", script, prefix,
           executable(), str(out / "run.cfg"), "--out", str(out)]  # fmt: skip
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _collect(out: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "daqnet", "collect", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_killed_readout_unit_in_network_namespaces(tmp_path: Path, namespaces: str) -> None:
    out = tmp_path / "out"
    proc = _launch_in_namespaces(out, namespaces)
    before = _wait_for_events(out)
    os.kill(_rank_pids(out)[RU_RANK], signal.SIGKILL)
    proc.communicate(timeout=90)
    r = _collect(out)
    _check_degraded(r, before, RU_RANK, "ru")
    # The fragments went over the namespaces' links, not loopback.
    sent = subprocess.run(
        ["ip", "-n", f"{namespaces}-r0", "-s", "-j", "link", "show", "eth0"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(sent.stdout)[0]["stats64"]["tx"]["bytes"] > 10 * 65536


def test_builder_cut_off_in_network_namespaces(tmp_path: Path, namespaces: str) -> None:
    # The cable of rank 3 (BU 1) is pulled: no reset reaches anyone, only silence.
    out = tmp_path / "out"
    proc = _launch_in_namespaces(out, namespaces)
    before = _wait_for_events(out)
    _ip("-n", f"{namespaces}-br", "link", "set", f"p{BU_RANK}", "down")
    try:
        proc.communicate(timeout=90)
    finally:
        with contextlib.suppress(ProcessLookupError, KeyError):
            os.kill(_rank_pids(out)[BU_RANK], signal.SIGKILL)
    r = _collect(out)
    _check_degraded(r, before)
    assert 0.9 < r["failures"][0]["silent_seconds"] < 2  # heartbeat_seconds = 1
