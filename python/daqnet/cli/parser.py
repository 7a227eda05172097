"""The command line's grammar: every subcommand and option (the only code that sees argparse)."""

from __future__ import annotations

import argparse
import math

from .. import __version__
from ..subnet_manager import OPENSM_ENGINES

__all__ = ["parser"]


def _whole(text: str, minimum: int) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a whole number") from None
    if n < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}")
    return n


def _detail_steps(text: str) -> int | None:
    """A count of details to show, or 'all' (None)."""
    return None if text == "all" else _whole(text, 0)


def _positive_int(text: str) -> int:
    return _whole(text, 1)


def _plan_hosts(text: str) -> int:
    return _whole(text, 2)  # what daqnet plan needs: 1 read "must be at least 1" first


def _radix(text: str) -> int:
    """A switch's ports, said as a fabric.radix is (0 read "must be at least 1", then 2
    "must be an even number from 4 to 4096")."""
    from ..plan import MAX_RADIX

    n = _whole(text, 0)
    if n < 4 or n % 2 or n > MAX_RADIX:
        raise argparse.ArgumentTypeError(f"must be an even number from 4 to {MAX_RADIX}")
    return n


def _threads(text: str) -> int:
    return _whole(text, 0)


def _seconds(text: str) -> float:
    """A finite time > 0 (a time-out of 0, -5 or nan would end or never end every run)."""
    try:
        t = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number of seconds") from None
    if not math.isfinite(t) or t <= 0:
        raise argparse.ArgumentTypeError("must be a finite number of seconds > 0")
    return t


