"""The terminal summary of ``daqnet simulate``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .format import count, duration, in_flight, quantity, size

__all__ = ["protocol_extent", "simulate_summary"]


def link_load_table(rows: list[Mapping[str, Any]]) -> list[str]:
    """Bytes per link, class by class (host links, LL/LR/D, local/global, tree stages)."""
    if not rows:
        return []
    out = [
        "",
        f"  {'link class':<14}{'links':>8}{'used':>8}{'mean':>11}{'median':>11}{'p99':>11}"
        f"{'max':>11}{'busiest for':>13}",
    ]
    for row in rows:
        out.append(
            f"  {row['class']:<14}{row['links']:>8,}{row['used']:>8.1%}"
            f"{size(row['mean_bytes']):>11}{size(row['median_bytes']):>11}"
            f"{size(row['p99_bytes']):>11}{size(row['max_bytes']):>11}"
            f"{duration(row['max_busy_seconds']):>13}"
        )
    return out


def protocol_extent(r: Mapping[str, Any]) -> str:
    """What a protocol run measured: events and simulated time, or that it stopped before."""
    where = f"run length from [{r['run_length_from']}]"
    if r["window_seconds"] <= 0 and r["interrupted"]:
        return (
            f"during the warm-up, at {duration(r['total_seconds'])} of simulated time with "
            f"{r['events_total']:,} events built: nothing measured (the window opens after the "
            f"warm-up; {where})"
        )
    return (
        f"{r['events_built']:,} events measured in {duration(r['window_seconds'])} of simulated time "
        f"after {duration(r['warmup_seconds'])} of warm-up ({where})"
    )


def simulate_summary(r: Mapping[str, Any]) -> str:
    lines = [
        f"daqnet simulate — {r['scenario']} ({r['mode']} mode)",
        f"  fabric     {r['fabric']}",
        f"  routing    {r['routing']}",
        f"  placement  {r['placement']}",
    ]
    if r["mode"] == "steps":
        lines += [f"  workload   {r['workload']}, {r['message_bytes']:,.0f}-byte messages", ""]
        if r["steps_done"] == 0:  # stopped inside the first step: no time, and 0 would read as one
            lines.append("  no step finished before the interrupt")
        elif r["ideal_seconds"] is None:
            lines += [
                f"  total      {duration(r['total_seconds'])}",
                f"  per host   {quantity(r['gbps_per_host'], ' Gb/s')}",
            ]
        else:
            lines += [
                f"  total      {duration(r['total_seconds'])} (contention-free fabric {duration(r['ideal_seconds'])}, slowdown {r['slowdown']:.3f})",
                f"  per host   {quantity(r['gbps_per_host'], ' Gb/s')} (contention-free {quantity(r['ideal_gbps_per_host'], ' Gb/s')})",
            ]
        worst = sorted(r["steps"], key=lambda s: -(s["slowdown"] or 0))[:3]
        if worst and (worst[0]["slowdown"] or 0) > 1 + 1e-9:
            lines.append(
                "  worst      "
                + ", ".join(f"step {s['step']}: ×{s['slowdown']:.2f}" for s in worst)
            )
        ebb = r.get("effective_bisection")
        if ebb and ebb["gbps"] is not None:
            # After a stop, the rates of the first bisections only (see steps.EBB_AFTER_STOP).
            of = f" of the {r['steps_done']:,} simulated" if ebb["rounds"] < r["steps_done"] else ""
            lines.append(
                f"  bisection  effective bisection bandwidth {quantity(ebb['gbps'], ' Gb/s')} per flow, "
                f"{ebb['fraction']:.1%} of their rate on a contention-free fabric (mean over "
                f"{count(ebb['rounds'], 'random bisection')}{of}; slowest flow {quantity(ebb['min_flow_gbps'], ' Gb/s')})"
            )
        if r["steps_done"]:
            lines += link_load_table(r.get("link_loads", []))
        done = f"{r['steps_done']:,} of {r['steps_total']:,} steps"
        if r["interrupted"] and r["steps_done"] == r["steps_total"]:
            cut = bool(ebb and ebb.get("interrupted"))
            done += (
                " (the interrupt came in the bisections' rates, the steps were complete)"
                if cut
                else " (the interrupt came as the last step ended: every figure is complete)"
            )
    else:
        lat = r["latency_seconds"]
        lines += [
            f"  protocol   {r['protocol'].upper()}, {r['schedule']} gathers, {r['nodes']} nodes, "
            f"{count(r['credits'], 'credit')}, {in_flight(r['schedule'], r['in_flight'])} per gather",
            "",
        ]
        # Stopped before the window opened: no rate was measured, and 0 Gb/s would read as one.
        measured = r["window_seconds"] > 0
        if measured:
            lines.append(
                f"  throughput {quantity(r['throughput_gbps'], ' Gb/s', digits=1)} in total, {quantity(r['gbps_per_host'], ' Gb/s')} per node "
                f"({quantity(r['network_gbps_per_host'])} over the network; each node's own fragment stays local), "
                f"{quantity(r['events_per_second'], ' events/s', digits=0)}"
            )
        if lat["p50"] is not None:
            lines.append(
                f"  latency    p50 {duration(lat['p50'])}, p99 {duration(lat['p99'])}, max {duration(lat['max'])}"
            )
        busiest = max((ln["utilization"] for ln in r["links"]), default=0.0)
        lines.append(f"  links      busiest at {busiest:.1%} of its capacity on average")
        done = protocol_extent(r)
    lines.append(f"  {'INTERRUPTED: ' if r['interrupted'] else ''}{done}")
    return "\n".join(lines)
