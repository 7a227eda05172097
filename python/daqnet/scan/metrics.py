"""What a scan measures: the columns each simulation mode gives a row, and which way is better."""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "BENCH_STATS",
    "HIGHER_IS_BETTER",
    "MEASURED_MODES",
    "METRICS",
    "PREDICTED",
    "RATIOS",
    "RUN_COLUMNS",
    "STATS",
    "best_row",
    "metric_column",
]

#: What each measured point repeats: one value per run of daqnet bench, summarised over the
#: --repeat runs as NAME_min, NAME_median and NAME_max (an OSU/IMB-like table).
BENCH_STATS = (
    "gbps_per_host",
    "throughput_gbps",
    "events_per_second",
    "latency_p50_seconds",
    "latency_p99_seconds",
    "latency_max_seconds",
)
STATS = ("min", "median", "max")
#: The protocol simulation's prediction beside a measurement (mode "compare").
PREDICTED = (
    "gbps_per_host",
    "throughput_gbps",
    "events_per_second",
    "latency_p50_seconds",
    "latency_p99_seconds",
)
#: measured median / predicted, for these metrics (mode "compare").
RATIOS = ("gbps_per_host", "events_per_second", "latency_p50_seconds")
#: Integrity counters of daqnet-evb, summed over a point's runs.
_INTEGRITY = ("lost_fragments", "duplicate_fragments", "corrupt_fragments")
_MEASURED = (
    "repeats",
    *(f"{m}_{s}" for m in BENCH_STATS for s in STATS),
    "events_built_median",
    *_INTEGRITY,
)
#: Scan modes whose points run the real event builder (one after another, never at once).
MEASURED_MODES = frozenset({"bench", "compare"})
#: The columns of runs.csv (one row per run of a measured point), after point, repeat and
#: the varied keys.
RUN_COLUMNS = (
    "status",
    *BENCH_STATS,
    "events_built",
    "measured_seconds",
    *_INTEGRITY,
    "in_flight_fragments",
    "ranks",
    "nodes",
    "transport",
    "dir",
)

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
    # daqnet bench per point, --repeat times
    "bench": (*_MEASURED, "warning"),  # warning: integrity counters above 0
    # daqnet bench and the protocol simulation of the same point, side by side
    "compare": (
        *_MEASURED,
        *(f"predicted_{m}" for m in PREDICTED),
        *(f"ratio_{m}" for m in RATIOS),
        "warning",  # of the measurement, then of the prediction ("prediction: ...")
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
    | {f"{m}_{s}" for m in ("gbps_per_host", "throughput_gbps", "events_per_second") for s in STATS}
    | {f"predicted_{m}" for m in ("gbps_per_host", "throughput_gbps", "events_per_second")}
    | {"events_built_median", "repeats", "ratio_gbps_per_host", "ratio_events_per_second"}
)


def metric_column(mode: str, metric: str) -> str:
    """The column --metric NAME picks: in a measured scan a metric that is repeated means
    its median (gbps_per_host → gbps_per_host_median)."""
    if mode in MEASURED_MODES and metric in BENCH_STATS:
        return f"{metric}_median"
    return metric


def best_row(rows: list[dict[str, Any]], metric: str) -> dict[str, Any] | None:
    """The first row (in point order) with the best value of `metric`; of a measured scan,
    among the rows whose runs built every fragment intact, while there are any (a run with
    corrupt or duplicate fragments was picked as the best)."""
    scored = [
        r for r in rows if isinstance(r.get(metric), (int, float)) and math.isfinite(r[metric])
    ]
    damage = ("lost_fragments", "duplicate_fragments", "corrupt_fragments")
    intact = [r for r in scored if not any(r.get(k) for k in damage)]
    scored = intact or scored
    if not scored:
        return None
    pick = max if metric in HIGHER_IS_BETTER else min
    target = pick(r[metric] for r in scored)
    return next(r for r in scored if r[metric] == target)
