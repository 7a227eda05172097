"""``daqnet scan``: locally, or as one rank of an MPI launch."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import DaqnetError
from ..io.previous import discard_previous, kept
from ..scan import ScanRequest, available_cores, make_plan, run_local
from ..scan.collector import Collector, prepare_out
from ..scan.mpi import launched_ranks, scan_mpi
from ..tables import check_format
from .common import EXIT_INTERRUPTED, Progress, draw_unless_stopped, emit, note, warn

__all__ = ["run_scan_command"]


def _finish(
    doc: Mapping[str, Any], out: Path, plot: str | None, as_json: bool, table_format: str = "csv"
) -> int:
    """Figure, summary or JSON on stdout, exit status: the end of a scan on the writing rank."""
    from ..report.scan import figure, scan_summary

    drawn, stopped = draw_unless_stopped(
        lambda: figure(doc, Path(plot) if plot else out / "scan.png")
    )
    ext = "parquet" if table_format == "parquet" else "csv"
    files = [str(out / f"scan.{ext}"), str(out / "scan.json")]
    if doc.get("runs") is not None:
        files.append(str(out / f"runs.{ext}"))
    files += [drawn] if drawn else []
    emit(doc, as_json, lambda d: scan_summary(d, files))
    if doc["interrupted"]:
        note(
            f"interrupted after {doc['points_done']} of {doc['points_total']} points; "
            f"the finished rows are written{kept(out)}"
        )
        return EXIT_INTERRUPTED
    bad = [
        r["point"]
        for r in doc["rows"]
        if any(r.get(k) for k in ("lost_fragments", "duplicate_fragments", "corrupt_fragments"))
    ]
    if bad:
        note(
            f"bench failed: lost, duplicate or corrupt fragments at point {', '.join(map(str, bad))} (column 'warning'){kept(out)}"
        )
        return 1  # a failed benchmark says so even if the figure was cut short
    # Complete and sound: it replaces the earlier scan kept in OUT/previous (io.previous).
    discard_previous(out)
    return EXIT_INTERRUPTED if stopped else 0


def run_scan_command(args: argparse.Namespace) -> int:
    from ..report.scan import check_plot

    check_format(args.format)
    request = ScanRequest(
        args.scenario,
        args.vary,
        args.overrides,
        args.metric,
        args.jobs,
        args.out,
        args.plot,
        args.bench,
        args.predict,
        args.repeat,
        args.format,
    )
    progress = Progress("scan", args.progress, "point")
    if launched_ranks() > 1:
        if args.bench:
            raise DaqnetError(
                "--bench: benchmarks run one at a time, each launching its own ranks; start "
                "daqnet scan --bench once, without mpiexec/srun (bench.launcher starts the ranks)"
            )
        try:
            doc, out, code = scan_mpi(request, lambda: progress)
        finally:
            progress.close()
        return (
            code
            if doc is None or out is None
            else _finish(doc, out, args.plot, args.json, args.format)
        )
    plan = make_plan(
        request.scenario,
        request.vary,
        request.overrides,
        request.metric,
        bench=request.bench,
        predict=request.predict,
        repeat=request.repeat,
    )
    check_plot(plan, args.plot)
    for warning in plan.warnings:
        warn(warning)
    if plan.measured and args.jobs and args.jobs > 1:
        warn(f"--jobs {args.jobs}: measured points run one at a time; --jobs does not apply")
    # Jobs at work, as scan.json records them: no more than the points.
    jobs = 1 if plan.measured else min(args.jobs or available_cores(), max(1, len(plan.points)))
    out = prepare_out(args.out, plan)
    try:
        collector = Collector(plan, out, jobs, 1, progress, args.format)
        doc = run_local(plan, collector, jobs, progress.text)
    except DaqnetError as err:
        raise DaqnetError(f"{err}{kept(out)}") from None
    finally:
        progress.close()
    return _finish(doc, out, args.plot, args.json, args.format)
