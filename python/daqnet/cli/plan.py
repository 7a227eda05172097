"""``daqnet plan``: the fat tree that carries N hosts, per taper, side by side."""

from __future__ import annotations

import argparse

from .common import emit

__all__ = ["run_plan"]


def run_plan(args: argparse.Namespace) -> int:
    from ..plan import plan, read_prices
    from ..report.plan import plan_summary

    prices = read_prices(args.prices) if args.prices else None
    result = plan(args.hosts, args.gbps, args.radix, args.taper, prices)
    emit(result, args.json, plan_summary)
    return 0
