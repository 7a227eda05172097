#!/usr/bin/env python3
"""Soak: the real event builder for a long loopback run, over MPI and over TCP.

    python3 bench/soak/run.py                       # 10 minutes per transport (MPI, TCP)
    python3 bench/soak/run.py --minutes 120 --transport tcp --out soak/   # hours, one transport
    python3 bench/soak/run.py --check               # the short form CI runs (15 s each)

Each run is `daqnet bench examples/bench-local.toml` (4 ranks, 1 MiB fragments, checksums on)
for the given time. While it runs, the resident size (VmRSS) of every daqnet-evb rank is
sampled from /proc every few seconds. Reported, per transport:

- throughput drift: the mean built-event throughput of the last minute over that of the first
  minute after the warm-up (a fifth of the run each, for runs under five minutes); target
  within 2 %. It is timing on a shared machine: reported, never a pass/fail.
- RSS growth: per rank, the last sample less the first one after the warm-up; target 0
  (or less: the kernel may take pages back).
- integrity: lost, duplicate and corrupt fragments; target 0 (--check fails otherwise), and
  the allocations after warm-up that daqnet-evb counts (docs/bench.md "Memory").

On a cluster, run `daqnet bench` with the same keys under srun for hours (bench.seconds) and
read the same figures from its result.json and timeseries.csv; this script's RSS sampling
needs the ranks on this machine. Ctrl-C stops the run under way; what it measured is
reported and written (--out keeps every run's directory).
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EXAMPLE = REPO / "examples" / "bench-local.toml"

sys.path.insert(0, str(REPO / "bench"))
from provenance import git_commit, machine, write_json  # noqa: E402


def evb_rss(out: Path) -> dict[int, int]:
    """VmRSS in bytes of every daqnet-evb process of the run writing to `out`, by pid."""
    rss = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if (proc / "comm").read_text().strip() != "daqnet-evb":
                continue
            if str(out) not in (proc / "cmdline").read_text():
                continue
            for line in (proc / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss[int(proc.name)] = int(line.split()[1]) * 1024
        except (OSError, ValueError):
            continue
    return rss


def soak(transport: str, seconds: float, warmup: float, out: Path, every: float) -> dict:
    args = [sys.executable, "-m", "daqnet", "bench", str(EXAMPLE), "--out", str(out)]
    sets = [
        f"bench.transport={transport}",
        f"bench.seconds={seconds}",
        f"bench.warmup_seconds={warmup}",
        "bench.fragment_bytes=1048576",
        "bench.report_seconds=1",
        f"bench.stall_seconds={max(30.0, seconds)}",
    ]
    for s in sets:
        args += ["--set", s]
    samples: list[tuple[float, dict[int, int]]] = []
    # Its own session: a Ctrl-C reaches this script only, which passes it on once. Its
    # output goes to a file, never a pipe nobody reads while it runs (a long run's summary
    # would fill the pipe and block it); the figures are read from result.json.
    out.mkdir(parents=True, exist_ok=True)
    log = (out.parent / f"{out.name}.log").open("w")
    proc = subprocess.Popen(args, stdout=log, stderr=log, start_new_session=True)
    t0 = time.monotonic()
    interrupted = False
    try:
        while proc.poll() is None:
            time.sleep(every)
            samples.append((time.monotonic() - t0, evb_rss(out)))
            print(f"\r  {transport}: {time.monotonic() - t0:6.0f} s", end="", file=sys.stderr)
    except KeyboardInterrupt:
        interrupted = True
        proc.send_signal(
            signal.SIGINT
        )  # daqnet bench stops its ranks and writes what they measured
    proc.wait()
    log.close()
    print(file=sys.stderr)
    try:
        result = json.loads((out / "result.json").read_text())
    except (OSError, ValueError):
        why = (out.parent / f"{out.name}.log").read_text().strip()
        raise SystemExit(f"soak {transport}: daqnet bench gave no result: {why}") from None
    return summarise(transport, result, samples, warmup, interrupted)


def summarise(
    transport: str,
    r: dict,
    samples: list[tuple[float, dict[int, int]]],
    warmup: float,
    interrupted: bool,
) -> dict:
    series = [row for row in r["timeseries"] if not row.get("partial")]
    start = r.get("warmup_seconds") or warmup
    window = [row for row in series if row["time_seconds"] > start]
    span = window[-1]["time_seconds"] - start if window else 0.0
    part = min(60.0, span / 5) if span else 0.0
    first = [x["throughput_gbps"] for x in window if x["time_seconds"] <= start + part]
    last = [x["throughput_gbps"] for x in window if x["time_seconds"] > start + span - part]
    drift = (
        statistics.fmean(last) / statistics.fmean(first) - 1
        if first and last and statistics.fmean(first) > 0
        else None
    )
    trend, trend_error, spread = fitted_trend(window, start, span, part)
    # RSS after the warm-up (a sample taken a little after it, the ranks' clocks start late).
    after = [s for t, s in samples if t > warmup + 2]
    growth = {}
    if len(after) >= 2:
        for pid, rss in after[0].items():
            end = next((s[pid] for s in reversed(after) if pid in s), None)
            if end is not None:
                growth[pid] = end - rss
    allocs = [
        m["allocations_after_warmup"]
        for m in r.get("memory", [])
        if m["allocations_after_warmup"] is not None
    ]
    return {
        "transport": transport,
        "status": r["status"],
        "interrupted": interrupted or r["interrupted"],
        "measured_seconds": r.get("measured_seconds"),
        "throughput_gbps": r.get("throughput_gbps"),
        "events_built": r["events_built"],
        "first_minute_gbps": statistics.fmean(first) if first else None,
        "last_minute_gbps": statistics.fmean(last) if last else None,
        "compared_seconds": part,
        "drift": drift,
        "trend": trend,
        "trend_error": trend_error,
        "period_spread": spread,
        "rss_samples": len(after),
        "rss_growth_bytes": growth,
        "rss_growth_max_bytes": max(growth.values()) if growth else None,
        "peak_rss_bytes": max((m["peak_rss_bytes"] or 0) for m in r.get("memory", [{}]))
        if r.get("memory")
        else None,
        "allocations_after_warmup": sum(allocs) if allocs else None,
        "lost_fragments": r["lost_fragments"],
        "duplicate_fragments": r["duplicate_fragments"],
        "corrupt_fragments": r["corrupt_fragments"],
        "errors": r["errors"],
    }


def fitted_trend(
    window: list[dict], start: float, span: float, part: float
) -> tuple[float | None, float | None, float | None]:
    """A trend the first/last comparison cannot tell from noise: a least-squares line
    through the mean throughput of every period of `part` seconds (a minute in long runs),
    as the relative change it gives over the whole span, with its standard error; and the
    periods' spread (standard deviation over mean). Periods, not seconds: successive
    seconds are correlated, and their error would be too small."""
    if not part or span < 3 * part:
        return None, None, None
    periods: dict[int, list[float]] = {}
    for row in window:
        k = min(int((row["time_seconds"] - start) // part), int(span // part) - 1)
        periods.setdefault(k, []).append(row["throughput_gbps"])
    xs = [(k + 0.5) * part for k in sorted(periods)]
    ys = [statistics.fmean(periods[k]) for k in sorted(periods)]
    mean = statistics.fmean(ys)
    if len(xs) < 3 or mean <= 0:
        return None, None, None
    fit = statistics.linear_regression(xs, ys)
    residual = sum((y - fit.intercept - fit.slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - statistics.fmean(xs)) ** 2 for x in xs)
    error = (residual / (len(xs) - 2) / sxx) ** 0.5
    return fit.slope * span / mean, error * span / mean, statistics.stdev(ys) / mean


def show(s: dict, judge: bool = True) -> None:
    """Print a run's figures; `judge`: with the targets' verdicts (not for --check's 15 s)."""

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:+.2f} %"

    def mib(x: int | None) -> str:  # small growths in KiB: "+0.00 MiB, NOT met" said nothing
        if x is None:
            return "n/a"
        return f"{x / 2**10:+,.0f} KiB" if abs(x) < 2**20 else f"{x / 2**20:+.2f} MiB"

    drift_ok = s["drift"] is not None and abs(s["drift"]) < 0.02
    rss_ok = s["rss_growth_max_bytes"] is not None and s["rss_growth_max_bytes"] <= 0
    drift_verdict = f"  [target within 2 %: {'met' if drift_ok else 'NOT met'}]" if judge else ""
    rss_verdict = f"  [target 0: {'met' if rss_ok else 'NOT met'}]" if judge else ""
    print(
        f"{s['transport']:>4}: {s['status']}, {s['events_built']:,} events in "
        f"{s['measured_seconds'] or 0:.0f} s, {s['throughput_gbps'] or 0:.2f} Gb/s\n"
        f"      drift (last / first {s['compared_seconds']:.0f} s) {pct(s['drift'])}"
        f"{drift_verdict}\n"
        f"      trend (least squares through {s['compared_seconds']:.0f} s means) "
        f"{pct(s.get('trend'))} ± {pct(s.get('trend_error'))[1:]} over the run; the means spread "
        f"{pct(s.get('period_spread'))[1:]}\n"
        f"      RSS growth after warm-up, worst rank {mib(s['rss_growth_max_bytes'])} "
        f"over {s['rss_samples']} samples{rss_verdict}\n"
        f"      allocations after warm-up {s['allocations_after_warmup']}, lost "
        f"{s['lost_fragments']}, duplicate {s['duplicate_fragments']}, corrupt "
        f"{s['corrupt_fragments']}"
    )
    for e in s["errors"]:
        print(f"      error: {e}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, help="per transport (default 10; 0.25 with --check)")
    ap.add_argument("--transport", nargs="+", choices=["mpi", "tcp"], default=["mpi", "tcp"])
    ap.add_argument("--out", type=Path, help="keep every run's directory here")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--check", action="store_true", help="exit 1 on lost/duplicate/corrupt")
    args = ap.parse_args()
    if args.minutes is None:
        args.minutes = 0.25 if args.check else 10.0
    if args.minutes <= 0:
        ap.error("--minutes must be positive")
    seconds = args.minutes * 60
    warmup = min(60.0, max(3.0, seconds / 10))
    every = min(5.0, max(0.5, seconds / 60))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        base = args.out or Path(tmp)
        for t in args.transport:
            out = (base / t).resolve()
            s = soak(t, seconds, warmup, out, every)
            results.append(s)
            show(s, judge=not args.check)
            if s["interrupted"]:
                break
    doc = {"machine": machine(), **git_commit("bench/soak"), "minutes": args.minutes}
    doc["runs"] = results
    if args.json:
        write_json(args.json, doc)
    bad = [
        s["transport"]
        for s in results
        if s["status"] != "finished"
        or s["lost_fragments"] + s["duplicate_fragments"] + s["corrupt_fragments"]
    ]
    if any(s["interrupted"] for s in results):
        return 130
    if args.check and bad:
        print(f"soak: FAILED for {', '.join(bad)}", file=sys.stderr)
        return 1
    if args.check:
        print("ok: every run finished with no lost, duplicate or corrupt fragment")
    return 0


if __name__ == "__main__":
    sys.exit(main())
