"""``daqnet scan``: locally, or as one rank of an MPI launch."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..scan import ScanRequest, available_cores, make_plan, run_local
from ..scan.collector import Collector, prepare_out
from ..scan.mpi import launched_ranks, scan_mpi
from .common import EXIT_INTERRUPTED, Progress, emit, note, warn

__all__ = ["run_scan_command"]


def _finish(doc: Mapping[str, Any], out: Path, plot: str | None, as_json: bool) -> int:
    """Figure, summary or JSON on stdout, exit status: the end of a scan on the writing rank."""
    from ..report.scan import figure, scan_summary

    drawn = figure(doc, Path(plot) if plot else out / "scan.png")
    files = [str(out / "scan.csv"), str(out / "scan.json")] + ([drawn] if drawn else [])
    emit(doc, as_json, lambda d: scan_summary(d, files))
    if doc["interrupted"]:
        note(
            f"interrupted after {doc['points_done']} of {doc['points_total']} points; "
            "the finished rows are written"
        )
        return EXIT_INTERRUPTED
    return 0


def run_scan_command(args: argparse.Namespace) -> int:
    from ..report.scan import check_plot

    request = ScanRequest(
        args.scenario, args.vary, args.overrides, args.metric, args.jobs, args.out, args.plot
    )
    progress = Progress("scan", args.progress, "point")
    if launched_ranks() > 1:
        try:
            doc, out, code = scan_mpi(request, lambda: progress)
        finally:
            progress.close()
        return code if doc is None or out is None else _finish(doc, out, args.plot, args.json)
    plan = make_plan(request.scenario, request.vary, request.overrides, request.metric)
    check_plot(plan, args.plot)
    for warning in plan.warnings:
        warn(warning)
    jobs = args.jobs or available_cores()
    out = prepare_out(args.out, plan)
    try:
        doc = run_local(plan, Collector(plan, out, jobs, 1, progress), jobs)
    finally:
        progress.close()
    return _finish(doc, out, args.plot, args.json)
