"""``daqnet bench`` and ``daqnet collect``."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..bench.collect import read_json
from ..bench.config import size_warning
from ..bench.launch import RUN_FILES, earlier_run_files
from ..bench.warnings import run_warnings
from ..errors import DaqnetError
from ..io.bench_tables import clean, write_tables
from ..io.files import ensure_dir
from ..io.previous import discard_previous, kept, set_aside
from ..io.result_files import check_not_another
from ..io.table_files import check_format
from ..stops import writing
from .common import EXIT_INTERRUPTED, Progress, emit, load, note, warn

__all__ = ["run_bench", "run_collect"]


def _finish(result: Mapping[str, Any], as_json: bool, label: str, ext: str = "csv") -> int:
    from ..report.bench import summary

    def text(r: Mapping[str, Any]) -> str:
        lines = summary(r, label)
        if r.get("out_dir"):
            lines += f"\n  results      {r['out_dir']}/result.json, units.{ext}, timeseries.{ext}"
            lines += f", memory.{ext}" if r.get("memory") else ""
        return lines

    emit(result, as_json, text, clean)
    for why in result.get("warnings") or []:
        warn(why)
    if result["interrupted"]:
        note(f"interrupted; what was measured is written{kept(result.get('out_dir'))}")
        return EXIT_INTERRUPTED
    bad = result["lost_fragments"] + result["duplicate_fragments"] + result["corrupt_fragments"]
    # degraded: ranks died and the run recovered (bench.recover), every built event intact.
    if result["status"] not in ("finished", "degraded") or bad:
        why = "; ".join(result["errors"]) or f"{bad} lost, duplicate or corrupt fragments"
        note(f"bench failed: {why}{kept(result.get('out_dir'))}")
        return 1
    return 0


def run_bench(args: argparse.Namespace) -> int:
    from .. import bench

    check_not_another(args.out, "bench")
    # --baseline is bench.baseline for this run: the result's recorded scenario (and the
    # report's, and a rerun from it) said "none" beside a p2p baseline's figures.
    sets = [*args.overrides, *([f"bench.baseline={args.baseline}"] if args.baseline else [])]
    scenario = load(args.scenario, sets, "bench")
    if args.prepare:
        # A run says it with its other warnings, and keeps it in the result.
        if why := size_warning(scenario):
            warn(why)
        out = Path(args.out or "daqnet-bench")
        # Launched by hand, maybe on other machines: buffers beyond this one's memory are
        # a warning (the documented 64-rank --prepare was refused on a 24 GiB login node).
        memory: list[str] = []
        cfg = bench.run_config(scenario, memory_warnings=memory)
        for why in memory:
            warn(f"{why}: if the ranks run here; on nodes with more memory, as prepared")
        bench.check_transport_built(scenario)
        ensure_dir(out, "--out")  # once the run description has proved good
        # A complete run there is kept until the one prepared here is collected complete.
        if set_aside(out, "bench", [*earlier_run_files(out), *RUN_FILES]):
            note(f"the complete run in {out} is kept in {out / 'previous'} until this one is")
        bench.write_run_config(cfg, out / "run.cfg", scenario.source)
        bench.write_scenario(scenario, out)
        argv = [bench.executable(), str(out / "run.cfg"), "--out", str(out)]
        n = bench.bench_ranks(scenario)
        note(f"wrote {out}/run.cfg; run it with, e.g.:")
        keep_going = bench.keeps_going(scenario)  # bench.recover: see docs/bench.md
        print(shlex.join(bench.launch_command("srun", n, "", argv, keep_going, check=False)))
        print(shlex.join(bench.launch_command("mpiexec", n, "", argv, keep_going)))
        note(f"then: daqnet collect {out}")
        return 0
    check_format(args.format)
    progress = Progress("bench", args.progress)
    try:
        result = bench.run(scenario, args.out, None, progress.text, args.format)
    except DaqnetError as err:  # e.g. a launcher that did not start: say what was kept
        raise DaqnetError(f"{err}{kept(args.out)}") from None
    finally:
        progress.close()
    # The run is over and its files written: a Ctrl-C now (as its summary appears) is noted,
    # not raised, so the exit status is the result's. It read 130 beside "finished".
    with writing():
        return _finish(result, args.json, scenario.name, args.format)


def run_collect(args: argparse.Namespace) -> int:
    from ..bench import collect

    check_format(args.format)
    result = collect(args.out)
    result.out_dir = args.out
    # A run of daqnet emulate stays one: its rates are the emulated fabric's (collected
    # again without its mark, it was paired with a simulation at 0.001x).
    earlier = read_json(Path(args.out) / "result.json") or {}
    if isinstance(earlier.get("emulated"), dict):
        result.emulated = earlier["emulated"]
    result.warnings = run_warnings(result)
    write_tables(result, args.out, args.format)
    if not result.interrupted and result.status in ("finished", "degraded"):
        discard_previous(args.out)  # what --prepare kept (io.previous)
    # Titled as daqnet bench titles it: the scenario's name, when the directory has it.
    config = result.config or {}
    name = (config.get("values") or {}).get("name") or (
        Path(config["file"]).stem if config.get("file") else args.out
    )
    return _finish(result, args.json, name, args.format)
