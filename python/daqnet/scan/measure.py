"""Measured points: the real event builder (daqnet bench) run `repeat` times per point, one
run at a time, summarised as min/median/max, optionally beside the protocol simulation of
the same scenario (docs/scan.md, "Measured scans").

Benchmarks never run at once, whatever --jobs or MPI ranks: two event builders on the same
cores and links would measure each other. A point counts as done only when all its runs
finished; a run interrupted by Ctrl-C ends the scan without that point's row (its run
directories stay on disk).
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import USER_ERRORS, DaqnetError
from .metrics import BENCH_STATS, PREDICTED, RATIOS, RUN_COLUMNS, STATS

if TYPE_CHECKING:
    from ..bench import BenchResult
    from ..scenario import Scenario
    from .plan import Plan, Point

__all__ = ["BenchRunner", "measure_point", "run_dir", "summarize"]

RUNS_DIR = "runs"  # under the scan's output directory: one daqnet bench --out per run


def run_dir(out: Path, index: int, repeat: int) -> Path:
    return out / RUNS_DIR / f"point-{index:04d}-run-{repeat}"


def _finite(x: Any) -> float | int | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return x if math.isfinite(x) else None


def builders(scenario: Scenario) -> int:
    """Nodes that build events (the denominator of gbps_per_host): one BU per node, or the
    receivers of time-frames mode."""
    from ..bench import bench_ranks

    b = scenario["bench"]
    if b["mode"] == "time-frames":
        return int(b["receivers"])
    return bench_ranks(scenario) // int(b["processes_per_node"])


def run_row(result: BenchResult, nodes: int) -> dict[str, Any]:
    """One run's values, as runs.csv has them (NaN, e.g. of an empty window, as None)."""
    tp = _finite(result.throughput_gbps)
    lat = result.latency_seconds
    return {
        "status": result.status,
        "gbps_per_host": tp / nodes if tp is not None and nodes else None,
        "throughput_gbps": tp,
        "events_per_second": _finite(result.events_per_second),
        "latency_p50_seconds": _finite(lat.get("p50")),
        "latency_p99_seconds": _finite(lat.get("p99")),
        "latency_max_seconds": _finite(lat.get("max")),
        "events_built": result.events_built,
        "measured_seconds": _finite(result.measured_seconds),
        "lost_fragments": result.lost_fragments,
        "duplicate_fragments": result.duplicate_fragments,
        "corrupt_fragments": result.corrupt_fragments,
        "in_flight_fragments": result.in_flight_fragments,
        "ranks": result.ranks,
        "nodes": nodes,
        "transport": result.transport,
    }


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A point's measured columns from its runs: NAME_min/_median/_max of every repeated
    metric (runs without a value, e.g. no latency, left out), integrity counters summed."""
    out: dict[str, Any] = {"repeats": len(runs)}
    for m in BENCH_STATS:
        values = [v for r in runs if (v := _finite(r.get(m))) is not None]
        stats = (min(values), statistics.median(values), max(values)) if values else (None,) * 3
        out.update({f"{m}_{s}": v for s, v in zip(STATS, stats, strict=True)})
    out["events_built_median"] = statistics.median(r["events_built"] for r in runs)
    bad = []
    for k in ("lost_fragments", "duplicate_fragments", "corrupt_fragments"):
        out[k] = sum(r[k] for r in runs)
        if out[k]:
            bad.append(f"{out[k]:,} {k.replace('_', ' ')}")
    out["warning"] = "; ".join(bad)
    return out


def _predicted(scenario: Scenario) -> dict[str, Any]:
    from ..simulate import simulate

    r = simulate(scenario)
    if r["interrupted"]:
        raise KeyboardInterrupt
    doc = r.to_dict()
    lat = doc["latency_seconds"]
    flat = {**doc, "latency_p50_seconds": lat["p50"], "latency_p99_seconds": lat["p99"]}
    out: dict[str, Any] = {f"predicted_{m}": _finite(flat[m]) for m in PREDICTED}
    out["warning"] = "; ".join(doc["warnings"])
    return out


def measure_point(
    point: Point,
    repeat: int,
    out: Path,
    live: Callable[[str], None] | None = None,
    of: str = "",
    table_format: str = "csv",
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The point's row (measured columns; with its prediction in mode compare) and its runs.

    KeyboardInterrupt if a run (or the prediction) was interrupted: the point is not done.
    """
    from .. import bench
    from ..bench.collect import integrity_errors

    def say(text: str) -> None:
        if live is not None:
            live(f"{point.index + 1}{of} {point.label}: {text}")

    predicted: dict[str, Any] | None = None
    if point.predict is not None:
        say("protocol simulation")
        try:
            predicted = _predicted(point.predict)
        except USER_ERRORS as err:
            raise DaqnetError(f"point {point.index} ({point.label}): prediction: {err}") from None
    nodes = builders(point.scenario)
    runs = []
    for k in range(1, repeat + 1):
        where = run_dir(out, point.index, k)
        prefix = f"run {k}/{repeat}" if repeat > 1 else "run"
        say(prefix)

        def running(text: str, prefix: str = prefix) -> None:
            say(f"{prefix}  {text}")

        try:
            result = bench.run(point.scenario, where, None, running, table_format)
        except USER_ERRORS as err:
            raise DaqnetError(f"point {point.index} ({point.label}), run {k}: {err}") from None
        if result.interrupted:
            raise KeyboardInterrupt
        # Damaged fragments fail a run, not the scan: its row counts them and `warning`
        # names them (docs/scan.md); any other error stops it.
        damaged = set(integrity_errors(result.corrupt_fragments, result.duplicate_fragments))
        others = [e for e in result.errors if e not in damaged]
        if result.status != "finished" and (others or not damaged or result.status != "failed"):
            why = "; ".join(others) or result.status
            raise DaqnetError(
                f"point {point.index} ({point.label}), run {k}: daqnet bench {result.status}: {why} (see {where})"
            )
        runs.append({**run_row(result, nodes), "dir": str(where.relative_to(out)), "repeat": k})
    row = summarize(runs)
    if predicted is not None:
        for m in RATIOS:
            a, b = row[f"{m}_median"], predicted[f"predicted_{m}"]
            row[f"ratio_{m}"] = a / b if a is not None and b else None
        warning = predicted.pop("warning")
        row.update(predicted)
        if warning:
            row["warning"] = "; ".join(filter(None, [row["warning"], f"prediction: {warning}"]))
    return row, [{c: r.get(c) for c in ("repeat", *RUN_COLUMNS)} for r in runs]


class BenchRunner:
    """The points of a measured scan, one at a time in this process (the LocalRunner
    interface: done, poll, close); finished points' runs wait in `runs`."""

    def __init__(
        self,
        plan: Plan,
        out: Path,
        live: Callable[[str], None] | None = None,
        table_format: str = "csv",
    ):
        self.plan, self.out, self.live, self.table_format = plan, out, live, table_format
        self.todo = deque(plan.points)
        self.runs: dict[int, list[dict[str, Any]]] = {}

    @property
    def done(self) -> bool:
        return not self.todo

    def poll(self, timeout: float) -> list[tuple[int, dict[str, Any]]]:
        del timeout  # a point takes as long as its runs
        if not self.todo:
            return []
        p = self.todo[0]
        row, runs = measure_point(
            p, self.plan.repeat, self.out, self.live, f"/{len(self.plan.points)}", self.table_format
        )
        self.todo.popleft()
        self.runs[p.index] = runs
        return [(p.index, row)]

    def close(self, kill: bool = True) -> None:
        """Nothing runs between polls: bench.run stops its ranks itself on Ctrl-C."""
        del kill
