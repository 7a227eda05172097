"""What a scan measures: the columns each simulation mode gives a row, and which way is better."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["HIGHER_IS_BETTER", "METRICS", "best_row"]

#: The columns each ``[simulate] mode`` contributes to a row, from simulate()'s result.
METRICS: dict[str, tuple[str, ...]] = {
    "steps": (
        "gbps_per_host",
        "ideal_gbps_per_host",
        "slowdown",
        "total_seconds",
        "ideal_seconds",
        "steps_total",
        "steps_done",
    ),
    "protocol": (
        "gbps_per_host",
        "network_gbps_per_host",
        "throughput_gbps",
        "events_per_second",
        "events_built",
        "window_seconds",
        "latency_p50_seconds",
        "latency_p99_seconds",
        "latency_max_seconds",
        "warning",  # why the point may not be the steady state ("" when it is)
    ),
}
#: Metrics where a larger value is better; for all others (times, slowdown) smaller is.
HIGHER_IS_BETTER = frozenset(
    {
        "gbps_per_host",
        "ideal_gbps_per_host",
        "network_gbps_per_host",
        "throughput_gbps",
        "events_per_second",
        "events_built",
        "steps_total",
        "steps_done",
    }
)


def best_row(rows: list[dict[str, Any]], metric: str) -> dict[str, Any] | None:
    """The first row (in point order) with the best value of `metric`."""
    scored = [
        r for r in rows if isinstance(r.get(metric), (int, float)) and math.isfinite(r[metric])
    ]
    if not scored:
        return None
    pick = max if metric in HIGHER_IS_BETTER else min
    target = pick(r[metric] for r in scored)
    return next(r for r in scored if r[metric] == target)
