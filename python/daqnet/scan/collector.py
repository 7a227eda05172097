"""Rows of a scan as they finish: the scan.json document, rewritten with scan.csv as they
arrive, so a long scan never loses finished rows (see docs/scan.md)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DaqnetError
from ..io.files import ensure_dir
from ..io.scan_files import write_scan_files
from ..provenance import provenance
from .metrics import HIGHER_IS_BETTER, METRICS, best_row
from .result import ScanResult

if TYPE_CHECKING:
    from .plan import Plan

__all__ = ["FILES", "Collector", "columns", "default_out", "document", "make_row", "prepare_out"]

_WRITE_SECONDS = 1.0  # between rewrites of scan.csv/scan.json while rows arrive
FILES = ("scan.csv", "scan.json", "scan.png")


def columns(plan: Plan) -> list[str]:
    return ["point", *(a.key for a in plan.axes), *METRICS[plan.mode]]


def make_row(plan: Plan, index: int, metrics: dict[str, Any]) -> dict[str, Any]:
    p = plan.points[index]
    return {
        "point": index,
        **dict(zip((a.key for a in plan.axes), p.values, strict=True)),
        **metrics,
    }


def document(
    plan: Plan,
    rows: list[dict[str, Any]],
    status: str,
    *,
    error: str | None = None,
    jobs: int = 1,
    ranks: int = 1,
    seconds: float = 0.0,
) -> ScanResult:
    """The scan.json document: what was scanned, how, and the rows in point order."""
    rows = sorted(rows, key=lambda r: r["point"])
    best = best_row(rows, plan.metric)
    return ScanResult(
        scenario=plan.source,
        name=plan.name,
        mode=plan.mode,
        overrides=plan.overrides,
        config=plan.config,
        vary=[{"key": a.key, "values": list(a.values)} for a in plan.axes],
        metric=plan.metric,
        higher_is_better=plan.metric in HIGHER_IS_BETTER,
        status=status,
        interrupted=status == "interrupted",
        error=error,
        points_total=len(plan.points),
        points_done=len(rows),
        ranks=ranks,
        jobs=jobs,
        elapsed_seconds=seconds,
        best=best,
        columns=columns(plan),
        rows=rows,
        provenance=provenance(),
    )


def default_out(name: str) -> Path:
    """scan-NAME, or scan-NAME-2, -3, ...: a default never overwrites an earlier scan."""
    base = Path("scan-" + (re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "scenario"))
    out, n = base, 1
    while out.exists():
        n += 1
        out = Path(f"{base}-{n}")
    return out


def prepare_out(out: str | None, plan: Plan) -> Path:
    if out is not None and not out:
        raise DaqnetError("output directory: empty directory name")
    path = ensure_dir(Path(out) if out else default_out(plan.name))
    try:
        for name in FILES:  # results of an earlier scan into the same directory
            (path / name).unlink(missing_ok=True)
    except OSError as err:
        raise DaqnetError(f"output directory {path}: {err.strerror}") from None
    return path


class Collector:
    """Rows as they finish; the files are rewritten when a row arrives a second (or, for huge
    tables, longer) after the last write, and at every end: finished, interrupted, failed."""

    def __init__(
        self,
        plan: Plan,
        out: Path,
        jobs: int,
        ranks: int,
        progress: Callable[[int, int], object] | None = None,
    ):
        self.plan, self.out, self.jobs, self.ranks = plan, out, jobs, ranks
        self.progress = progress
        self.rows: dict[int, dict[str, Any]] = {}
        self.start = time.monotonic()
        self.written = 0.0
        self.interval = _WRITE_SECONDS
        self.flush("running")

    def add(self, index: int, metrics: dict[str, Any]) -> None:
        self.rows[index] = make_row(self.plan, index, metrics)
        if self.progress is not None:
            self.progress(len(self.rows), len(self.plan.points))
        if time.monotonic() - self.written >= self.interval:
            self.flush("running")

    def document(self, status: str, error: str | None = None) -> ScanResult:
        return document(
            self.plan,
            list(self.rows.values()),
            status,
            error=error,
            jobs=self.jobs,
            ranks=self.ranks,
            seconds=time.monotonic() - self.start,
        )

    def flush(self, status: str, error: str | None = None) -> ScanResult:
        begin = time.monotonic()
        doc = self.document(status, error)
        write_scan_files(doc, self.out)
        self.written = time.monotonic()
        # Huge tables: rewriting them may take at most ~5% of the time.
        self.interval = max(_WRITE_SECONDS, 20 * (self.written - begin))
        return doc
