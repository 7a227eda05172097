"""The terminal summary of a benchmark (or of a collected run)."""

from __future__ import annotations

import math

__all__ = ["summary"]


def _fmt(v: float | None, unit: str = "", scale: float = 1.0, digits: int = 2) -> str:
    return (
        "n/a"
        if v is None or (isinstance(v, float) and not math.isfinite(v))
        else f"{v * scale:,.{digits}f}{unit}"
    )


def summary(result: dict, name: str = "") -> str:
    lat = result["latency_seconds"]
    lines = [
        f"{name}: {result['status']}, {result['ranks']} ranks, transport {result['transport']}",
        f"  throughput   {_fmt(result.get('throughput_gbps'), ' Gb/s')} "
        f"({_fmt(result.get('bytes_per_second'), ' GB/s', 1e-9)}) built-event payload, all builders",
        f"  events       {result.get('events_built', 0):,} built in {_fmt(result.get('measured_seconds'), ' s')} "
        f"({_fmt(result.get('events_per_second'), '/s', 1, 0)}) after {_fmt(result.get('warmup_seconds'), ' s')} warm-up",
        f"  latency      p50 {_fmt(lat['p50'], ' ms', 1e3, 3)}  p99 {_fmt(lat['p99'], ' ms', 1e3, 3)}  max {_fmt(lat['max'], ' ms', 1e3, 3)}",
        f"  integrity    lost {result['lost_fragments']}, duplicate {result['duplicate_fragments']}, corrupt {result['corrupt_fragments']}"
        + (
            f"; {result['in_flight_fragments']} in flight when it stopped"
            if result.get("in_flight_fragments")
            else ""
        ),
    ]
    if "baseline" in result:
        b = result["baseline"]
        lines.append(
            f"  baseline     {b['name']}: {_fmt(b['throughput_gbps'], ' Gb/s')}; event builder / baseline = {_fmt(b['ratio'], '×')}"
        )
    for err in result["errors"]:
        lines.append(f"  error        {err}")
    return "\n".join(lines)
