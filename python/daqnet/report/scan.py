"""The terminal summary of a scan and its figure."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DaqnetError
from .format import cell, table
from .scan_caveats import ranking_note

if TYPE_CHECKING:
    from ..scan.plan import Plan

__all__ = ["check_plot", "figure", "scan_summary"]

_TABLE_ROWS = 40  # rows printed in the summary; the files have them all

# Columns of the terminal table per mode (the chosen metric is added when missing).
SHOWN = {
    "steps": ("gbps_per_host", "ideal_gbps_per_host", "slowdown", "total_seconds"),
    "protocol": (
        "gbps_per_host",
        "throughput_gbps",
        "events_per_second",
        "latency_p50_seconds",
        "latency_p99_seconds",
    ),
    # measured: OSU-like, the median of the runs with their spread in Gb/s
    "bench": (
        "repeats",
        "gbps_per_host_median",
        "gbps_per_host_min",
        "gbps_per_host_max",
        "throughput_gbps_median",
        "events_per_second_median",
        "latency_p50_seconds_median",
        "latency_p99_seconds_median",
    ),
    "compare": (
        "gbps_per_host_median",
        "predicted_gbps_per_host",
        "ratio_gbps_per_host",
        "events_per_second_median",
        "predicted_events_per_second",
        "latency_p50_seconds_median",
        "predicted_latency_p50_seconds",
    ),
}


# A number in a warning: what differs between points that warn for the same reason.
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_WARNING_KINDS = 5  # kinds of warning listed; the column has every point's own


def _warning_lines(rows: list[Mapping[str, Any]]) -> list[str]:
    """The points' warnings, one line per kind (the same text but for its numbers), each
    number that differs between the points shown as its range: one point's figures stand
    for no other's."""
    kinds: dict[tuple[str, ...], list[tuple[Any, list[str]]]] = {}
    for r in rows:
        if w := r.get("warning"):
            kinds.setdefault(tuple(_NUMBER.split(w)), []).append((r["point"], _NUMBER.findall(w)))

    def value(n: str) -> float:
        return float(n.replace(",", ""))

    lines = []
    for text, members in list(kinds.items())[:_WARNING_KINDS]:
        numbers = []
        for seen in zip(*(found for _, found in members), strict=True):
            lo, hi = min(seen, key=value), max(seen, key=value)
            numbers.append(lo if value(lo) == value(hi) else f"{lo}–{hi}")
        said = text[0] + "".join(n + t for n, t in zip(numbers, text[1:], strict=True))
        points = ", ".join(str(p) for p, _ in members[:10])
        more = f" and {len(members) - 10:,} more" if len(members) > 10 else ""
        lines.append(f"point {points}{more}: {said} (column 'warning')")
    if len(kinds) > _WARNING_KINDS:
        rest = sum(len(m) for m in list(kinds.values())[_WARNING_KINDS:])
        lines.append(f"{rest:,} more points warn otherwise (column 'warning')")
    return lines


def scan_summary(doc: Mapping[str, Any], files: list[str]) -> str:
    """The table (compact) and the best point."""
    keys = [v["key"] for v in doc["vary"]]
    shown = list(SHOWN[doc["mode"]])
    if doc["metric"] not in shown:
        shown.append(doc["metric"])
    head = ["point", *keys, *shown]
    body = [[cell(r.get(c)) for c in head] for r in doc["rows"][:_TABLE_ROWS]]

    def number(v: Any) -> bool:
        return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))

    numeric = [all(number(r.get(c)) for r in doc["rows"]) for c in head]
    axes = " × ".join(f"{v['key']} ({len(v['values'])})" for v in doc["vary"])
    runs = f", {doc['repeat']} runs per point" if doc.get("repeat", 1) > 1 else ""
    lines = [
        f"daqnet scan — {doc['scenario']} ({doc['mode']} mode{runs}): {doc['points_total']:,} points over {axes}",
        "",
        *table(head, body, numeric),
    ]
    if len(doc["rows"]) > _TABLE_ROWS:
        lines.append(f"  … {len(doc['rows']) - _TABLE_ROWS:,} more rows in {files[0]}")
    for i, line in enumerate(_warning_lines(doc["rows"])):
        lines.append(f"  {'WARNING' if i == 0 else '':<9}  {line}")
    lines.append("")
    best = doc["best"]
    if best is not None:
        where = ", ".join(f"{k}={cell(best[k])}" for k in keys)
        how = "highest" if doc["higher_is_better"] else "lowest"
        lines.append(
            f"  best       {doc['metric']} = {cell(best[doc['metric']])} ({how}) at {where} (point {best['point']})"
        )
        caveat = ranking_note(doc)
        if caveat:
            lines.append(f"  note       {caveat}")
    state = "INTERRUPTED: " if doc["interrupted"] else ""
    lines.append(
        f"  {state}{doc['points_done']:,} of {doc['points_total']:,} points in {doc['elapsed_seconds']:.1f} s"
        f" ({doc['jobs']} job{'s' if doc['jobs'] != 1 else ''}"
        + (f" × {doc['ranks']} ranks)" if doc["ranks"] > 1 else ")")
    )
    lines.append(f"  results    {', '.join(files)}")
    return "\n".join(lines)


def figure(doc: Mapping[str, Any], path: Path) -> str | None:
    """Write the figure; None (with a note on stderr) when it cannot be drawn or is empty."""
    from .scan_plot import layout_problem, plot_scan

    # An explicit --plot was refused before running (check_plot); the default is skipped.
    problem = layout_problem([len(v["values"]) for v in doc["vary"]])
    if problem is not None:
        print(f"daqnet: scan: no figure: {problem}", file=sys.stderr)
        return None
    if not doc["rows"]:
        return None
    plot_scan(doc, path)
    return str(path)


def check_plot(plan: Plan, plot: str | None) -> None:
    """An explicit --plot must be writable and drawable, before the scan runs."""
    if plot is None:
        return
    from .conflicts_plot import check_plot_path
    from .scan_plot import layout_problem

    check_plot_path(plot)
    problem = layout_problem([len(a.values) for a in plan.axes])
    if problem is not None:
        raise DaqnetError(f"figure {plot}: {problem}")
