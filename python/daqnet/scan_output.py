"""The table of a scan and its files: rows, scan.csv, scan.json, the terminal summary,
and the figure at the end (see docs/scan.md)."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import DaqnetError
from .files import write_text_atomic

if TYPE_CHECKING:
    from .scan import Plan

__all__ = [
    "HIGHER_IS_BETTER",
    "METRICS",
    "Collector",
    "best_row",
    "check_plot",
    "document",
    "finish",
    "prepare_out",
    "scan_summary",
]

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
# Columns of the terminal table per mode (the chosen metric is added when missing).
_SHOWN = {
    "steps": ("gbps_per_host", "ideal_gbps_per_host", "slowdown", "total_seconds"),
    "protocol": (
        "gbps_per_host",
        "throughput_gbps",
        "events_per_second",
        "latency_p50_seconds",
        "latency_p99_seconds",
    ),
}
_TABLE_ROWS = 40  # rows printed in the summary; the files have them all
_WRITE_SECONDS = 1.0  # between rewrites of scan.csv/scan.json while rows arrive
_FILES = ("scan.csv", "scan.json", "scan.png")


def columns(plan: Plan) -> list[str]:
    return ["point", *(a.key for a in plan.axes), *METRICS[plan.mode]]


def make_row(plan: Plan, index: int, metrics: dict) -> dict:
    p = plan.points[index]
    return {
        "point": index,
        **dict(zip((a.key for a in plan.axes), p.values, strict=True)),
        **metrics,
    }


def best_row(rows: list[dict], metric: str) -> dict | None:
    """The first row (in point order) with the best value of `metric`."""
    scored = [
        r for r in rows if isinstance(r.get(metric), (int, float)) and math.isfinite(r[metric])
    ]
    if not scored:
        return None
    pick = max if metric in HIGHER_IS_BETTER else min
    target = pick(r[metric] for r in scored)
    return next(r for r in scored if r[metric] == target)


def document(
    plan: Plan,
    rows: list[dict],
    status: str,
    *,
    error: str | None = None,
    jobs: int = 1,
    ranks: int = 1,
    seconds: float = 0.0,
) -> dict:
    """The scan.json document: what was scanned, how, and the rows in point order."""
    rows = sorted(rows, key=lambda r: r["point"])
    best = best_row(rows, plan.metric)
    return {
        "scenario": plan.source,
        "name": plan.name,
        "mode": plan.mode,
        "overrides": plan.overrides,
        "config": plan.config,
        "vary": [{"key": a.key, "values": list(a.values)} for a in plan.axes],
        "metric": plan.metric,
        "higher_is_better": plan.metric in HIGHER_IS_BETTER,
        "status": status,
        "interrupted": status == "interrupted",
        "error": error,
        "points_total": len(plan.points),
        "points_done": len(rows),
        "ranks": ranks,
        "jobs": jobs,
        "elapsed_seconds": seconds,
        "best": best,
        "columns": columns(plan),
        "rows": rows,
    }


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    if isinstance(value, float):
        return repr(value)  # every digit: the CSV reads back to the same float
    return value


def _replace(path: Path, text: str) -> None:
    """Write then rename: a reader (or a kill) never sees a half-written file."""
    write_text_atomic(path, text)


def write_files(doc: dict, out: Path) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(doc["columns"])
    for row in doc["rows"]:
        w.writerow([_cell(row.get(c)) for c in doc["columns"]])
    try:
        _replace(out / "scan.csv", buf.getvalue())
        _replace(out / "scan.json", json.dumps(doc, indent=1) + "\n")
    except OSError as err:
        raise DaqnetError(f"--out {out}: cannot write: {err.strerror}") from None


def default_out(name: str) -> Path:
    """scan-NAME, or scan-NAME-2, -3, ...: a default never overwrites an earlier scan."""
    base = Path("scan-" + (re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "scenario"))
    out, n = base, 1
    while out.exists():
        n += 1
        out = Path(f"{base}-{n}")
    return out


def prepare_out(out: str | None, plan: Plan) -> Path:
    path = Path(out) if out else default_out(plan.name)
    if out is not None and not out:
        raise DaqnetError("--out: empty directory name")
    try:
        path.mkdir(parents=True, exist_ok=True)
        for name in _FILES:  # results of an earlier scan into the same directory
            (path / name).unlink(missing_ok=True)
    except OSError as err:
        raise DaqnetError(f"--out {path}: cannot create directory: {err.strerror}") from None
    return path


class Collector:
    """Rows as they finish; the files are rewritten when a row arrives a second (or, for huge
    tables, longer) after the last write, and at every end: finished, interrupted, failed."""

    def __init__(self, plan: Plan, out: Path, jobs: int, ranks: int, progress=None):
        self.plan, self.out, self.jobs, self.ranks = plan, out, jobs, ranks
        self.progress = progress
        self.rows: dict[int, dict] = {}
        self.start = time.monotonic()
        self.written = 0.0
        self.interval = _WRITE_SECONDS
        self.flush("running")

    def add(self, index: int, metrics: dict) -> None:
        self.rows[index] = make_row(self.plan, index, metrics)
        if self.progress is not None:
            self.progress(len(self.rows), len(self.plan.points))
        if time.monotonic() - self.written >= self.interval:
            self.flush("running")

    def document(self, status: str, error: str | None = None) -> dict:
        return document(
            self.plan,
            list(self.rows.values()),
            status,
            error=error,
            jobs=self.jobs,
            ranks=self.ranks,
            seconds=time.monotonic() - self.start,
        )

    def flush(self, status: str, error: str | None = None) -> dict:
        begin = time.monotonic()
        doc = self.document(status, error)
        write_files(doc, self.out)
        self.written = time.monotonic()
        # Huge tables: rewriting them may take at most ~5% of the time.
        self.interval = max(_WRITE_SECONDS, 20 * (self.written - begin))
        return doc


# -- the end of a scan -------------------------------------------------------------------------
def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def scan_summary(doc: dict, files: list[str]) -> str:
    """The table (compact) and the best point."""
    keys = [v["key"] for v in doc["vary"]]
    shown = list(_SHOWN[doc["mode"]])
    if doc["metric"] not in shown:
        shown.append(doc["metric"])
    head = ["point", *keys, *shown]
    body = [[_fmt(r.get(c)) for c in head] for r in doc["rows"][:_TABLE_ROWS]]

    def number(v: Any) -> bool:
        return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))

    numeric = [all(number(r.get(c)) for r in doc["rows"]) for c in head]
    widths = [max([len(h), *(len(b[i]) for b in body)]) for i, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        return (
            "  "
            + "  ".join(
                c.rjust(w) if num else c.ljust(w)
                for c, w, num in zip(cells, widths, numeric, strict=True)
            ).rstrip()
        )

    axes = " × ".join(f"{v['key']} ({len(v['values'])})" for v in doc["vary"])
    lines = [
        f"daqnet scan — {doc['scenario']} ({doc['mode']} mode): {doc['points_total']:,} points over {axes}",
        "",
        line(head),
        *(line(b) for b in body),
    ]
    if len(doc["rows"]) > _TABLE_ROWS:
        lines.append(f"  … {len(doc['rows']) - _TABLE_ROWS:,} more rows in {files[0]}")
    warned = [r for r in doc["rows"] if r.get("warning")]
    if warned:
        points = ", ".join(str(r["point"]) for r in warned[:10])
        more = f" and {len(warned) - 10:,} more" if len(warned) > 10 else ""
        lines.append(
            f"  WARNING    point {points}{more}: {warned[0]['warning']} (column 'warning')"
        )
    lines.append("")
    best = doc["best"]
    if best is not None:
        where = ", ".join(f"{k}={_fmt(best[k])}" for k in keys)
        how = "highest" if doc["higher_is_better"] else "lowest"
        lines.append(
            f"  best       {doc['metric']} = {_fmt(best[doc['metric']])} ({how}) at {where} (point {best['point']})"
        )
    state = "INTERRUPTED: " if doc["interrupted"] else ""
    lines.append(
        f"  {state}{doc['points_done']:,} of {doc['points_total']:,} points in {doc['elapsed_seconds']:.1f} s"
        f" ({doc['jobs']} job{'s' if doc['jobs'] != 1 else ''}"
        + (f" × {doc['ranks']} ranks)" if doc["ranks"] > 1 else ")")
    )
    lines.append(f"  results    {', '.join(files)}")
    return "\n".join(lines)


def _figure(doc: dict, path: Path) -> str | None:
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
    from .plot import check_plot_path
    from .scan_plot import layout_problem

    check_plot_path(plot)
    problem = layout_problem([len(a.values) for a in plan.axes])
    if problem is not None:
        raise DaqnetError(f"--plot {plot}: {problem}")


def finish(doc: dict, out: Path, plot: str | None, as_json: bool) -> int:
    """Figure, summary or JSON on stdout, exit status: the end of a scan on the one writing rank."""
    figure = _figure(doc, Path(plot) if plot else out / "scan.png")
    files = [str(out / "scan.csv"), str(out / "scan.json")] + ([figure] if figure else [])
    if as_json:
        json.dump(doc, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(scan_summary(doc, files))
    sys.stdout.flush()
    if doc["interrupted"]:
        print(
            f"daqnet: interrupted after {doc['points_done']} of {doc['points_total']} points; the finished rows are written",
            file=sys.stderr,
        )
        return 130
    return 0
