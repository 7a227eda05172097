"""Where a result comes from: the daqnet version and commit it was built from, the machine
and the date. Every result document a command writes carries it as ``provenance``, so that
a figure in a report can be traced to the code and the machine that made it."""

from __future__ import annotations

import datetime
import importlib
import os
import platform
import socket
from pathlib import Path
from typing import Any

from .threads import available_cores

__all__ = ["build_commit", "provenance"]


def build_commit() -> tuple[str, bool | None]:
    """The git commit this installation was built from and whether its tracked files had
    changes; ("unknown", None) for a build outside a git checkout or without the record."""
    try:  # written by the build (cmake/build_info.py.in)
        info = importlib.import_module("daqnet._build_info")
    except ImportError:  # pragma: no cover - only from a source tree without a build
        return "unknown", None
    commit = str(getattr(info, "COMMIT", "") or "")
    return (commit, bool(getattr(info, "DIRTY", False))) if commit else ("unknown", None)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def provenance() -> dict[str, Any]:
    """The daqnet version, build commit, this machine and the date (UTC, ISO 8601) now."""
    from . import __version__

    commit, dirty = build_commit()
    return {
        "daqnet_version": __version__,
        "commit": commit,
        "commit_dirty": dirty,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cores": available_cores(),
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
    }
