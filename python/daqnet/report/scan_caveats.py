"""What a scan's best point does not say, for every place that shows it (terminal,
report page, figure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ranking_note"]


def ranking_note(doc: Mapping[str, Any]) -> str | None:
    """Why the best point may not be the fastest, or None: the points send different bytes
    per host into the network (mappings of several tasks per node keep different shares on
    a node), so a rate per host, or a slowdown against each point's own contention-free
    time, does not rank them by time. Said wherever the best point is (terminal, report,
    figure): the report alone framed a best at 82.5 Gb/s per host beside points as fast."""
    # Mappings (not message sizes, whose rates are the point) change what stays on a node.
    mapping = any(
        v["key"].startswith("placement.") or v["key"] == "workload.tasks_per_node"
        for v in doc["vary"]
    )
    if doc.get("best") is None or doc["mode"] != "steps" or not mapping:
        return None
    if doc["metric"] not in ("gbps_per_host", "slowdown"):
        return None
    # Compared among points alike in every other varied key: across message sizes the
    # bytes differ by the sizes themselves (64 KiB against 1 MiB read "6 %", blamed on what
    # stays on a node), and times do not compare either.
    others = [
        v["key"]
        for v in doc["vary"]
        if not (v["key"].startswith("placement.") or v["key"] == "workload.tasks_per_node")
    ]
    groups: dict[str, list[float]] = {}
    for r in doc["rows"]:
        if (
            isinstance(r.get("gbps_per_host"), (int, float))
            and isinstance(r.get("total_seconds"), (int, float))
            and r["total_seconds"] > 0
        ):
            group = repr([r.get(k) for k in others])
            groups.setdefault(group, []).append(r["gbps_per_host"] * r["total_seconds"])
    spread = [min(sent) / max(sent) for sent in groups.values() if len(sent) >= 2 and max(sent) > 0]
    if not spread or min(spread) >= 1 - 1e-9:
        return None
    alike = f" (among points of equal {', '.join(others)})" if others else ""
    return (
        f"the points send {min(spread):.0%} to 100% as many bytes per host into the network"
        f"{alike}: what stays on a node differs, so {doc['metric']} does not rank them by "
        "time; --metric total_seconds compares times"
        + (f" of points with equal {', '.join(others)}" if others else "")
    )
