"""``daqnet study mapping|taper``."""

from __future__ import annotations

import argparse

from ..errors import DaqnetError
from .common import EXIT_INTERRUPTED, Progress, draw_unless_stopped, emit, note

__all__ = ["run_study"]


def run_study(args: argparse.Namespace) -> int:
    from ..io.files import check_out_dir, check_writable
    from ..io.previous import kept
    from ..io.scan_files import write_scan_files
    from ..report.study import plot_study, study_summary
    from ..stops import writing
    from ..study import mapping_study, taper_study
    from ..study.run import out_dir

    if args.study == "mapping" and args.taper:
        raise DaqnetError(
            "--taper belongs to daqnet study taper: the mapping study varies mappings"
        )
    # An --out that takes no file (or "") fails now, not once every point has run.
    if args.out is not None:
        check_out_dir(args.out, "--out")
    else:
        check_writable(".", "the current directory (where the study's directory goes)")
    progress = Progress("study", args.progress, "point")
    try:
        if args.study == "mapping":
            doc = mapping_study(args.scenario, args.overrides, progress, args.jobs)
        else:
            doc = taper_study(args.scenario, args.overrides, args.taper, progress, args.jobs)
    finally:
        progress.close()
    with writing():
        out = out_dir(args.study, doc.name, args.out, doc.interrupted)
        write_scan_files(doc, out, "study")
    files = [str(out / "study.csv"), str(out / "study.json")]
    drawn, stopped = draw_unless_stopped(lambda: plot_study(doc.to_dict(), out / "study.png"))
    if drawn:
        files.append(str(drawn))
    emit(doc, args.json, lambda d: study_summary(d, files))
    if doc.interrupted:
        note(
            f"interrupted after {doc.points_done} of {doc.points_total} points; the finished "
            f"rows are written{kept(out)}"
        )
        return EXIT_INTERRUPTED
    return EXIT_INTERRUPTED if stopped else 0
