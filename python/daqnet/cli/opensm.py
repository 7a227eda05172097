"""``daqnet opensm``: OpenSM's forwarding tables for a scenario's fabric, and a scenario
that uses them."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

from .. import routing as _routing
from ..io.files import write_text_atomic
from ..scenario.derive import derived
from ..subnet_manager import run_opensm
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
    tables = _routing.from_lft_dump(fabric, run.lft_dump, run.subnet_list)
    out = Path(args.out)
    scenario_path = out / "scenario.toml"
    changes: dict[str, dict[str, Any]] = {
        "routing": {
            "engine": "lft-dump",
            "file": "opensm-lfts.dump",
            "subnet_file": "opensm-subnet.lst",
        }
    }
    if scenario["fabric"]["kind"] == "slurm-topology":
        # A topology.conf has no port numbers, so tables over it are refused: the fabric
        # becomes the ibsim net OpenSM routed, with the port numbers its tables use.
        fab = {k: v for k, v in scenario.values["fabric"].items() if v is not None}
        changes["fabric"] = {**fab, "kind": "ibnetdiscover", "file": "fabric.net"}
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
                + ("" if same == d["entries"] else " (docs/opensm.md says why they differ)")
            )
        return "\n".join(lines)

    emit(doc, args.json, text)
    note(f"wrote {out}/: opensm-lfts.dump, opensm-subnet.lst, scenario.toml, opensm.log")
    return 0
