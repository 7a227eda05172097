"""The benchmarks' deterministic check modes: results only, never timings."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHES = sorted((Path(__file__).resolve().parents[1] / "bench").glob("*/run.py"))


@pytest.mark.parametrize("script", BENCHES, ids=[p.parent.name for p in BENCHES])
def test_bench_check_mode(script):
    r = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok" in r.stdout
    # Short single runs measure nothing worth a verdict: no "met" / "NOT met" in check mode.
    assert not re.search(r"\bmet\b", r.stdout), r.stdout
