"""``daqnet export``: the scenario's fabric (and routing) in another tool's format."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..report.format import size
from .common import EXIT_INTERRUPTED, Progress, load, note, output_file

__all__ = ["FORMATS", "run_export"]

FORMATS: dict[str, str] = {
    "ibsim": "ibsim net file (daqnet opensm feeds it to OpenSM)",
    "slurm-topology": "Slurm topology.conf for the tree plugin",
    "dot": "Graphviz DOT, one edge per cable labelled with its ports",
    "simgrid": "SimGrid platform XML with the routing's path for every pair of hosts",
}


def run_export(args: argparse.Namespace) -> int:
    scenario = load(args.scenario, args.overrides, "export")
    fabric = scenario.build_fabric()
    where = "stdout" if args.output == "-" else args.output
    with output_file(args.output) as path:
        if args.format == "ibsim":
            fabric.write_ibsim_net(path)
        elif args.format == "slurm-topology":
            from ..io.slurm_topology import write_slurm_topology

            write_slurm_topology(fabric, path)
        elif args.format == "dot":
            from ..io.graphviz import write_dot

            write_dot(fabric, path)
        else:
            from ..io.simgrid_platform import write_simgrid_platform

            routing = scenario.build_routing(fabric)
            progress = Progress("export", args.progress, "host")
            try:
                write_simgrid_platform(routing, path, progress=progress)
            except KeyboardInterrupt:
                # The file is written whole or not at all (atomic_open).
                note(f"interrupted: {where} not written")
                return EXIT_INTERRUPTED
            finally:
                progress.close()
        written = Path(path).stat().st_size
    note(f"wrote {where} ({size(written)}): {FORMATS[args.format]} of {fabric.describe()}")
    return 0
