#!/usr/bin/env python3
"""Benchmark: barrel-shift static conflict analysis, daqnet vs a plain numpy reference.

    python3 bench/conflicts/run.py                   # full benchmark (540 and 4,500 hosts)
    python3 bench/conflicts/run.py --write-baseline  # ... and write bench/conflicts/baseline.json
    python3 bench/conflicts/run.py --check           # tiny cases, results only (CI; 1 on mismatch)

Every case analyses all N-1 barrel steps (rank i sends to rank (i + s) mod N) with D-mod-k
routing. The numpy reference below is written independently of daqnet's analysis: it only
reads the fabric's port list and the routing table (the array of output ports that daqnet
also starts from). Both sides are timed on the same work, twice (see README.md):

- analysis on a route cache: daqnet's (built by daqnet) against numpy's own cache of
  every (edge switch, destination) route as link ids, both built outside the timed region
  and reported apart;
- end to end from the table: daqnet builds and checks its routes from the port array and
  analyses; numpy walks every flow hop by hop through the table.

Per-step results must be equal, so every ratio compares equal work.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import daqnet
import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "bench"))
from provenance import git_commit, machine, maxrss_mib, timed  # noqa: E402

# (label, fat_tree kwargs, placement, daqnet repetitions (after 1 warm-up), numpy repetitions)
FULL_CASES = [
    ("540 hosts, radix 36, 2 levels", dict(radix=36, hosts=540, levels=2), "topology", 11, 3),
    ("4500 hosts, radix 36, 3 levels", dict(radix=36, hosts=4500, levels=3), "topology", 3, 3),
]
# Tiny deterministic cases for --check; the hostname/random ones do have conflicts.
CHECK_CASES = [
    ("72 hosts, radix 36, 2 levels", dict(radix=36, hosts=72, levels=2), "topology", 1, 1),
    (
        "64 hosts, radix 36, shuffled names, hostname order",
        dict(radix=36, hosts=64, levels=2, naming="shuffled", naming_seed=3),
        "hostname",
        1,
        1,
    ),
    (
        "96 hosts, radix 8, 3 levels, random order",
        dict(radix=8, hosts=96, levels=3),
        "random",
        1,
        1,
    ),
]
TARGET_SECONDS = {540: 0.050, 4500: 2.0}  # daqnet median per full analysis
SAMPLE_EVERY = 10  # numpy subset: every 10th step, if all steps would exceed the budget


# -- numpy reference ---------------------------------------------------------------------
class NumpyReference:
    """Plain arrays describing the fabric: out-link per (node, port), link heads, tables."""

    def __init__(self, fab: daqnet.Fabric, rt: daqnet.routing.Routing):
        self.num_hosts = fab.num_hosts
        self.num_links = fab.num_links
        nodes = fab.num_hosts + fab.num_switches
        ports = [fab.ports(v) for v in range(nodes)]
        width = 1 + max(p for plist in ports for p, *_ in plist)
        self.out_link = np.full((nodes, width), -1, dtype=np.int64)  # -1: no such port
        for v, plist in enumerate(ports):
            for port, _peer, _peer_port, link in plist:
                self.out_link[v, port] = link
        self.link_dst = fab.links()["dst"].astype(np.int64)
        self.table = rt.table().astype(np.int64)  # (switch row, dst host) -> port; 0 = none
        self.max_hops = nodes  # any longer route is a loop

    def step_loads(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Flows per link for flows src[i] -> dst[i] (host ids), walking all flows at once."""
        keep = src != dst  # two ranks on one host use no link
        node, dst = src[keep], dst[keep]
        link = self.out_link[node, 1]  # a host's only port is port 1: its uplink
        walked = []
        for _ in range(self.max_hops):
            if (link < 0).any():
                raise AssertionError("numpy reference: a route uses a missing port")
            walked.append(link)
            node = self.link_dst[link]
            more = node != dst
            if not more.any():
                return np.bincount(np.concatenate(walked), minlength=self.num_links)
            node, dst = node[more], dst[more]
            if (node < self.num_hosts).any():
                raise AssertionError("numpy reference: a flow was delivered to the wrong host")
            link = self.out_link[node, self.table[node - self.num_hosts, dst]]
        raise AssertionError("numpy reference: routing loop")

    def build_cache(self) -> None:
        """Every route from a host's edge switch to every host, as a padded array of link ids
        (-1 after the end): the same per-(edge switch, destination) cache daqnet keeps."""
        uplink = self.out_link[np.arange(self.num_hosts), 1]
        edge_of_host = self.link_dst[uplink]
        self.edges, self.edge_index = np.unique(edge_of_host, return_inverse=True)
        self.uplink = uplink
        e, d = np.meshgrid(np.arange(len(self.edges)), np.arange(self.num_hosts), indexing="ij")
        node, dst = self.edges[e.ravel()], d.ravel()
        hops = []
        live = np.arange(node.size)
        for _ in range(self.max_hops):
            link = self.out_link[node, self.table[node - self.num_hosts, dst]]
            if (link < 0).any():
                raise AssertionError("numpy reference: a route uses a missing port")
            col = np.full(e.size, -1, dtype=np.int32)
            col[live] = link
            hops.append(col)
            node = self.link_dst[link]
            more = node != dst
            if not more.any():
                break
            node, dst, live = node[more], dst[more], live[more]
        self.cache = np.stack(hops, axis=1).reshape(len(self.edges), self.num_hosts, len(hops))

    def step_loads_cached(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """As step_loads, but reading each route from the cache (build_cache first)."""
        keep = src != dst
        src, dst = src[keep], dst[keep]
        tails = self.cache[self.edge_index[src], dst].ravel()
        links = np.concatenate([self.uplink[src], tails[tails >= 0]])
        return np.bincount(links, minlength=self.num_links)

    def barrel(self, hosts: np.ndarray, steps, cached: bool = False) -> dict[str, np.ndarray]:
        """Per-step statistics of barrel steps `steps` (1..N-1) for placement `hosts`, walking
        the tables hop by hop, or (`cached`) reading routes from build_cache()'s array."""
        n = len(hosts)
        rank = np.arange(n)
        loads = self.step_loads_cached if cached else self.step_loads
        rows = []
        for s in steps:
            load = loads(hosts, hosts[(rank + s) % n])
            rows.append(
                (
                    int(np.maximum(load - 1, 0).sum()),  # conflicts
                    int(load.max()),  # max link load
                    int(np.count_nonzero(load)),  # links used
                    int(np.count_nonzero(load > 1)),  # conflicting links
                    int(load.sum()),  # link traversals
                )
            )
        cols = np.array(rows, dtype=np.int64).reshape(-1, 5).T
        keys = ("conflicts", "max_link_load", "links_used", "conflicting_links", "traversals")
        return {"step": np.asarray(list(steps)), **dict(zip(keys, cols, strict=True))}


# -- helpers -----------------------------------------------------------------------------
def rss_mib() -> float:
    """Current resident memory (Linux /proc; NaN elsewhere)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return float("nan")
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def build(kwargs: dict, order: str):
    t0 = time.perf_counter()
    fab = daqnet.fat_tree(**kwargs)
    t1 = time.perf_counter()
    rt = daqnet.routing.dmodk(fab)
    t2 = time.perf_counter()
    pl = daqnet.placement.build(fab, order, seed=1)
    wl = daqnet.workload.event_building(pl.ranks, schedule="barrel")
    return fab, rt, pl, wl, t1 - t0, t2 - t1


def check_barrel(wl, n: int, steps) -> None:
    """The numpy reference regenerates barrel steps; make sure they are daqnet's."""
    rank = np.arange(n)
    for s in steps:
        if not np.array_equal(wl.step(s), np.column_stack([rank, (rank + s) % n])):
            raise AssertionError(f"workload step {s} is not the barrel step the reference assumes")


def compare(rep, ref: dict, all_steps: bool) -> list[str]:
    """Differences between daqnet's report and the reference (empty list: equal)."""
    ours = rep.steps()
    idx = ref["step"] - 1
    errors = []
    for key in ("conflicts", "max_link_load", "links_used", "conflicting_links"):
        bad = np.flatnonzero(ours[key][idx] != ref[key])
        if bad.size:
            s = int(ref["step"][bad[0]])
            errors.append(
                f"{key} differs in {bad.size} step(s), first step {s}: "
                f"daqnet {ours[key][s - 1]} numpy {ref[key][bad[0]]}"
            )
    if all_steps:
        totals = {
            "total_conflicts": (rep.total_conflicts, int(ref["conflicts"].sum())),
            "max_link_load": (rep.max_link_load, int(ref["max_link_load"].max())),
            "total_link_traversals": (rep.total_link_traversals, int(ref["traversals"].sum())),
        }
        errors += [f"{k}: daqnet {a} numpy {b}" for k, (a, b) in totals.items() if a != b]
    return errors


# -- one case ------------------------------------------------------------------------------
def run_case(label, kwargs, order, reps, np_reps, budget: float, timing: bool) -> dict:
    fab, rt, pl, wl, t_fabric, t_routing = build(kwargs, order)
    n, steps = pl.ranks, wl.num_steps
    all_steps = range(1, steps + 1)
    check_barrel(wl, n, all_steps)
    table = rt.table()

    # Route building from the same port array on both sides (reported, not in the ratios
    # of the cached comparison).
    t_daq_routes, rt = timed(lambda: daqnet.routing.from_ports(fab, table, "dmodk"), 1)
    ref_arrays = NumpyReference(fab, rt)
    t_np_routes, _ = timed(ref_arrays.build_cache, 1)

    rss_now, rss0 = rss_mib(), maxrss_mib()  # before the daqnet runs: current and peak
    times, rep = timed(lambda: daqnet.conflicts(rt, pl, wl, threads=1), reps, warmup=1)
    rss1 = maxrss_mib()

    def numpy_time(cached: bool):
        """Median over all steps, or a subset scaled up when all would exceed the budget."""
        sample, projected = range(1, steps + 1, SAMPLE_EVERY), 0.0
        if timing:
            t_sample, ref = timed(lambda: ref_arrays.barrel(pl.hosts, sample, cached), 1)
            projected = t_sample[0] / len(sample) * steps
        if projected <= budget:
            np_times, ref = timed(lambda: ref_arrays.barrel(pl.hosts, all_steps, cached), np_reps)
            return statistics.median(np_times), f"all {steps} steps, median of {np_reps}", ref
        mode = (
            f"EXTRAPOLATED: timed {len(sample)} of {steps} steps (every {SAMPLE_EVERY}th), "
            f"x {steps / len(sample):.2f}"
        )
        return projected, mode, ref

    np_cached_s, np_cached_mode, ref_cached = numpy_time(cached=True)
    np_walk_s, np_walk_mode, ref = numpy_time(cached=False)
    rss2 = maxrss_mib()

    errors = compare(rep, ref, all_steps=len(ref["step"]) == steps)
    errors += [
        f"cached reference: {e}" for e in compare(rep, ref_cached, len(ref_cached["step"]) == steps)
    ]
    median = statistics.median(times)
    end_to_end = t_daq_routes[0] + median
    return {
        "case": label,
        "fabric": {**kwargs, "describe": fab.describe()},
        "placement": order,
        "routing": "dmodk",
        "schedule": "barrel",
        "ranks": n,
        "steps": steps,
        "total_conflicts": rep.total_conflicts,
        "max_link_load": rep.max_link_load,
        "total_link_traversals": rep.total_link_traversals,
        "fabric_build_s": t_fabric,
        "dmodk_tables_s": t_routing,
        "daqnet_routes_from_table_s": t_daq_routes[0],
        "numpy_routes_from_table_s": t_np_routes[0],
        "daqnet_reps": reps,
        "daqnet_times_s": times,
        "daqnet_median_s": median,
        "daqnet_min_s": min(times),
        "daqnet_max_s": max(times),
        "rss_before_daqnet_mib": rss_now,
        "daqnet_maxrss_mib": rss1,
        "daqnet_maxrss_delta_mib": rss1 - rss0,
        "numpy_cached_s": np_cached_s,
        "numpy_cached_mode": np_cached_mode,
        "numpy_walk_s": np_walk_s,
        "numpy_walk_mode": np_walk_mode,
        "numpy_steps_checked": len(ref["step"]),
        "numpy_maxrss_mib": rss2,
        "numpy_maxrss_delta_mib": rss2 - rss1,
        "ratio_cached": np_cached_s / median,
        "daqnet_end_to_end_s": end_to_end,
        "ratio_end_to_end": np_walk_s / end_to_end,
        "equal": not errors,
        "errors": errors,
    }


# -- reporting -----------------------------------------------------------------------------
def pin_one_core() -> str:
    """Run on one CPU: daqnet runs with threads=1 and the reference uses no BLAS (threads
    are measured by bench/scaling)."""
    if not hasattr(os, "sched_setaffinity"):
        return "single-threaded (not pinned: no sched_setaffinity)"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"single-threaded, pinned to CPU {cpu}"


def print_table(results: list[dict]) -> None:
    head = (
        f"{'case':<32} {'daqnet median s':>15} {'spread (min-max) s':>21} "
        f"{'numpy cached s':>14} {'ratio':>7}  {'daqnet e2e s':>12} {'numpy walk s':>12} {'ratio':>7}"
    )
    print("same route cache: analysis only | end to end from the port table: routes + analysis")
    print(head)
    print("-" * len(head))
    for r in results:
        spread = f"{r['daqnet_min_s']:.4f}-{r['daqnet_max_s']:.4f}"
        star_c = "*" if r["numpy_cached_mode"].startswith("EXTRAPOLATED") else " "
        star_w = "*" if r["numpy_walk_mode"].startswith("EXTRAPOLATED") else " "
        print(
            f"{r['case']:<32} {r['daqnet_median_s']:>15.4f} {spread:>21} "
            f"{r['numpy_cached_s']:>13.3f}{star_c} {r['ratio_cached']:>6.1f}x  "
            f"{r['daqnet_end_to_end_s']:>12.3f} {r['numpy_walk_s']:>11.3f}{star_w} "
            f"{r['ratio_end_to_end']:>6.1f}x"
        )
    print()
    for r in results:
        print(f"{r['case']}:")
        reps = ", ".join(f"{t:.4f}" for t in r["daqnet_times_s"])
        print(
            f"  ranks {r['ranks']}, steps {r['steps']}, conflicts {r['total_conflicts']}, "
            f"max link load {r['max_link_load']}, link traversals {r['total_link_traversals']}"
        )
        print(
            f"  route building from the port table: daqnet {r['daqnet_routes_from_table_s']:.4f} s "
            f"(checked, cached), numpy {r['numpy_routes_from_table_s']:.4f} s (cache only); "
            f"dmodk tables {r['dmodk_tables_s']:.4f} s, fabric {r['fabric_build_s']:.4f} s"
        )
        print(
            f"  daqnet: 1 warm-up + {r['daqnet_reps']} reps {reps} s; RSS before "
            f"{r['rss_before_daqnet_mib']:.1f} MiB, peak after {r['daqnet_maxrss_mib']:.1f} MiB "
            f"(+{r['daqnet_maxrss_delta_mib']:.1f})"
        )
        print(
            f"  numpy cached: {r['numpy_cached_mode']}; hop walk: {r['numpy_walk_mode']}; "
            f"peak after {r['numpy_maxrss_mib']:.1f} MiB (+{r['numpy_maxrss_delta_mib']:.1f})"
        )
        print(f"  results equal on {r['numpy_steps_checked']}/{r['steps']} steps: {r['equal']}")
    if any("EXTRAPOLATED" in r["numpy_cached_mode"] + r["numpy_walk_mode"] for r in results):
        print("  * numpy time extrapolated from a subset of steps (see above)")


def print_targets(results: list[dict]) -> None:
    print("\ntargets (reported, not asserted):")
    for r in results:
        limit = TARGET_SECONDS.get(r["ranks"])
        if limit is not None:
            ok = r["daqnet_median_s"] < limit
            print(
                f"  {r['case']}: median {r['daqnet_median_s'] * 1e3:.1f} ms "
                f"< {limit * 1e3:.0f} ms: {'met' if ok else 'NOT met'}"
            )
    print(
        "  memory (note): peak = process ru_maxrss after each phase; (+delta) counts only "
        "growth above the earlier peak, so a phase's own extra memory is at most "
        "peak - RSS before"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="tiny cases, compare results only")
    ap.add_argument(
        "--write-baseline", action="store_true", help="write bench/conflicts/baseline.json"
    )
    ap.add_argument("--json", type=Path, help="also write the results to this file")
    ap.add_argument(
        "--numpy-budget",
        type=float,
        default=60.0,
        metavar="S",
        help="time numpy on all steps if projected under S seconds, else extrapolate",
    )
    args = ap.parse_args(argv)
    if args.check and args.write_baseline:
        ap.error("--check results are not a baseline")

    t_start = time.perf_counter()
    threads = pin_one_core()
    cases = CHECK_CASES if args.check else FULL_CASES
    results = []
    for label, kwargs, order, reps, np_reps in cases:
        r = run_case(label, kwargs, order, reps, np_reps, args.numpy_budget, timing=not args.check)
        results.append(r)
        if args.check:
            status = "ok" if r["equal"] else "MISMATCH"
            print(
                f"{label}: {status} ({r['steps']} steps, {r['total_conflicts']} conflicts, "
                f"max load {r['max_link_load']})"
            )
        for e in r["errors"]:
            print(f"  MISMATCH {label}: {e}", file=sys.stderr)

    if not args.check:
        print(
            f"daqnet {getattr(daqnet, '__version__', '?')}, {threads}; "
            f"{machine()['cpu_model']}, nproc {os.cpu_count()}\n"
        )
        print_table(results)
        print_targets(results)
    print(f"\nwall time {time.perf_counter() - t_start:.2f} s")

    out = {
        "benchmark": "barrel-shift static conflict analysis, daqnet.conflicts vs numpy reference",
        "units": {
            "time": "seconds",
            "memory": "MiB, process ru_maxrss after the phase; *_delta: growth over it",
            "ratio_cached": "numpy_cached_s / daqnet_median_s (both read a route cache built before)",
            "ratio_end_to_end": "numpy_walk_s / (daqnet_routes_from_table_s + daqnet_median_s)",
        },
        "git": git_commit("bench/conflicts"),
        "machine": machine(),
        "threads": threads,
        "mode": "check" if args.check else "full",
        "targets": {"daqnet_median_max_s_by_hosts": TARGET_SECONDS},
        "cases": results,
    }
    ok = all(r["equal"] for r in results)
    if not ok:
        print("\nFAILED: daqnet and the numpy reference disagree (see MISMATCH above)")
    paths = [args.json] if args.json else []
    if args.write_baseline and ok:
        paths.append(HERE / "baseline.json")
    for p in paths:
        p.write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {p}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
