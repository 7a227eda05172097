import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def examples_dir() -> Path:
    return ROOT / "examples"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With DAQNET_REQUIRE_ALL_TESTS=1 (set by .ci/run) a skipped test fails: CI installs
    every optional tool, so a skip there means something is missing."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("DAQNET_REQUIRE_ALL_TESTS") == "1":
        report.outcome = "failed"
        report.longrepr = f"skipped under DAQNET_REQUIRE_ALL_TESTS=1: {report.longrepr}"
