"""``daqnet report``."""

from __future__ import annotations

import argparse

from .common import note

__all__ = ["run_report"]


def run_report(args: argparse.Namespace) -> int:
    from ..io.result_files import read_results
    from ..report.html import write_report

    results = read_results(args.results)
    out = write_report(results, args.output)
    kinds = ", ".join(sorted({r.kind for r in results}))
    note(f"wrote {out}: {len(results)} result{'s' if len(results) != 1 else ''} ({kinds})")
    return 0
