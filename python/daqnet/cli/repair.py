"""``daqnet repair``: a rank order, a node set or a schedule that the scenario's tables serve
without conflicts, with the gain the analysis and the step simulation predict."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w

from ..errors import DaqnetError
from ..io.files import ensure_dir, write_text_atomic
from ..io.steps_file import write_steps
from ..placement import from_hostlist
from ..provenance import provenance
from ..repair import (
    Judge,
    RepairResult,
    repair_node_set,
    repair_rank_order,
    repair_schedule,
)
from ..repair.launch_lines import launch_lines
from ..scenario.derive import derived
from ..simulate.model import network_model
from .common import EXIT_INTERRUPTED, Progress, emit, load, note

__all__ = ["run_repair"]


def _pool(fabric: Any, expression: str | None) -> np.ndarray:
    """Host ids of --pool (a hostlist expression), or every host."""
    if expression is None:
        return np.arange(fabric.num_hosts, dtype=np.int32)
    return from_hostlist(fabric, expression, where="--pool").hosts


def run_repair(args: argparse.Namespace) -> int:
    from ..report.repair import repair_summary

    if args.what != "node-set" and (args.pool is not None or args.ranks is not None):
        raise DaqnetError("--pool and --ranks belong to --what node-set")
    # Refused as --pool is, not taken in silence.
    if args.what != "schedule" and args.schedule is not None:
        raise DaqnetError("--schedule belongs to --what schedule")
    if args.what == "schedule" and args.moves is not None:
        raise DaqnetError("--moves belongs to --what rank-order and node-set")
    args.schedule = args.schedule or "best"
    args.moves = 50_000 if args.moves is None else args.moves
    scenario = load(args.scenario, args.overrides, "repair")
    fabric, routing, placement, workload = scenario.build()
    if args.out is not None:  # made once the scenario has proved good (a bad one left it empty)
        ensure_dir(args.out, "--out")
    message = scenario.message_bytes()
    progress = Progress(f"repair {args.what}", args.progress, unit="move")
    judge = Judge(routing, network_model(scenario, routing), message)
    names = fabric.host_names
    try:
        before = int(judge.conflicts(placement.hosts, workload).total_conflicts)
        seconds_before = judge.seconds(placement.hosts, workload)
        extra: dict[str, Any] = {}
        hosts_after = placement.hosts
        workload_after = workload
        if args.what == "rank-order":
            found = repair_rank_order(
                routing, placement.hosts, workload, judge, args.moves, args.seed, progress
            )
            hosts_after = found.hosts
            extra = _order_fields(found)
        elif args.what == "node-set":
            ranks = args.ranks or placement.ranks
            pool = _pool(fabric, args.pool)
            ns = repair_node_set(
                routing,
                pool,
                ranks,
                scenario.build_workload,
                judge,
                args.moves,
                args.seed,
                progress,
                order=placement.hosts,
            )
            workload = ns.workload
            before = int(judge.conflicts(ns.given, workload).total_conflicts)
            seconds_before = judge.seconds(ns.given, workload)
            workload_after = workload
            hosts_after = ns.hosts
            extra = _order_fields(ns.chosen)
            extra["method"] = ns.keep_given or "whole leaves, fullest first; " + ns.chosen.method
            extra["candidates"] = ns.tried
            if ns.nearest is None and ns.chosen.conflicts > 0 and not ns.chosen.interrupted:
                # Said, not left to the reader: no larger set of whole leaves of the pool
                # runs without conflicts (the pool may have none to add).
                extra["no_nearest"] = (
                    f"no set of whole leaves from the pool ({len(pool):,} hosts) runs "
                    f"{ranks:,} ranks or more without conflicts"
                    + (
                        f" (tried {', '.join(str(t['ranks']) for t in ns.tried)} hosts)"
                        if len(ns.tried) > 1
                        else ""
                    )
                )
            if ns.nearest is not None and ns.nearest[0] != ranks:
                n2, o2 = ns.nearest
                w2 = scenario.build_workload(n2)
                extra["nearest"] = {
                    "ranks": n2,
                    "conflicts": o2.conflicts,
                    "seconds": judge.seconds(o2.hosts, w2),
                    "hosts": [names[h] for h in o2.hosts],
                }
        else:
            sf = repair_schedule(
                routing, placement.hosts, workload, judge, args.schedule, args.seed
            )
            workload_after = sf.workload
            extra = {
                "method": sf.method,
                "candidates": sf.candidates,
                "steps_before": workload.num_steps,
                "steps_after": len(sf.steps),
                "steps": [s.tolist() for s in sf.steps],
            }
        after = int(judge.conflicts(hosts_after, workload_after).total_conflicts)
        seconds_after = judge.seconds(hosts_after, workload_after)
        interrupted = bool(extra.pop("interrupted", False))
        progress.close(complete=not interrupted)  # a search that ended early ended
    except KeyboardInterrupt:
        progress.close()
        note("interrupted before a repair was found; nothing written")
        return EXIT_INTERRUPTED
    finally:
        progress.close()
    if args.what != "schedule":
        extra["hosts"] = [names[h] for h in hosts_after]
    result = RepairResult(
        what=args.what,
        scenario=args.scenario,
        name=scenario.name,
        fabric=fabric.describe(),
        routing=routing.engine,
        workload=workload.describe(),
        ranks=len(hosts_after),
        message_bytes=message,
        conflicts_before=before,
        conflicts_after=after,
        seconds_before=seconds_before,
        seconds_after=seconds_after,
        speedup=seconds_before / seconds_after if seconds_after > 0 else 1.0,
        interrupted=interrupted,
        config=scenario.effective(),
        provenance=provenance(),
        **extra,
    )
    if args.out is not None:
        _write(args.out, scenario, result, workload_after if args.what == "schedule" else None)
    emit(result, args.json, repair_summary)
    if interrupted:
        note("interrupted: the best repair found so far is reported")
        return EXIT_INTERRUPTED
    return 0


def _order_fields(found: Any) -> dict[str, Any]:
    return {
        "method": found.method,
        "lower_bound": found.lower_bound,
        "candidates": found.candidates,
        "search": found.search,
        "interrupted": found.interrupted,
    }


def _write(out_dir: str, scenario: Any, result: RepairResult, steps_workload: Any) -> None:
    out = Path(out_dir)
    files: dict[str, str] = {}
    scenario_path = out / "scenario.toml"
    name = f"{scenario.name} (repaired {result.what})"
    if result.what == "schedule":
        assert result.steps is not None
        write_steps(
            out / "steps.txt",
            [np.array(s, dtype=np.int32).reshape(-1, 2) for s in result.steps],
            f"daqnet repair --what schedule ({result.method}) of {scenario.source}\n"
            "one step per line, SRC>DST ranks",
        )
        files["steps"] = str(out / "steps.txt")
        changes: dict[str, Any] = {"workload": {"kind": "steps", "file": "steps.txt"}}
    else:
        assert result.hosts is not None
        write_text_atomic(out / "hostfile", "\n".join(result.hosts) + "\n")
        files["hostfile"] = str(out / "hostfile")
        changes = {"placement": {"order": "file", "file": "hostfile"}}
        result.launch = launch_lines(out / "hostfile", result.hosts, scenario_path)
        if result.nearest is not None:
            n2 = result.nearest["ranks"]
            path = out / f"hostfile-{n2}"
            write_text_atomic(path, "\n".join(result.nearest["hosts"]) + "\n")
            files[f"hostfile_{n2}"] = str(path)
    # What the repair leaves meaningful of the sections it replaces: the message size of the
    # schedule's flows, the number of ranks placed.
    keep: dict[str, tuple[str, ...]] = {"workload": ("message_bytes",), "placement": ("ranks",)}
    write_text_atomic(scenario_path, tomli_w.dumps(derived(scenario, name, changes, keep)))
    files["scenario"] = str(scenario_path)
    files["result"] = str(out / "repair.json")
    result.files = files
    write_text_atomic(out / "repair.json", json.dumps(result.to_dict(), indent=1) + "\n")
