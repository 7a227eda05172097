#!/usr/bin/env python3
"""Benchmark: how analysis and simulation time and memory grow with the fabric, and with threads.

    python3 bench/scaling/run.py                   # full: 64 -> 27,648 hosts, threads 1 -> cores
    python3 bench/scaling/run.py --write-baseline  # ... and baseline.json, docs/figures/scaling.png
    python3 bench/scaling/run.py --check           # small sizes only (CI; exit 1 on failure)

Sizes: two-level radix-48 fat trees from 64 hosts to their capacity (1,152), three-level
radix-48 trees from 1,152 to theirs (27,648), D-mod-K routing, topology order. Per size, each
in a fresh process so that its peak memory is its own:

- routes: building and checking the forwarding tables (dmodk);
- analysis: the full barrel shift (all N-1 steps, N(N-1) flows) on every core;
- simulation: 16 barrel steps spread over the N-1 (steps mode, 1 MiB) on every core,
  reported per step (fabric and routes built before the timed call).

Growth exponents are least-squares slopes of log(time) and log(memory) against log(hosts)
over each series (memory: peak above the interpreter with numpy and daqnet imported): 2
for work proportional to the flows of a barrel, N(N-1), or to a table of switches x hosts.
Small sizes take milliseconds, where timing noise weighs most.

Threads: the analysis and the simulation of one size (9,216 hosts, 3 levels), each over the
full barrel (all N-1 steps, the targets), and the short 16-step simulation, on 1, 2, ...
cores threads. The baseline is the machine's own ceiling, measured in the same run: the
same single-threaded run started in as many processes at once as there are cores; the
speed-up they reach together (cores x single time / their time) is what threads can
reach at best where cores share caches, memory bandwidth or a physical core. Each is
repeated --reps times, in turn; the ratios are of medians, with the per-round range.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "bench"))
from provenance import git_commit, machine, spread, write_json  # noqa: E402

TWO_LEVEL = [64, 144, 288, 576, 1152]
THREE_LEVEL = [1152, 2304, 4608, 9216, 13824, 27648]
CHECK_TWO, CHECK_THREE = [64, 144], [1152, 2304]
SIM_STEPS = 16
THREAD_HOSTS = 9216
TARGET_ANALYSIS_S, TARGET_MEMORY_MIB, TARGET_THREADS = 20.0, 1024.0, 1.8

# One measurement, run as `python run.py --one JSON` in a fresh process.
ONE = """
import json, resource, sys, time
import daqnet
from daqnet.simulate import simulate_steps
a = json.loads(sys.argv[1])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Python, numpy, daqnet
t0 = time.perf_counter()
fab = daqnet.fat_tree(radix=48, hosts=a["hosts"], levels=a["levels"])
t1 = time.perf_counter()
rt = daqnet.routing.dmodk(fab)
t2 = time.perf_counter()
out = {"fabric_s": t1 - t0, "routes_s": t2 - t1}
if a["what"] == "analysis":
    pl = daqnet.placement.build(fab, "topology")
    wl = daqnet.workload.event_building(pl.ranks)
    t = time.perf_counter()
    rep = daqnet.conflicts(rt, pl, wl, threads=a["threads"])
    out.update(seconds=time.perf_counter() - t, flows=rep.total_flows,
               traversals=rep.total_link_traversals, conflicts=rep.total_conflicts)
