"""The terminal summary of a benchmark (or of a collected run)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .format import count, quantity

__all__ = ["summary"]


def _packed(result: Mapping[str, Any]) -> str:
    """' (N events packed k per fragment)' when fragments pack several events: every count
    and rate is of fragment sets, which the event manager assigns."""
    k = int((result.get("run_config") or {}).get("events_per_fragment") or 1)
    if k <= 1:
        return ""
    return f" ({result.get('events_built', 0) * k:,} events packed {k} per fragment)"


def summary(result: Mapping[str, Any], name: str = "") -> str:
    lat = result["latency_seconds"]
    lines = [
        f"{name}: {result['status']}, {count(result['ranks'], 'rank')}, transport {result['transport']}"
        + (f" ({result['fabric_endpoint']})" if result.get("fabric_endpoint") else ""),
        f"  throughput   {quantity(result.get('throughput_gbps'), ' Gb/s')} "
        f"({quantity(result.get('bytes_per_second'), ' GB/s', 1e-9)}) built-event payload, all builders",
        f"  events       {result.get('events_built', 0):,} built{_packed(result)} in {quantity(result.get('measured_seconds'), ' s')} "
        f"({quantity(result.get('events_per_second'), '/s', 1, 0)}) after {quantity(result.get('warmup_seconds'), ' s')} warm-up",
        f"  latency      p50 {quantity(lat['p50'], ' ms', 1e3, 3)}  p99 {quantity(lat['p99'], ' ms', 1e3, 3)}  max {quantity(lat['max'], ' ms', 1e3, 3)}",
        f"  integrity    lost {result['lost_fragments']}, duplicate {result['duplicate_fragments']}, corrupt {result['corrupt_fragments']}"
        + (
            f"; {count(result['in_flight_fragments'], 'fragment')} in flight when it stopped"
            if result.get("in_flight_fragments")
            else ""
        ),
    ]
    if "baseline" in result:
        b = result["baseline"]
        cut = (
            f" (interrupted after {quantity(b.get('seconds'), ' s')})"
            if b.get("interrupted")
            else ""
        )
        lines.append(
            f"  baseline     {baseline_name(b)}: {quantity(b['throughput_gbps'], ' Gb/s')}{cut}; "
            f"event builder / baseline = {quantity(b['ratio'], '×')}{per_receiving_node(b)}"
        )
    lines += _failure_lines(result)
    lines += _memory_lines(result.get("memory") or [])
    for err in result["errors"]:
        lines.append(f"  error        {err}")
    return "\n".join(lines)


def per_receiving_node(b: Mapping[str, Any]) -> str:
    """How the ratio is taken, when the two sides' receiving nodes differ in number: " per
    receiving node (4 building nodes, 2 receiving nodes in p2p)"."""
    n = b.get("receiving_nodes") or {}
    mine, theirs = n.get("event_builder"), n.get("baseline")
    if not mine or not theirs or mine == theirs:
        return ""
    return (
        f" per receiving node ({count(mine, 'building node')}, "
        f"{count(theirs, 'receiving node')} in {b['name']})"
    )


def baseline_name(b: Mapping[str, Any]) -> str:
    """The baseline's name, with the state of the cache it ran in (alltoall, isend)."""
    if b.get("cache") == "cold":
        return f"{b['name']} (cold cache, {b['buffer_sets']} buffer sets)"
    if b.get("cache") == "warm":
        return f"{b['name']} (warm cache)"
    return str(b["name"])


def _failure_lines(result: Mapping[str, Any]) -> list[str]:
    """Ranks that died and were recovered from (bench.recover): who, when, how fast."""
    lines = []
    for f in result.get("failures") or []:
        roles = f["role"].replace("ru", "readout").replace("bu", "builder").replace("+", " and ")
        back = (
            f"recovery {quantity(f['recovery_seconds'], ' s', 1, 3)} (last word to next event built)"
            if f.get("recovery_seconds") is not None
            else "no event built after it"
        )
        lines.append(
            f"  failure      rank {f['rank']} ({roles} unit) declared dead at "
            f"{quantity(f['detected_at_seconds'], ' s', 1, 2)} after "
            f"{quantity(f.get('silent_seconds'), ' s', 1, 2)} of silence; {back}"
        )
    if lines:
        lines.append(
            f"  recovery     {result.get('abandoned_events', 0):,} events abandoned (held by dead "
            f"builders, not counted as built), {result.get('incomplete_events', 0):,} built "
            "incomplete (without dead readout units)"
        )
    return lines


def _memory_lines(rows: list[Mapping[str, Any]]) -> list[str]:
    """Peak RSS and buffers of the largest process, steady-state allocations, NUMA."""
    if not rows:
        return []

    def most(key: str) -> int:
        return max((r[key] or 0) for r in rows)

    mib = 1 / 2**20
    after = [
        r["allocations_after_warmup"] for r in rows if r["allocations_after_warmup"] is not None
    ]
    lines = [
        f"  memory       peak RSS up to {quantity(most('peak_rss_bytes'), ' MiB', mib, 1)} per process, "
        f"buffers up to {quantity(most('buffer_bytes'), ' MiB', mib, 1)} "
        f"(huge pages {quantity(most('huge_page_bytes'), ' MiB', mib, 1)}); "
        + (
            f"{sum(after):,} allocation{'' if sum(after) == 1 else 's'} after warm-up"
            if after
            else "allocations after warm-up not measured"
        )
    ]
    nodes = {r["numa_node"] for r in rows if r["numa_node"] is not None}
    numa = f"  numa         processes on node(s) {', '.join(map(str, sorted(nodes))) or '?'}"
    away = [r["rank"] for r in rows if r["buffers_on_nic_node"] is False]
    if away:
        numa += f"; buffers NOT on the NIC's node for rank(s) {', '.join(map(str, away))}"
    elif any(r["buffers_on_nic_node"] for r in rows):
        numa += "; buffers on the NIC's node"
    else:
        numa += "; the NIC's node is unknown (loopback or MPI)"
    return [*lines, numa]
