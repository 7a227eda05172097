"""``daqnet simulate``."""

from __future__ import annotations

import argparse

from .common import (
    EXIT_INTERRUPTED,
    Progress,
    emit,
    keep_earlier,
    load,
    note,
    routes_progress,
    warn,
    warn_earlier_tables,
)

__all__ = ["run_simulate"]


def run_simulate(args: argparse.Namespace) -> int:
    from ..io.files import ensure_dir
    from ..io.result_files import check_not_another
    from ..io.simulation import write_simulation
    from ..io.table_files import check_format
    from ..provenance import provenance
    from ..report.simulate import simulate_summary
    from ..simulate import simulate
    from ..stops import writing

    check_format(args.format, args.out)
    check_not_another(args.out, "simulate")
    scenario = load(args.scenario, args.overrides, "simulate")
    unit = "event" if scenario["simulate"]["mode"] == "protocol" else "step"
    building = routes_progress(scenario, args.progress)
    try:
        stages = scenario.build(building)
    finally:
        building.close()
    # An unusable --out fails before a long run, not after it; and is made only once the
    # scenario has proved good (a bad one left an empty directory).
    if args.out:
        ensure_dir(args.out, "--out")
    progress = Progress("simulate", args.progress, unit)
    try:
        result = simulate(scenario, progress, stages=stages, threads=args.threads)
        progress.close(complete=not result["interrupted"])
    finally:
        progress.close()
    result.provenance = provenance()
    # A Ctrl-C as the summary appears lost the files being written (see conflicts).
    kept = ""
    with writing():
        emit(result, args.json, simulate_summary)
        for warning in result.get("warnings", []):
            warn(warning)
        if args.out:
            kept = keep_earlier(args.out, "simulate", result["interrupted"])
            warn_earlier_tables(args.out, write_simulation(result, args.out, args.format))
    if result["interrupted"]:
        where = (
            f"written to {args.out}{kept}"
            if args.out
            else "printed above (give --out DIR to keep files)"
        )
        note(f"interrupted; the results so far are {where}")
        return EXIT_INTERRUPTED
    return 0
