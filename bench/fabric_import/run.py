#!/usr/bin/env python3
"""Benchmark: importing a real fabric, analysing it, and repairing its rank order.

    python3 bench/fabric_import/run.py           # 540-host and 512-host OpenSM-routed fabrics
    python3 bench/fabric_import/run.py --check   # the committed 27-host corpus, results only

The fabrics are made by the real tools: ``daqnet opensm`` runs OpenSM's ftree engine under
ibsim and captures ``ibnetdiscover`` and OpenSM's ``opensm-lfts.dump`` (needs Debian's
opensm, ibsim-utils, libumad2sim0, infiniband-diags). Every figure is a ratio against a
baseline timed in the same run:

- import: daqnet's readers (topology, then forwarding tables) against reading the same
  files with a plain Python ``line.split()`` loop, which parses nothing;
- analysis: the full barrel on the imported fabric against the same analysis on the
  fat tree daqnet builds itself (same size, D-mod-K): the imported one must cost the same,
  and, as OpenSM's ftree equals D-mod-K here, give the same conflicts;
- repair: the rank-order repair of 512 hosts (hostname order) in seconds, and the
  incremental local search's cost per swap against one full analysis (what a search that
  re-analyses per swap would pay).
See README.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from daqnet import _core, conflicts, fabric, placement, routing, workload
from daqnet.repair import Judge, repair_rank_order

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "data" / "ib"


def timed(fn, reps: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def plain_split(*paths: Path) -> int:
    n = 0
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                n += len(line.split())
    return n


def opensm_fabric(tmp: Path, radix: int, hosts: int, levels: int = 2) -> Path:
    scen = tmp / f"f{hosts}.toml"
    scen.write_text(
        f'[fabric]\nradix = {radix}\nhosts = {hosts}\nlevels = {levels}\nnaming = "shuffled"\n'
        '[placement]\norder = "hostname"\n'
    )
    out = tmp / f"sm{hosts}"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "daqnet",
            "opensm",
            str(scen),
            "--engine",
            "ftree",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        sys.exit(
            f"daqnet opensm failed (are opensm, ibsim-utils, libumad2sim0 installed?):\n{r.stderr}"
        )
    return out


def import_case(
    label: str, topo: Path, lfts: Path, reps: int, built: dict, must_equal: bool
) -> None:
    t_split, _ = timed(lambda: plain_split(topo, lfts), reps)
    t_fab, fab = timed(lambda: fabric.from_ibnetdiscover(topo), reps)
    t_lft, rt = timed(lambda: routing.from_lft_dump(fab, lfts), reps)
    ports = sum(len(fab.ports(n)) for n in range(len(fab.node_names)))
    print(f"{label}: {fab.num_hosts} hosts, {fab.num_switches} switches, {ports:,} ports")
    print(
        f"  import     topology {t_fab * 1e3:.1f} ms + tables {t_lft * 1e3:.1f} ms; "
        f"plain split of both files {t_split * 1e3:.1f} ms: "
        f"x{(t_fab + t_lft) / t_split:.2f} of a plain split"
    )
    pl = placement.hostname(fab)
    wl = workload.event_building(pl.ranks)
    t_an, rep = timed(lambda: conflicts(rt, pl, wl), reps)
    print(
        f"  analysis   full barrel {t_an * 1e3:.1f} ms ({rep.total_conflicts:,} conflicts); "
        f"import is x{(t_fab + t_lft) / t_an:.2f} of the analysis"
    )
    # The same fabric built by daqnet, hosts in the same name order.
    if built:
        f2 = fabric.fat_tree(**built)
        r2 = routing.dmodk(f2)
        idx = {n: i for i, n in enumerate(f2.host_names)}
        p2 = placement.Placement(f2, np.array([idx[n] for n in pl.host_names()]), "hostname")
        t_b, rep2 = timed(lambda: conflicts(r2, p2, wl), reps)
        same = rep2.total_conflicts == rep.total_conflicts
        print(
            f"  vs built   D-mod-K fat tree {t_b * 1e3:.1f} ms: imported/built x{t_an / t_b:.2f}; "
            f"conflicts {'equal' if same else 'DIFFER'} ({rep2.total_conflicts:,})"
        )
        if not same and must_equal:
            sys.exit("MISMATCH: OpenSM ftree and D-mod-K disagree on this fabric")


def repair_case(label: str, topo: Path, lfts: Path, reps: int) -> None:
    fab = fabric.from_ibnetdiscover(topo)
    rt = routing.from_lft_dump(fab, lfts)
    pl = placement.hostname(fab)
    wl = workload.event_building(pl.ranks)
    judge = Judge(rt, _core.simulate.NetworkModel(rt._core, 0.0, 0.0), 2**20)
    t_rep, found = timed(lambda: repair_rank_order(rt, pl.hosts, wl, judge, moves=0), reps)
    t_an, rep = timed(lambda: conflicts(rt, pl, wl), reps)
    print(f"{label}: rank-order repair of {pl.ranks} hosts")
    print(
        f"  repair     {t_rep * 1e3:.1f} ms: {rep.total_conflicts:,} -> {found.conflicts:,} conflicts "
        f"(x{t_rep / t_an:.1f} of one full analysis, {t_an * 1e3:.1f} ms)"
    )
    if found.conflicts != 0:
        sys.exit("MISMATCH: the table order of a full OpenSM ftree fabric should be conflict-free")
    moves = 20_000
    rnd = placement.random(fab, seed=1)
    t_s, res = timed(
        lambda: _core.analysis.improve_rank_order(rt._core, rnd.hosts, wl._core, 1, moves)[0], 1
    )
    per_move = t_s / max(res.moves, 1)
    print(
        f"  search     {res.moves:,} swaps in {t_s:.2f} s ({per_move * 1e6:.0f} us each): "
        f"x{t_an / per_move:.0f} cheaper than a full analysis per swap"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="the 27-host corpus, results only")
    args = ap.parse_args()
    if args.check:
        fab = fabric.from_ibnetdiscover(CORPUS / "ibnetdiscover-27.out")
        rt = routing.from_lft_dump(fab, CORPUS / "opensm-lfts-27.dump")
        pl = placement.hostname(fab)
        wl = workload.event_building(pl.ranks)
        judge = Judge(rt, _core.simulate.NetworkModel(rt._core, 0.0, 0.0), 2**20)
        found = repair_rank_order(rt, pl.hosts, wl, judge, moves=2000)
        again = conflicts(rt, placement.Placement(fab, found.hosts, "file"), wl).total_conflicts
        if again != found.conflicts:
            print(f"MISMATCH: repair says {found.conflicts}, the analysis {again}")
            return 1
        print(f"ok: 27-host corpus imported, repair {found.conflicts} conflicts confirmed")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        sm = opensm_fabric(Path(tmp), 36, 540)
        import_case(
            "540 hosts, radix 36, OpenSM ftree",
            sm / "ibnetdiscover.out",
            sm / "opensm-lfts.dump",
            5,
            dict(radix=36, hosts=540, levels=2, naming="shuffled"),
            True,
        )
        # 3 levels: ftree's spine up-ports differ from D-mod-K's (docs/opensm.md), so the
        # conflicts may differ; the cost must not.
        sm = opensm_fabric(Path(tmp), 36, 2592, levels=3)
        import_case(
            "2592 hosts, radix 36, 3 levels, OpenSM ftree",
            sm / "ibnetdiscover.out",
            sm / "opensm-lfts.dump",
            3,
            dict(radix=36, hosts=2592, levels=3, naming="shuffled"),
            False,
        )
        sm = opensm_fabric(Path(tmp), 32, 512)
        repair_case(
            "512 hosts, radix 32, OpenSM ftree",
            sm / "ibnetdiscover.out",
            sm / "opensm-lfts.dump",
            5,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