elif a["what"] == "simulation":
    n = a["hosts"]
    if a["steps"]:  # spread over the barrel's N-1
        shifts = sorted({1 + (n - 2) * k // (a["steps"] - 1) for k in range(a["steps"])})
        workload = {"kind": "shift", "shifts": shifts}
    else:  # the full barrel
        workload = {"kind": "event-building", "schedule": "barrel"}
    sc = daqnet.Scenario({
        "fabric": {"radix": 48, "hosts": n, "levels": a["levels"]},
        "workload": workload,
        "simulate": {"message_bytes": 1048576.0, "ideal": False}}, source="<scaling>")
    stages = sc.build()  # routes built above already: time the simulation alone
    t = time.perf_counter()
    r = simulate_steps(sc, stages=stages, threads=a["threads"])
    out.update(seconds=time.perf_counter() - t, steps=r.steps_done, total_seconds=r.total_seconds)
out["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["base_mib"] = base
print(json.dumps(out))
"""


def one(what: str, hosts: int, levels: int, threads: int, steps: int = SIM_STEPS) -> dict:
    """One run in a fresh process; the simulation runs `steps` spread steps, 0: all N-1."""
    args = {"what": what, "hosts": hosts, "levels": levels, "threads": threads, "steps": steps}
    p = subprocess.run(
        [sys.executable, "-c", ONE, json.dumps(args)], capture_output=True, text=True, check=False
    )
    if p.returncode != 0:
        raise SystemExit(f"{what} at {hosts} hosts failed: {p.stderr.strip()[-500:]}")
    return json.loads(p.stdout)


def concurrent(what: str, hosts: int, levels: int, copies: int, steps: int) -> list[dict]:
    """The same single-threaded run in `copies` processes at once."""
    args = json.dumps(
        {"what": what, "hosts": hosts, "levels": levels, "threads": 1, "steps": steps}
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ONE, args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(copies)
    ]
    out = []
    for p in procs:
        stdout, stderr = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"concurrent {what} failed: {stderr.decode()[-500:]}")
        out.append(json.loads(stdout))
    return out


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) against log(x)."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum(
        (a - mx) ** 2 for a in lx
    )


def series(sizes: list[int], levels: int, cores: int) -> list[dict]:
    rows = []
    for n in sizes:
        a = one("analysis", n, levels, cores)
        s = one("simulation", n, levels, cores)
        row = {
            "hosts": n,
            "levels": levels,
            "flows": a["flows"],
            "routes_s": a["routes_s"],
            "analysis_s": a["seconds"],
            "analysis_maxrss_mib": a["maxrss_mib"],
            "analysis_own_mib": a["maxrss_mib"] - a["base_mib"],
            "ns_per_traversal": a["seconds"] / a["traversals"] * 1e9,
            "sim_steps": s["steps"],
            "sim_s_per_step": s["seconds"] / s["steps"],
            "sim_maxrss_mib": s["maxrss_mib"],
        }
        rows.append(row)
        print(
            f"{levels:>6} {n:>7,} {a['flows']:>13,} {row['routes_s']:>9.3f} {row['analysis_s']:>10.3f} "
            f"{row['ns_per_traversal']:>8.2f} {row['analysis_maxrss_mib']:>9.0f} "
            f"{row['sim_s_per_step'] * 1e3:>11.2f} {row['sim_maxrss_mib']:>9.0f}",
            flush=True,
        )
    return rows


def exponents(rows: list[dict]) -> dict:
    xs = [r["hosts"] for r in rows]
    keys = ("routes_s", "analysis_s", "analysis_own_mib", "sim_s_per_step")
    return {k: slope(xs, [max(r[k], 1e-6) for r in rows]) for k in keys}


# The thread measures: (name, what runs, simulated steps: 0 for the full barrel). The analysis
# and the simulation both over the full barrel (N-1 steps), the targets; and one short
# call of 16 steps, whose fixed costs (Python's per-class link loads, each thread's first
# touch of its buffers) do not divide among threads.
THREAD_RUNS = (
    ("analysis", "analysis", 0),
    ("simulation", "simulation", 0),
    (f"simulation, {SIM_STEPS} steps", "simulation", SIM_STEPS),
)


def above_ceiling(share: float, shares: list[float]) -> str:
    """What a share of the ceiling above 100 % means, from the rounds behind it."""
    if share <= 1:
        return ""
    if len(shares) == 1:
        return " (above 100%: one round only, timing noise; see --reps)"
    if min(shares) <= 1:
        return " (above 100% at the median, not in every round: timing noise)"
    return " (above 100% in every round: threads share what separate processes each build)"


def thread_scaling(hosts: int, levels: int, cores: int, reps: int) -> dict:
    """Each measure on 1 .. cores threads and as `cores` single-threaded runs at once,
    repeated `reps` times in turn (so that a change of the machine's load weighs on every
    figure alike); ratios of medians, with the range of the per-round ratios."""
    out = {"hosts": hosts, "levels": levels, "repeats": reps}
    for name, what, steps in THREAD_RUNS:
        samples: dict[int, list[float]] = {t: [] for t in range(1, cores + 1)}
        together: list[list[float]] = []
        for _ in range(reps):
            for t in samples:
                samples[t].append(one(what, hosts, levels, t, steps)["seconds"])
            together.append([r["seconds"] for r in concurrent(what, hosts, levels, cores, steps)])
        times = {t: spread(v)["median"] for t, v in samples.items()}
        slowest = [max(run) for run in together]
        ceiling = cores * times[1] / spread(slowest)["median"]
        # Per round: the threads' speed-up and the share of that round's ceiling it reaches.
        rounds = [samples[1][i] / samples[cores][i] for i in range(reps)]
        shares = [rounds[i] / (cores * samples[1][i] / slowest[i]) for i in range(reps)]
        best = times[1] / times[cores]
        out[name] = {
            "steps": steps or hosts - 1,
            "seconds_by_threads": times,
            "samples_by_threads": samples,
            "speedup_by_threads": {t: times[1] / s for t, s in times.items()},
            "speedup_range": [min(rounds), max(rounds)],
            "machine_ceiling": ceiling,
            "single_runs_together_s": together,
            "share_of_ceiling_range": [min(shares), max(shares)],
        }
        rng = f" ({min(rounds):.2f}-{max(rounds):.2f})" if reps > 1 else ""
        share = f" ({min(shares):.0%}-{max(shares):.0%} per round)" if reps > 1 else ""
        print(
            f"  {name:<20} "
            + "  ".join(f"{t} thread(s) {s:.3f} s" for t, s in times.items())
            + f"  -> {best:.2f}x{rng}; {cores} single-threaded runs at once reach {ceiling:.2f}x "
            f"(the machine's ceiling), so threads reach {best / ceiling:.0%} of it{share}"
            + above_ceiling(best / ceiling, shares)
        )
    return out


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, am) = plt.subplots(1, 2, figsize=(11, 4.2))
    for rows, style, label in (
        (result["two_level"], "o--", "2 levels"),
        (result["three_level"], "s-", "3 levels"),
    ):
        xs = [r["hosts"] for r in rows]
        ax.plot(xs, [r["analysis_s"] for r in rows], style, color="C0", label=f"analysis, {label}")
        ax.plot(xs, [r["routes_s"] for r in rows], style, color="C1", label=f"routes, {label}")
        ax.plot(
            xs,
            [r["sim_s_per_step"] for r in rows],
            style,
            color="C2",
            label=f"simulation per step, {label}",
        )
        am.plot(xs, [r["analysis_maxrss_mib"] for r in rows], style, color="C0", label=label)
    ax.axhline(TARGET_ANALYSIS_S, color="grey", lw=0.8, ls=":")
    am.axhline(TARGET_MEMORY_MIB, color="grey", lw=0.8, ls=":")
    for a in (ax, am):
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlabel("hosts (radix-48 fat tree, full barrel shift)")
        a.grid(True, which="both", lw=0.3)
        a.legend(fontsize=7)
    ax.set_ylabel("wall time, s (every core)")
    am.set_ylabel("peak memory of the analysis, MiB")
    fig.suptitle("daqnet scaling: route building, barrel analysis, step simulation")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--check", action="store_true", help="small sizes only")
    ap.add_argument(
        "--reps",
        type=int,
        default=3,
        help="rounds of the thread measures (medians and ranges; 1 with --check)",
    )
    ap.add_argument(
        "--write-baseline",
        action="store_true",
        help="write bench/scaling/baseline.json and docs/figures/scaling.png",
    )
    args = ap.parse_args()
    if args.check and args.write_baseline:
        ap.error("--check results are not a baseline")
    if args.reps < 1:
        ap.error("--reps must be >= 1")
    reps = 1 if args.check else args.reps
    from daqnet.threads import available_cores

    cores = available_cores()
    t0 = time.perf_counter()
    print(f"{cores} cores; analysis and simulation on every core; peak memory per process")
    print(
        f"{'levels':>6} {'hosts':>7} {'barrel flows':>13} {'routes s':>9} {'analysis s':>10} "
        f"{'ns/link':>8} {'peak MiB':>9} {'sim ms/step':>11} {'peak MiB':>9}"
    )
    two = series(CHECK_TWO if args.check else TWO_LEVEL, 2, cores)
    three = series(CHECK_THREE if args.check else THREE_LEVEL, 3, cores)
    result = {"two_level": two, "three_level": three}
    result["exponents"] = {"two_level": exponents(two), "three_level": exponents(three)}
    print("\ngrowth exponents (log-log slope against hosts):")
    for name, e in result["exponents"].items():
        print(
            f"  {name:<12} routes {e['routes_s']:.2f}, analysis {e['analysis_s']:.2f}, "
            f"analysis memory above the interpreter {e['analysis_own_mib']:.2f}, "
            f"simulation per step {e['sim_s_per_step']:.2f}"
        )
    if not args.check:
        big = three[-1]
        total = big["routes_s"] + big["analysis_s"]
        print(
            f"\ntarget: {big['hosts']:,} hosts, routes + full barrel analysis {total:.1f} s "
            f"< {TARGET_ANALYSIS_S:.0f} s: {'met' if total < TARGET_ANALYSIS_S else 'NOT met'}; "
            f"peak {big['analysis_maxrss_mib']:.0f} MiB < {TARGET_MEMORY_MIB:.0f} MiB: "
            f"{'met' if big['analysis_maxrss_mib'] < TARGET_MEMORY_MIB else 'NOT met'}"
        )
    if cores > 1:
        hosts = 2304 if args.check else THREAD_HOSTS
        print(f"\nthreads, {hosts:,} hosts, 3 levels, medians of {reps} round(s):")
        result["threads"] = thread_scaling(hosts, 3, cores, reps)
        # The targets are for the full size: a --check run prints none.
        for what in () if args.check else ("analysis", "simulation"):
            th = result["threads"][what]
            s = th["speedup_by_threads"][cores]
            lo, hi = th["speedup_range"]
            print(
                f"  target >= {TARGET_THREADS}x on {cores} cores ({what}): "
                f"{'met' if s >= TARGET_THREADS else 'NOT met'} ({s:.2f}x median"
                + (f", {lo:.2f}-{hi:.2f} per round)" if reps > 1 else ")")
            )
    if args.check:
        bad = [r for r in two + three if not (r["analysis_s"] > 0 and r["sim_s_per_step"] > 0)]
        print("ok" if not bad else "FAILED")
        return 1 if bad else 0
    if args.write_baseline:
        write_json(
            HERE / "baseline.json",
            {
                "benchmark": "scaling of route building, barrel analysis and step simulation",
                "units": {"time": "seconds", "memory": "MiB (ru_maxrss of a fresh process)"},
                "git": git_commit("bench/scaling"),
                "machine": machine(),
                **result,
            },
        )
        plot(result, REPO / "docs" / "figures" / "scaling.png")
    print(f"\nwall time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
