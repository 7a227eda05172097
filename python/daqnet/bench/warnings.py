"""Why a benchmark's figures may mislead: the warnings of ``daqnet bench`` and ``daqnet
collect``, kept in the result document (``warnings``) as well as printed, as the protocol
simulation keeps its own."""

from __future__ import annotations

import socket
from typing import Any

from ..threads import available_cores
from .config import bench_size_warning
from .window import halves_difference, paced_window, pacing, short_window, unsteady_window

__all__ = ["run_warnings"]


def run_warnings(result: Any) -> list[str]:
    """The warnings of a BenchResult (empty when its window reads a steady state, and its
    fragments' mean is the size given)."""
    bench = ((result.config or {}).get("values") or {}).get("bench") or {}
    # Printed, and once lost from the result. A scenario.json of another version may lack
    # the keys: no warning then, not a traceback.
    keys = ("fragment_distribution", "fragment_sigma", "fragment_bytes", "fragment_bytes_per_ru")
    sizes = bench_size_warning(bench) if all(k in bench for k in keys) else None
    edited = (result.config or {}).get("differs_from_run_cfg") or []
    hand = (
        [
            "run.cfg was changed after scenario.json was written: "
            + ", ".join(edited)
            + "; the result reports run.cfg's values, and daqnet report pairs it with no prediction"
        ]
        if edited
        else []
    )
    return (
        hand
        + ([sizes] if sizes else [])
        + _one_node(result)
        + _window_warnings(result)
        + _unlike_waits(result)
    )


def _unlike_waits(result: Any) -> list[str]:
    """An all-to-all baseline on more ranks than this machine has cores: MPI's collective
    busy-polls, where the event builder (bench.progress yield or sleep) gives its core away,
    so the ratio compares unlike waits (1.5-2.5× read on 4 ranks and 2 cores; 0.81× with
    bench.progress = busy)."""
    b = result.baseline or {}
    progress = (result.run_config or {}).get("progress", "yield")
    if b.get("name") not in ("alltoall", "isend") or progress == "busy":
        return []
    here = socket.gethostname()
    ranks = sum(1 for m in result.memory or [] if m.get("host") == here)
    cores = available_cores()
    if ranks <= cores:
        return []
    return [
        f"the baseline ran {ranks} ranks on {cores} cores here: {b['name']} busy-polls inside "
        f"MPI where the event builder gives its core away (bench.progress = {progress}), so "
        "event builder / baseline compares unlike waits; compare with as many cores as ranks, "
        "or with bench.progress = busy"
    ]


def _one_node(result: Any) -> list[str]:
    """A run of one node builds its own fragments only: its figure is a copy's, not a
    network's (it printed 154 Gb/s of "built-event payload" with nothing transferred)."""
    cfg = result.run_config or {}
    ranks, ppn = cfg.get("ranks"), cfg.get("processes_per_node") or 1
    if cfg.get("mode", "event-manager") != "event-manager" or not isinstance(ranks, int):
        return []
    if ranks // ppn != 1:
        return []
    how = (
        "lent in its process (the local path)"
        if ppn == 1 and cfg.get("local_path", "lend") == "lend"
        else "through the transport within the host"
    )
    return [
        "one node: every fragment goes from its readout unit to the builder on the same "
        f"node, {how}, so the throughput is that copy's, with nothing crossing a network; "
        "give bench.ranks for 2 nodes or more"
    ]


def _window_warnings(result: Any) -> list[str]:
    latency = (result.latency_seconds or {}).get("p50")
    seconds = result.measured_seconds
    if not seconds:
        return []
    if not result.events_built:
        return [
            f"no event was built in the {seconds:.2g} s measurement window, so its throughput "
            "of 0 says nothing: give a longer bench.seconds (or bench.events)"
        ]
    # A window of few latencies first: its halves would differ by its edges alone. A window
    # sized in events (bench.events) is lengthened in events: bench.seconds is refused beside it.
    events = ((result.config or {}).get("values", {}).get("bench") or {}).get("events")
    key = "bench.events" if events else "bench.seconds"
    rate_hz = float((result.run_config or {}).get("rate_hz") or 0)
    behind, paced = pacing(rate_hz, result.events_built, seconds, latency)
    why = (
        (
            short_window(seconds / latency, latency, key, events or None)
            if latency and not behind
            else None
        )
        or (paced_window(rate_hz, seconds, key, events or None) if paced else None)
        or (
            # A rank lost and recovered from (degraded) changes the rate by itself.
            None
            if result.status == "degraded" or paced
            else unsteady_window(
                halves_difference(result.timeseries or [], result.warmup_seconds or 0, seconds),
                "bench.warmup_seconds",
            )
        )
    )
    return [w for w in (behind, why) if w]