def parser() -> argparse.ArgumentParser:
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

    def json_arg(sp: argparse.ArgumentParser, what: str = "one JSON object") -> None:
        sp.add_argument(
            "--json", action="store_true", help=f"print {what} on stdout instead of the summary"
        )

    def progress_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--progress",
            action="store_true",
            help="always show the progress line on stderr (default: only on a terminal)",
        )

    def format_arg(sp: argparse.ArgumentParser, tables: str) -> None:
        sp.add_argument(
            "--format",
            choices=["csv", "parquet"],
            default="csv",
            help=f"format of the tables ({tables}) beside the JSON document: csv (default) or "
            "parquet instead (needs pandas and pyarrow: pip install 'daqnet[tables]')",
        )

    def threads_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--threads",
            type=_threads,
            default=0,
            metavar="N",
            help="threads of the C++ core (default 0: every core this process may use); "
            "results do not depend on it",
        )

    c = sub.add_parser(
        "conflicts",
        help="static conflicts per step: link loads, conflicting links",
        description="Route every flow of every step and count conflicts "
        "(Σ over directed links of max(0, flows − 1)).",
    )
    scenario_args(c)
    json_arg(c)
    c.add_argument(
        "--out",
        metavar="DIR",
        help="write result.json (the --json document), steps.csv, links.csv, levels.csv, "
        "conflicts.csv into DIR",
    )
    c.add_argument("--csv", metavar="DIR", help="older name of --out (the same files)")
    format_arg(c, "steps, links, levels, conflicts")
    c.add_argument(
        "--plot", metavar="FILE", help="write a figure of conflicts per step (png, pdf, svg)"
    )
    progress_arg(c)
    threads_arg(c)
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
    progress_arg(t)

    x = sub.add_parser(
        "export",
        help="write the scenario's fabric as an ibsim net, topology.conf, Graphviz or SimGrid file",
        description="Write the fabric for another tool: ibsim (OpenSM's simulator), Slurm's "
        "topology.conf, Graphviz DOT, or a SimGrid platform (XML, SimGrid 3.32) that routes "
        "every pair of hosts as the scenario's routing does.",
    )
    scenario_args(x)
    x.add_argument(
        "--format",
        required=True,
        choices=["ibsim", "slurm-topology", "dot", "simgrid"],
        help="file format",
    )
    x.add_argument("-o", "--output", required=True, metavar="FILE", help="file to write")
    progress_arg(x)

    o = sub.add_parser(
        "opensm",
        help="compute OpenSM's forwarding tables for the scenario's fabric (ibsim, no hardware)",
        description="Run OpenSM against ibsim's simulation of the fabric; write its LFT dump "
        "and a scenario that routes with it (docs/opensm.md).",
    )
    scenario_args(o)
    o.add_argument(
        "--engine",
        default="ftree",
        choices=sorted(OPENSM_ENGINES),
        help="OpenSM routing engine (default ftree)",
    )
    o.add_argument("--out", required=True, metavar="DIR", help="directory for the dump files")
    o.add_argument(
        "--timeout", type=_seconds, default=600.0, metavar="SECONDS", help="limit per tool run"
    )
    json_arg(o)

    u = sub.add_parser(
        "uplinks",
        help="up-port usage per leaf: which up-port each table uses towards each rank",
        description="For every leaf, the up-port its forwarding table sends each placed rank "
        "to, in rank order, with destinations per up-port and its up-link conflicts per "
        "barrel step (clashes): irregular tables at a glance.",
    )
    scenario_args(u)
    json_arg(u)
    u.add_argument(
        "--plot", metavar="FILE", help="write a figure of leaves x ranks coloured by up-port"
    )

    rp = sub.add_parser(
        "repair",
        help="a rank order, node set or schedule without conflicts, with its predicted gain",
        description="Find what the scenario's forwarding tables serve best: an order of the "
        "placed hosts (rank-order), N hosts of a pool that fill leaves (node-set), or the same "
        "transfers in conflict-free steps (schedule); report conflicts and simulated time "
        "before and after (docs/repair.md).",
    )
    scenario_args(rp)
    rp.add_argument(
        "--what",
        required=True,
        choices=["rank-order", "node-set", "schedule"],
        help="what to repair",
    )
    rp.add_argument(
        "--pool",
        metavar="HOSTLIST",
        help="node-set: hosts to choose from, a Slurm hostlist expression (default: every host)",
    )
    rp.add_argument(
        "--ranks",
        type=_positive_int,
        metavar="N",
        help="node-set: hosts to choose (default: the scenario's placed ranks)",
    )
    rp.add_argument(
        "--schedule",
        choices=["barrel-rand", "random-steps", "best"],
        help="schedule: barrel-rand moves each step's conflicting transfers into extra steps; "
        "random-steps builds conflict-free steps of random pairs; best keeps the faster (default)",
    )
    rp.add_argument(
        "--moves",
        type=lambda t: _whole(t, 0),
        metavar="N",
        help="rank-order, node-set: swaps the local search may try (default 50000; 0: none)",
    )
    rp.add_argument("--seed", type=lambda t: _whole(t, 0), default=0, help="seed of the search")
    rp.add_argument(
        "--out",
        metavar="DIR",
        help="write hostfile (rank order) or steps.txt, a scenario that uses it, and repair.json",
    )
    json_arg(rp)
    progress_arg(rp)

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
    json_arg(b)
    b.add_argument(
        "--baseline",
        choices=["none", "alltoall", "isend", "p2p"],
        help="also time, among the same ranks, MPI_Alltoall, the same all-to-all as MPI_Isend/MPI_Irecv (isend), or one-way pairs (p2p) (overrides bench.baseline); --set bench.baseline_cache=cold runs the all-to-alls on memory the cache no longer holds, as the event builder's fresh fragments",
    )
    progress_arg(b)
    b.add_argument(
        "--prepare",
        action="store_true",
        help="only write DIR/run.cfg and print the launch command (for srun/mpirun by hand; then daqnet collect DIR)",
    )
    format_arg(b, "units, timeseries")

    m = sub.add_parser(
        "simulate",
        help="flow-level simulation: step times, or the event builder's protocol over time",
        description="Simulate the scenario with max-min fair sharing of the links. "
        "[simulate] mode = 'steps' times every step of [workload]; 'protocol' runs the "
        "[bench] event builder (credits, in-flight limits, PUSH/PULL) over the fabric.",
    )
    scenario_args(m)
    json_arg(m)
    m.add_argument(
        "--out",
        metavar="DIR",
        help="write result.json and the CSV tables (steps, or units, timeseries, links) into DIR",
    )
    format_arg(m, "steps, link_loads, or units, timeseries, links")
    progress_arg(m)
    threads_arg(m)

    s = sub.add_parser(
        "scan",
        help="simulate (or measure, --bench) every combination of scenario values: a table and a heat map",
        description="Run daqnet simulate for every combination of the --vary values (the "
        "cartesian product, first --vary outermost), in parallel over local cores, or over "
        "MPI ranks when started by mpiexec or srun; with --bench run daqnet bench for every "
        "point instead, one run at a time, --repeat times each. Writes DIR/scan.csv, "
        "scan.json (one row per point) and scan.png. See docs/scan.md.",
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
        "--bench",
        action="store_true",
        help="measure every point with the real event builder (daqnet bench), one run at a "
        "time whatever --jobs; per-run results in DIR/runs.csv and DIR/runs/",
    )
    s.add_argument(
        "--predict",
        action="store_true",
        help="with --bench: also the protocol simulation of every point, as predicted_* "
        "columns beside the measured ones, with their ratio",
    )
    s.add_argument(
        "--repeat",
        type=_positive_int,
        default=1,
        metavar="N",
        help="with --bench: runs per point; the table gives min, median and max (default 1)",
    )
    format_arg(s, "scan, runs")
    json_arg(s, "scan.json")
    progress_arg(s)

    pl = sub.add_parser(
        "plan",
        help="the fat tree for N hosts: switches, cables, cost, bisection, per taper",
        description="Plan a fat tree of --radix-port switches for --hosts hosts at --gbps: "
        "levels, switches per stage, cables per stage (copper and optical), cost from unit "
        "prices, bisection bandwidth and the host count that fills every leaf, one column per "
        "--taper. See docs/plan.md.",
    )
    pl.add_argument("--hosts", type=_plan_hosts, required=True, metavar="N")
    pl.add_argument(
        "--gbps", type=float, default=100.0, metavar="R", help="link rate (default 100)"
    )
    pl.add_argument(
        "--radix", type=_radix, default=36, metavar="K", help="switch ports (default 36)"
    )
    pl.add_argument(
        "--taper",
        action="append",
        metavar="A:B",
        help="leaf down:up ratio, e.g. 2:1 (repeatable: one column each; default 1:1)",
    )
    pl.add_argument("--prices", metavar="FILE", help="unit prices (TOML [prices], docs/plan.md)")
    json_arg(pl)

    st = sub.add_parser(
        "study",
        help="design studies: job mapping on direct networks, tapering of fat trees",
        description="Run a study grid over a scenario with daqnet simulate and write a tidy "
        "table (study.csv, study.json) and figures into --out. 'mapping': every mapping with "
        "direct and indirect routing, for the 2-D and 4-D stencils and the multicast; "
        "'taper': full and tapered fat trees for a stencil, random bisections and an "
        "all-to-all, with the load per stage. See docs/direct-networks.md.",
    )
    st.add_argument("study", choices=["mapping", "taper"])
    scenario_args(st)
    st.add_argument("--out", metavar="DIR", help="output directory (default study-KIND-NAME)")
    st.add_argument(
        "--taper",
        action="append",
        metavar="A:B",
        help="taper study: leaf ratios to compare (default 1:1 and 2:1)",
    )
    st.add_argument(
        "-j",
        "--jobs",
        type=_positive_int,
        metavar="N",
        help="points run at once, each in a process of its own (default: the cores available)",
    )
    json_arg(st, "study.json")
    progress_arg(st)

    r = sub.add_parser(
        "report",
        help="one self-contained HTML page from results of conflicts, simulate, bench, scan, "
        "study, repair, emulate",
        description="Read the results that daqnet conflicts, simulate, bench, scan, study, "
        "repair and emulate wrote with --out (each RESULT_DIR's result.json, scan.json, "
        "study.json, repair.json or emulate.json, recognised by content) and "
        "write one HTML page: scenario, provenance, summary tables, figures, and the "
        "benchmark beside the protocol simulation of the same scenario. See docs/report.md.",
    )
    r.add_argument(
        "results",
        nargs="+",
        metavar="RESULT_DIR",
        help="a directory written with --out (or a result JSON file itself)",
    )
    r.add_argument(
        "-o",
        "--output",
        default="report.html",
        metavar="FILE.html",
        help="the page to write (default report.html)",
    )

    em = sub.add_parser(
        "emulate",
        help="the scenario's fabric in network namespaces: the event builder measured over "
        "it, beside the protocol simulation (root)",
        description="Build the fabric from network namespaces (one per host and switch, a "
        "shaped veth pair per cable, static routes from the routing tables), run daqnet bench "
        "over TCP with every rank in its host's namespace, compare with daqnet simulate, and "
        "tear everything down. See docs/emulate.md.",
    )
    em.add_argument("scenario", nargs="?", help="scenario file (TOML)")
    em.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override a scenario key (repeatable)",
    )
    em.add_argument("--out", metavar="DIR", help="result directory (default: a new one)")
    json_arg(em)
    progress_arg(em)
    em.add_argument(
        "--cleanup",
        action="store_true",
        help="only remove the namespaces that killed runs left behind",
    )

    g = sub.add_parser(
        "collect",
        help="gather the results of a daqnet-evb run started by hand",
        description="Read DIR/rank-N.json and rank-N.csv written by daqnet-evb; write result.json, units.csv, timeseries.csv.",
    )
    g.add_argument("out", metavar="DIR")
    json_arg(g)
    format_arg(g, "units, timeseries, memory")
    return p
