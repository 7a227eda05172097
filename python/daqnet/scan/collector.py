"""Rows of a scan as they finish: the scan.json document, rewritten with scan.csv as they
arrive, so a long scan never loses finished rows (see docs/scan.md)."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DaqnetError
from ..io.files import ensure_dir
from ..io.previous import set_aside
from ..io.scan_files import write_scan_files
from ..provenance import provenance
from .metrics import HIGHER_IS_BETTER, METRICS, RUN_COLUMNS, best_row
from .result import ScanResult

if TYPE_CHECKING:
    from .plan import Plan

__all__ = [
    "FILES",
    "Collector",
    "columns",
    "default_out",
    "document",
    "make_row",
    "prepare_out",
    "run_columns",
]

_WRITE_SECONDS = 1.0  # between rewrites of scan.csv/scan.json while rows arrive
FILES = ("scan.csv", "scan.json", "scan.png", "scan.parquet", "runs.csv", "runs.parquet")


def columns(plan: Plan) -> list[str]:
    return ["point", *(a.key for a in plan.axes), *METRICS[plan.mode]]


def run_columns(plan: Plan) -> list[str]:
    """runs.csv of a measured scan: one row per run of daqnet bench."""
    return ["point", "repeat", *(a.key for a in plan.axes), *RUN_COLUMNS]


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
    runs: dict[int, list[dict[str, Any]]] | None = None,
) -> ScanResult:
    """The scan.json document: what was scanned, how, and the rows in point order (and in
    a measured scan the runs of its finished points)."""
    rows = sorted(rows, key=lambda r: r["point"])
    best = best_row(rows, plan.metric)
    measured = None
    if plan.measured:
        measured = []
        for index in sorted(runs or {}):
            head = make_row(plan, index, {})
            measured += [{**head, **r} for r in (runs or {})[index]]
        measured = [{c: r.get(c) for c in run_columns(plan)} for r in measured]
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
        repeat=plan.repeat if plan.measured else None,
        run_columns=run_columns(plan) if plan.measured else None,
        runs=measured,
        provenance=provenance(),
    )


def default_out(name: str, prefix: str = "scan") -> Path:
    """PREFIX-NAME, or PREFIX-NAME-2, -3, ...: a default never overwrites an earlier result
    (a scan's, or a study's with prefix study-KIND)."""
    base = Path(f"{prefix}-" + (re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "scenario"))
    out, n = base, 1
    while out.exists():
        n += 1
        out = Path(f"{base}-{n}")
    return out


def prepare_out(out: str | None, plan: Plan) -> Path:
    if out is not None and not out:
        raise DaqnetError("output directory: empty directory name")
    path = ensure_dir(Path(out) if out else default_out(plan.name))
    # A complete earlier scan is kept until this one is complete too (io.previous).
    set_aside(path, "scan", [*FILES, "runs"], result_name="scan.json")
    try:
        for name in FILES:  # results of an earlier scan into the same directory
            (path / name).unlink(missing_ok=True)
        for old in (path / "runs").glob("point-*-run-*"):  # its benchmark runs
            if old.is_dir() and (old / "run.cfg").exists():
                shutil.rmtree(old)
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
        table_format: str = "csv",
    ):
        self.plan, self.out, self.jobs, self.ranks = plan, out, jobs, ranks
        self.progress = progress
        self.table_format = table_format
        self.rows: dict[int, dict[str, Any]] = {}
        self.runs: dict[int, list[dict[str, Any]]] = {}
        self.start = time.monotonic()
        self.written = 0.0
        self.interval = _WRITE_SECONDS
        self.flush("running")

    def add(
        self, index: int, metrics: dict[str, Any], runs: list[dict[str, Any]] | None = None
    ) -> None:
        self.rows[index] = make_row(self.plan, index, metrics)
        if runs is not None:
            self.runs[index] = runs
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
            runs=self.runs,
        )

    def flush(self, status: str, error: str | None = None) -> ScanResult:
        begin = time.monotonic()
        doc = self.document(status, error)
        write_scan_files(doc, self.out, table_format=self.table_format)
        self.written = time.monotonic()
        # Huge tables: rewriting them may take at most ~5% of the time.
        self.interval = max(_WRITE_SECONDS, 20 * (self.written - begin))
        return doc
