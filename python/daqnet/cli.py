"""The ``daqnet`` command line: a thin layer over the Python API."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from . import __version__
from .analysis import conflicts
from .errors import USER_ERRORS, DaqnetError
from .scenario import Scenario

__all__ = ["main"]


def _detail_steps(text: str) -> int | None:
    if text == "all":
        return None
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a whole number or 'all'") from None
    if n < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return n


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="daqnet", description="Plan, simulate and benchmark event-building networks."
    )
    p.add_argument("--version", action="version", version=f"daqnet {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def scenario_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("scenario", help="scenario file (TOML)")
        sp.add_argument(
            "--set",
            dest="overrides",
            action="append",
            default=[],
            metavar="SECTION.KEY=VALUE",
            help="override a scenario key; the value is read as TOML, a bare word as a string (repeatable)",
        )

    def progress_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--progress",
            action="store_true",
            help="always show the progress line on stderr (default: only on a terminal)",
        )

    c = sub.add_parser(
        "conflicts",
        help="static conflicts per step: link loads, conflicting links",
        description="Route every flow of every step and count conflicts "
        "(Σ over directed links of max(0, flows − 1)).",
    )
    scenario_args(c)
    c.add_argument(
        "--json", action="store_true", help="print one JSON object on stdout instead of the summary"
    )
    c.add_argument(
        "--csv",
        metavar="DIR",
        help="write steps.csv, links.csv, levels.csv, conflicts.csv into DIR",
    )
    c.add_argument(
        "--plot", metavar="FILE", help="write a figure of conflicts per step (png, pdf, svg)"
    )
    progress_arg(c)
    c.add_argument(
        "--detail-steps",
        type=_detail_steps,
        default=20,
        metavar="N|all",
        help="steps (most conflicts first) detailed in conflicts.csv (default 20)",
    )
    c.add_argument(
        "--detail-flows",
        type=_detail_steps,
        default=100,
        metavar="N|all",
        help="flows listed per conflicting link in conflicts.csv (default 100; 'load' gives the count)",
    )

    t = sub.add_parser(
        "tables", help="write the scenario's forwarding tables as a routing table file"
    )
    scenario_args(t)
    t.add_argument("-o", "--output", required=True, metavar="FILE", help="table file to write")

    b = sub.add_parser(
        "bench",
        help="run the real event builder (EM/RU/BU over MPI or TCP) and measure it",
        description="Launch daqnet-evb with mpiexec (or srun in a Slurm job) as the scenario's "
        "[bench] section says, show progress, and gather the results.",
    )
    scenario_args(b)
    b.add_argument(
        "--out",
        metavar="DIR",
        help="directory for run.cfg, per-rank files, result.json, units.csv, timeseries.csv (default: a new temporary directory)",
    )
    b.add_argument(
        "--json", action="store_true", help="print one JSON object on stdout instead of the summary"
    )
    b.add_argument(
        "--baseline",
        choices=["none", "alltoall", "p2p"],
        help="also time MPI_Alltoall or point-to-point pairs among the same ranks (overrides bench.baseline)",
    )
    progress_arg(b)
    b.add_argument(
        "--prepare",
        action="store_true",
        help="only write DIR/run.cfg and print the launch command (for srun/mpirun by hand; then daqnet collect DIR)",
    )

    m = sub.add_parser(
        "simulate",
        help="flow-level simulation: step times, or the event builder's protocol over time",
        description="Simulate the scenario with max-min fair sharing of the links. "
        "[simulate] mode = 'steps' times every step of [workload]; 'protocol' runs the "
        "[bench] event builder (credits, in-flight limits, PUSH/PULL) over the fabric.",
    )
    scenario_args(m)
    m.add_argument(
        "--json", action="store_true", help="print one JSON object on stdout instead of the summary"
    )
    m.add_argument(
        "--out",
        metavar="DIR",
        help="write result.json and the CSV tables (steps, or units, timeseries, links) into DIR",
    )
    progress_arg(m)

    s = sub.add_parser(
        "scan",
        help="simulate every combination of scenario values: a table and a heat map",
        description="Run daqnet simulate for every combination of the --vary values (the "
        "cartesian product, first --vary outermost), in parallel over local cores, or over "
        "MPI ranks when started by mpiexec or srun. Writes DIR/scan.csv, scan.json (one row "
        "per point) and scan.png. See docs/scan.md.",
    )
    scenario_args(s)
    s.add_argument(
        "--vary",
        action="append",
        required=True,
        metavar="SECTION.KEY=V1,V2,...",
        help="values of one scenario key, each read like a --set value; a list value in "
        "brackets, e.g. workload.shifts=[1],[1,2] (repeatable: the points are all combinations)",
    )
    s.add_argument(
        "--out",
        metavar="DIR",
        help="directory for scan.csv, scan.json, scan.png (default: a new scan-NAME in the current directory)",
    )
    s.add_argument(
        "-j",
        "--jobs",
        type=_positive_int,
        metavar="N",
        help="points run at once on this machine, per MPI rank (default: the cores available)",
    )
    s.add_argument(
        "--metric",
        default="gbps_per_host",
        metavar="NAME",
        help="column for the best point and the figure (default gbps_per_host; see docs/scan.md)",
    )
    s.add_argument(
        "--plot",
        metavar="FILE",
        help="write the figure here instead of DIR/scan.png (png, pdf, svg)",
    )
    s.add_argument(
        "--json", action="store_true", help="print scan.json on stdout instead of the summary"
    )
    progress_arg(s)

    g = sub.add_parser(
        "collect",
        help="gather the results of a daqnet-evb run started by hand",
        description="Read DIR/rank-N.json and rank-N.csv written by daqnet-evb; write result.json, units.csv, timeseries.csv.",
    )
    g.add_argument("out", metavar="DIR")
    g.add_argument(
        "--json", action="store_true", help="print one JSON object on stdout instead of the summary"
    )
    return p


class _Progress:
    """A live progress line on stderr, only on a terminal and only for runs over a second."""

    def __init__(self, label: str, always: bool = False, unit: str = "step"):
        self.label = label
        self.unit = unit
        self.start = time.monotonic()
        self.shown = False
        self.always = always
        self.enabled = always or sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or (not self.always and time.monotonic() - self.start < 1.0):
            return
        self.shown = True
        pct = 100.0 * done / max(1, total)
        sys.stderr.write(f"\r{self.label}: {self.unit} {done:,}/{total:,} ({pct:.0f}%)  ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def _load(args: argparse.Namespace, command: str) -> Scenario:
    """The scenario with its --set overrides; a warning for each one the command ignores."""
    from .key_use import unused

    scenario = Scenario.load(args.scenario, args.overrides)
    for key in sorted(scenario.overridden):
        why = unused(scenario, command, key)
        if why:
            print(f"daqnet: warning: --set {key}: {why}", file=sys.stderr)
    return scenario


def _check_outputs(args: argparse.Namespace) -> None:
    """Fail on unusable output paths before a long analysis, not after it."""
    if args.csv is not None:
        if not args.csv:
            raise DaqnetError("--csv: empty directory name")
        try:
            Path(args.csv).mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise DaqnetError(
                f"--csv {args.csv}: cannot create directory: {err.strerror}"
            ) from None
    if args.plot is not None:
        from .plot import check_plot_path

        check_plot_path(args.plot)


def _cmd_conflicts(args: argparse.Namespace) -> int:
    from .summary import conflict_summary

    _check_outputs(args)
    scenario = _load(args, "conflicts")
    _fabric, routing, placement, workload = scenario.build()
    progress = _Progress("conflicts", args.progress)
    try:
        report = conflicts(routing, placement, workload, progress)
    finally:
        progress.close()
    # Results first, so that a failing file write cannot lose them.
    if args.json:
        out = {
            "scenario": args.scenario,
            "name": scenario.name,
            **report.summary(),
            "config": scenario.effective(),
        }
        json.dump(out, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(conflict_summary(report, args.scenario))
    sys.stdout.flush()
    if args.csv:
        from .output import write_conflict_csv

        write_conflict_csv(report, args.csv, args.detail_steps, args.detail_flows)
    if args.plot:
        from .plot import plot_conflicts

        plot_conflicts(report, args.plot, title=f"{scenario.name}: {workload.describe()}")
    if report.interrupted:
        print(
            f"daqnet: interrupted after {report.steps_done} of {report.steps_total} steps; "
            "partial results written",
            file=sys.stderr,
        )
        return 130
    return 0


def _cmd_tables(args: argparse.Namespace) -> int:
    scenario = _load(args, "tables")
    fabric = scenario.build_fabric()
    routing = scenario.build_routing(fabric)
    routing.write_table(args.output)
    print(f"wrote {args.output}: {routing.engine} tables for {fabric.describe()}", file=sys.stderr)
    return 0


def _bench_exit(result: dict, as_json: bool, label: str) -> int:
    from .bench_results import _clean, summary

    if as_json:
        json.dump(_clean(result), sys.stdout)
        sys.stdout.write("\n")
    else:
        print(summary(result, label))
        if result.get("out_dir"):
            print(f"  results      {result['out_dir']}/result.json, units.csv, timeseries.csv")
    sys.stdout.flush()
    if result["interrupted"]:
        print("daqnet: interrupted; what was measured is written", file=sys.stderr)
        return 130
    bad = result["lost_fragments"] + result["duplicate_fragments"] + result["corrupt_fragments"]
    if result["status"] != "finished" or bad:
        why = "; ".join(result["errors"]) or f"{bad} lost, duplicate or corrupt fragments"
        print(f"daqnet: bench failed: {why}", file=sys.stderr)
        return 1
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    import shlex

    from . import bench

    scenario = _load(args, "bench")
    if args.prepare:
        from .bench_config import bench_ranks, run_config, write_run_config

        out = Path(args.out or "daqnet-bench")
        out.mkdir(parents=True, exist_ok=True)
        write_run_config(run_config(scenario, args.baseline), out / "run.cfg", scenario.source)
        argv = [bench.executable(), str(out / "run.cfg"), "--out", str(out)]
        n = bench_ranks(scenario)
        print(f"wrote {out}/run.cfg; run it with, e.g.:", file=sys.stderr)
        print(shlex.join([*bench.srun_command(n, []), *argv]))
        print(shlex.join([bench.mpiexec(), "-n", str(n), *argv]))
        print(f"then: daqnet collect {out}", file=sys.stderr)
        return 0
    show = args.progress or sys.stderr.isatty()
    shown = False

    def progress(text: str) -> None:
        nonlocal shown
        shown = True
        sys.stderr.write(f"\rbench: {text}  ")
        sys.stderr.flush()

    try:
        result = bench.run(scenario, args.out, args.baseline, progress if show else None)
    finally:
        if shown:
            sys.stderr.write("\n")
    return _bench_exit(result, args.json, scenario.name)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate
    from .simulate_output import simulate_summary, write_simulation

    scenario = _load(args, "simulate")
    unit = "event" if scenario["simulate"]["mode"] == "protocol" else "step"
    progress = _Progress("simulate", args.progress, unit)
    try:
        result = simulate(scenario, progress)
    finally:
        progress.close()
    if args.json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(simulate_summary(result))
    sys.stdout.flush()
    for warning in result.get("warnings", []):
        print(f"daqnet: warning: {warning}", file=sys.stderr)
    if args.out:
        write_simulation(result, args.out)
    if result["interrupted"]:
        where = (
            f"written to {args.out}" if args.out else "printed above (give --out DIR to keep files)"
        )
        print(f"daqnet: interrupted; the results so far are {where}", file=sys.stderr)
        return 130
    return 0


def _cmd_scan(args: argparse.Namespace) -> int:
    from .scan import scan_command

    return scan_command(args, lambda: _Progress("scan", args.progress, "point"))


def _cmd_collect(args: argparse.Namespace) -> int:
    from .bench_results import collect, write_tables

    result = collect(args.out)
    result["out_dir"] = args.out
    write_tables(result, args.out)
    return _bench_exit(result, args.json, args.out)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handlers = {
        "conflicts": _cmd_conflicts,
        "tables": _cmd_tables,
        "bench": _cmd_bench,
        "simulate": _cmd_simulate,
        "collect": _cmd_collect,
        "scan": _cmd_scan,
    }
    try:
        return handlers[args.command](args)
    except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except USER_ERRORS as err:
        msg = (
            str(err)
            if not isinstance(err, OSError) or not err.filename
            else f"{err.filename}: {err.strerror}"
        )
        print(f"daqnet: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("daqnet: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
