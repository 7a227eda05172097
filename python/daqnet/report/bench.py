"""The terminal summary of a benchmark (or of a collected run)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .format import quantity

__all__ = ["summary"]


def summary(result: Mapping[str, Any], name: str = "") -> str:
    lat = result["latency_seconds"]
    lines = [
        f"{name}: {result['status']}, {result['ranks']} ranks, transport {result['transport']}",
        f"  throughput   {quantity(result.get('throughput_gbps'), ' Gb/s')} "
        f"({quantity(result.get('bytes_per_second'), ' GB/s', 1e-9)}) built-event payload, all builders",
        f"  events       {result.get('events_built', 0):,} built in {quantity(result.get('measured_seconds'), ' s')} "
        f"({quantity(result.get('events_per_second'), '/s', 1, 0)}) after {quantity(result.get('warmup_seconds'), ' s')} warm-up",
        f"  latency      p50 {quantity(lat['p50'], ' ms', 1e3, 3)}  p99 {quantity(lat['p99'], ' ms', 1e3, 3)}  max {quantity(lat['max'], ' ms', 1e3, 3)}",
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
            f"  baseline     {b['name']}: {quantity(b['throughput_gbps'], ' Gb/s')}; event builder / baseline = {quantity(b['ratio'], '×')}"
        )
    for err in result["errors"]:
        lines.append(f"  error        {err}")
    return "\n".join(lines)
