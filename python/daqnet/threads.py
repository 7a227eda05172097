"""How many threads the C++ core may use: by default every core this process may run on."""

from __future__ import annotations

import os

from .errors import DaqnetError

__all__ = ["available_cores", "resolve_threads"]


def available_cores() -> int:
    """Cores this process may run on (its affinity mask, e.g. under srun or taskset)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def resolve_threads(threads: int | None, what: str = "threads") -> int:
    """`threads` as a count: None or 0 means every available core."""
    if threads is None or threads == 0:
        return available_cores()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise DaqnetError(f"{what} = {threads!r}: expected a whole number >= 1 (0: every core)")
    return threads
