"""``daqnet opensm``: OpenSM's forwarding tables for a scenario's fabric, and a scenario
that uses them."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

from .. import fabric as _fabric
from .. import routing as _routing
from ..io.files import write_text_atomic
from ..scenario.derive import derived, given_keys
from ..subnet_manager import dump_lfts_gap, run_opensm
from .common import EXIT_INTERRUPTED, emit, load, note

__all__ = ["run_opensm_command"]


def run_opensm_command(args: argparse.Namespace) -> int:
    scenario = load(args.scenario, args.overrides, "opensm")
    fabric = scenario.build_fabric()
    # An earlier run's scenario in the same --out would outlive this run's interruption,
    # pointing at the new, partial tables.
    with contextlib.suppress(OSError):  # an --out that is no directory: run_opensm says so
        (Path(args.out) / "scenario.toml").unlink(missing_ok=True)
    try:
        run = run_opensm(fabric, args.engine, args.out, timeout=args.timeout)
    except KeyboardInterrupt:
        # ibsim and OpenSM are stopped on the way out; their logs stay.
        note(
            f"interrupted before OpenSM's tables were read: no scenario written; logs in {args.out}/"
        )
        return EXIT_INTERRUPTED
    # An imported fabric carries the LIDs and GUIDs of the live fabric it was captured from;
    # OpenSM under ibsim numbers its own, which the tables use. So the tables are read, here
    # and by the scenario written, over the net file OpenSM routed: the same names, ports and
    # cables, no LIDs (the subnet list of the run gives them). A topology.conf has no port
    # numbers at all: the same.
    imported = scenario["fabric"]["kind"] in ("ibnetdiscover", "slurm-topology")
    routed = (
        _fabric.from_ibnetdiscover(
            run.net_file, scenario["fabric"]["link_gbps"], scenario["fabric"]["latency_seconds"]
        )
        if imported
        else fabric
    )
    tables = _routing.from_lft_dump(routed, run.lft_dump, run.subnet_list)
    out = Path(args.out)
    scenario_path = out / "scenario.toml"
    changes: dict[str, dict[str, Any]] = {
        "routing": {
            "engine": "lft-dump",
            "file": "opensm-lfts.dump",
            "subnet_file": "opensm-subnet.lst",
        }
    }
    if imported:
        # The net file in place of the capture: its rate and latency as given, nothing else
        # (every default written out put PERCS rates under it).
        rates = {
            k: v for k, v in given_keys(scenario, "fabric").items() if k not in ("kind", "file")
        }
        changes["fabric"] = {**rates, "kind": "ibnetdiscover", "file": "fabric.net"}
    write_text_atomic(
        scenario_path,
        tomli_w.dumps(derived(scenario, f"{scenario.name} (OpenSM {args.engine})", changes)),
    )
    doc: dict[str, Any] = {
        "scenario": args.scenario,
        "engine": args.engine,
        "opensm_version": run.version,
        "seconds": run.seconds,
        "fabric": fabric.describe(),
        "files": {
            "lft_dump": str(run.lft_dump),
            "subnet_list": str(run.subnet_list),
            "scenario": str(scenario_path),
            "log": str(run.log),
        },
    }
    diag = out / "dump_lfts.out"
    gap = dump_lfts_gap(diag) if diag.exists() else None
    if gap is not None:
        # What a cluster's dump_lfts prints on this fabric: said here, not met at import.
        doc["dump_lfts_missing_lid"] = gap
    if fabric.xgft is not None:  # how OpenSM's tables compare with daqnet's D-mod-K
        dmodk = _routing.dmodk(fabric).table()
        differ = int((dmodk != tables.table()).sum())
        doc["dmodk_entries_differing"] = differ
        doc["entries"] = int(dmodk.size)

    def text(d: Mapping[str, Any]) -> str:
        lines = [
            f"daqnet opensm — {args.scenario}",
            f"  OpenSM {d['opensm_version']} routed {d['fabric']} with {d['engine']} "
            f"in {d['seconds']:.2f} s",
            f"  tables     {d['files']['lft_dump']} (and {Path(d['files']['subnet_list']).name})",
            f'  scenario   {d["files"]["scenario"]} (routing.engine = "lft-dump")',
        ]
        if "entries" in d:
            same = d["entries"] - d["dmodk_entries_differing"]
            lines.append(
                f"  vs dmodk   {same:,} of {d['entries']:,} forwarding entries equal"
                + (
                    ""
                    if same == d["entries"]
                    else " (docs/opensm.md says why they differ)"
                    if d["engine"] == "ftree"
                    # updn, minhop, dfsssp pick up-ports by their own counters, no D-mod-K.
                    else f" ({d['engine']} balances up-ports by its own counters, not by "
                    "D-mod-K; daqnet conflicts on the scenario written compares the two)"
                )
            )
        return "\n".join(lines)

    emit(doc, args.json, text)
    note(f"wrote {out}/: opensm-lfts.dump, opensm-subnet.lst, scenario.toml, opensm.log")
    if gap is not None:
        note(
            f"{diag} leaves out LID {gap:#x}, the fabric's top: ibroute and dump_lfts "
            "(infiniband-diags) drop a top LID that begins a block of 64, so that dump routes "
            "no host there; the scenario reads opensm-lfts.dump, which holds it"
        )
    return 0
