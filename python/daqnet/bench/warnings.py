"""Why a benchmark's figures may mislead: the warnings of ``daqnet bench`` and ``daqnet
collect``, kept in the result document (``warnings``) as well as printed, as the protocol
simulation keeps its own."""

from __future__ import annotations

from typing import Any

from .config import bench_size_warning
from .window import halves_difference, pacing, short_window, unsteady_window

__all__ = ["run_warnings"]


def run_warnings(result: Any) -> list[str]:
    """The warnings of a BenchResult (empty when its window reads a steady state, and its
    fragments' mean is the size given)."""
    bench = ((result.config or {}).get("values") or {}).get("bench") or {}
    # Printed, and once lost from the result. A scenario.json of another version may lack
    # the keys: no warning then, not a traceback.
    keys = ("fragment_distribution", "fragment_sigma", "fragment_bytes", "fragment_bytes_per_ru")
    sizes = bench_size_warning(bench) if all(k in bench for k in keys) else None
    return ([sizes] if sizes else []) + _window_warnings(result)


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
        short_window(seconds / latency, latency, key, events or None)
        if latency and not behind
        else None
    ) or (
        # A rank lost and recovered from (degraded) changes the rate by itself.
        None
        if result.status == "degraded" or paced
        else unsteady_window(
            halves_difference(result.timeseries or [], result.warmup_seconds or 0, seconds),
            "bench.warmup_seconds",
        )
    )
    return [w for w in (behind, why) if w]
