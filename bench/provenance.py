"""What every benchmark records beside its figures, so that a README figure can be traced to
a run: the commit, the machine, peak memory, and repeated timings as median and spread.

Benchmarks import it with ``sys.path.insert(0, <repo>/bench)``; it depends on nothing but
the standard library and numpy.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent

__all__ = ["git_commit", "machine", "maxrss_mib", "spread", "timed", "write_json"]


def machine() -> dict[str, Any]:
    """Platform, CPU model, core count and library versions."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count()
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "nproc": os.cpu_count(),
        "cores_available": cores,
        "cpu_model": model,
    }


def git_commit(own_dir: str) -> dict[str, Any]:
    """HEAD, and whether files outside the benchmark's own directory have changes."""

    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=REPO, capture_output=True, text=True, check=False
            ).stdout.strip()
        except OSError:
            return ""

    return {
        "commit": git("rev-parse", "HEAD") or "unknown",
        "dirty": bool(git("status", "--porcelain", "--", ".", f":!{own_dir}")),
    }


def maxrss_mib() -> float:
    """Peak resident memory of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def timed(fn: Callable[[], Any], reps: int, warmup: int = 0) -> tuple[list[float], Any]:
    """Wall times of `reps` calls after `warmup` untimed ones, and the last result."""
    for _ in range(warmup):
        fn()
    times, result = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return times, result


def spread(times: list[float]) -> dict[str, Any]:
    """Median, min, max and every sample."""
    return {
        "median": statistics.median(times),
        "min": min(times),
        "max": max(times),
        "samples": list(times),
    }


def write_json(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {path}")
