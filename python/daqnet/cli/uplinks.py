"""``daqnet uplinks``: which up-port every leaf's table uses towards every rank."""

from __future__ import annotations

import argparse

from ..analysis.uplinks import uplink_usage
from ..errors import DaqnetError
from .common import emit, load, note

__all__ = ["run_uplinks"]


def run_uplinks(args: argparse.Namespace) -> int:
    from ..report.conflicts_plot import check_plot_path
    from ..report.uplinks import plot_uplinks, uplinks_summary

    if args.plot is not None:
        check_plot_path(args.plot)
    scenario = load(args.scenario, args.overrides, "uplinks")
    fabric = scenario.build_fabric()
    routing = scenario.build_routing(fabric)
    placement = scenario.build_placement(fabric)
    try:
        usage = uplink_usage(routing, placement)
    except DaqnetError as err:  # a direct network: named with its scenario
        raise DaqnetError(f"{scenario.source}: {err}") from None
    emit(usage, args.json, lambda _: uplinks_summary(usage, args.scenario))
    if args.plot:
        plot_uplinks(usage, args.plot, title=f"{scenario.name}: up-port per destination rank")
        note(f"wrote {args.plot}")
    return 0
