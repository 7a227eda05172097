"""Failure recovery of daqnet-evb (bench.recover, docs/bench.md "Failure recovery"): a
builder's rank killed or hung mid-run over TCP; the run goes on with the other builders."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

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
BU_RANK = 3


def _start(out: Path, *sets: str) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "daqnet", "bench", str(EXAMPLE), "--json", "--out", str(out)]
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


def _check_degraded(r: dict[str, Any], before: int) -> None:
    assert r["status"] == "degraded", r["errors"]
    assert r["errors"] == []
    assert [f["rank"] for f in r["failures"]] == [BU_RANK]
    f = r["failures"][0]
    assert f["role"] == "bu"
    assert f["recovery_seconds"] is not None and f["recovery_seconds"] < 2
    # Events were built after the failure, every one of them intact.
    em = next(u for u in r["units"] if u["unit"] == "em")
    assert em["rank"] == 0
    assert r["events_assigned"] > before
    assert r["lost_fragments"] == r["duplicate_fragments"] == r["corrupt_fragments"] == 0
    assert r["abandoned_events"] >= 0 and r["incomplete_events"] == 0
    # Abandoned events are never counted as built.
    assert r["events_built"] + r["abandoned_events"] <= r["events_assigned"]


@pytest.mark.xfail(
    strict=False,
    reason="MPICH hydra 5.0.2 with -disable-auto-cleanup still ends the survivors of a killed "
    "rank in about half of the runs (SIGUSR1 notice, then SIGKILL to every process group); "
    "daqnet-evb recovers when they are left running (docs/bench.md, Failure recovery)",
)
def test_killed_builder_is_recovered_from(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _start(out)
    before = _wait_for_events(out)
    pids = _rank_pids(out)
    assert sorted(pids) == [0, 1, 2, 3]
    os.kill(pids[BU_RANK], signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=90)
    assert proc.returncode == 0, stderr
    r = json.loads(stdout)
    _check_degraded(r, before)
    built_after = _em_events(out) - before
    assert built_after > 0
    assert json.loads((out / "result.json").read_text())["status"] == "degraded"
    assert "rank 3 lost" in (out / "launcher.log").read_text()


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
