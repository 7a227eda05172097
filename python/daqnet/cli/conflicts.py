"""``daqnet conflicts`` and ``daqnet tables``."""

from __future__ import annotations

import argparse

from ..analysis import conflicts
from ..errors import DaqnetError
from ..io.files import ensure_dir
from ..io.result_files import check_not_another
from ..io.table_files import check_format
from ..provenance import provenance
from ..stops import writing
from .common import (
    EXIT_INTERRUPTED,
    Progress,
    draw_unless_stopped,
    emit,
    keep_earlier,
    load,
    note,
    output_file,
    routes_progress,
    warn_earlier_tables,
)

__all__ = ["run_conflicts", "run_tables"]


def run_conflicts(args: argparse.Namespace) -> int:
    from ..report.conflicts import conflict_summary
    from ..report.conflicts_plot import check_plot_path

    # Unusable output paths (and a format without its packages) fail before a long
    # analysis, not after it.
    if args.out is not None and args.csv is not None and args.out != args.csv:
        # --csv is --out's older name: one of them was silently ignored.
        raise DaqnetError(
            f"--out {args.out} and --csv {args.csv}: give one (--csv is --out's older name)"
        )
    out, out_option = (args.out, "--out") if args.out is not None else (args.csv, "--csv")
    check_format(args.format, out)
    check_not_another(out, "conflicts", out_option)
    if args.plot is not None:
        check_plot_path(args.plot, made=out)  # README: --out out/ --plot out/conflicts.png
    scenario = load(args.scenario, args.overrides, "conflicts")
    building = routes_progress(scenario, args.progress)
    try:
        _fabric, routing, placement, workload = scenario.build(building)
    finally:
        building.close()
    if out is not None:  # made once the scenario has proved good (a bad one left it empty)
        ensure_dir(out, out_option)
    progress = Progress("conflicts", args.progress)
    try:
        report = conflicts(routing, placement, workload, progress, threads=args.threads)
        progress.close(complete=not report.interrupted)
    finally:
        progress.close()
    doc = {
        "scenario": args.scenario,
        "name": scenario.name,
        **report.summary(),
        "config": scenario.effective(),
        "provenance": provenance(),
    }
    # The summary, then the files: a Ctrl-C as the summary appears (the files of a large
    # tree take a second) lost every file, or left some beside an earlier run's. Signals are
    # noted meanwhile; the figure, if any, is what one skips.
    kept = ""
    with writing():
        emit(doc, args.json, lambda _: conflict_summary(report, args.scenario))
        if out:
            from ..io.conflicts_csv import write_conflict_files

            kept = keep_earlier(out, "conflicts", report.interrupted)
            written = write_conflict_files(
                doc, report, out, args.detail_steps, args.detail_flows, args.format
            )
            warn_earlier_tables(out, written)
    stopped = False
    if args.plot:
        from ..report.conflicts_plot import plot_conflicts

        title = f"{scenario.name}: {workload.describe()}"
        _, stopped = draw_unless_stopped(lambda: plot_conflicts(report, args.plot, title=title))
    if report.interrupted:
        where = f"written to {out}{kept}" if out else "printed above (give --out DIR to keep files)"
        note(
            f"interrupted after {report.steps_done:,} of {report.steps_total:,} steps; "
            f"the results so far are {where}"
        )
        return EXIT_INTERRUPTED
    return EXIT_INTERRUPTED if stopped else 0


def run_tables(args: argparse.Namespace) -> int:
    scenario = load(args.scenario, args.overrides, "tables")
    fabric = scenario.build_fabric()
    building = routes_progress(scenario, args.progress)
    try:
        routing = scenario.build_routing(fabric, building)
    finally:
        building.close()
    writing = Progress("writing", args.progress, unit="entry", scale=True)
    try:
        with output_file(args.output) as path:
            routing.write_table(path, writing)
        writing.close(complete=True)
    finally:
        writing.close()
    where = "stdout" if args.output == "-" else args.output
    note(f"wrote {where}: {routing.engine} tables for {fabric.describe()}")
    return 0
