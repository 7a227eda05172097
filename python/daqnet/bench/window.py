"""How long a measurement window was, in event latencies, and when that is too short.

The event builder's throughput counts the events built in its window (the event manager
adds an event's bytes when the event is done). A window of few event latencies therefore
reads high or low by where it falls against the events in flight, while the protocol
simulation counts bytes as they arrive. Measured on examples/emulate-8.toml (1 MiB
fragments, full PUSH, 2 in flight, docs/emulate.md): 4.2 latencies read 0.947 or 1.066 of
the prediction depending on the warm-up alone, 17 latencies 0.979 and 1.008, 34 read 0.990.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "STEADY_TOLERANCE",
    "WINDOW_LATENCIES",
    "halves_difference",
    "paced_window",
    "pacing",
    "rate_halves",
    "rate_shortfall",
    "short_window",
    "unsteady_window",
]

#: Below this many event latencies a window gets a warning.
WINDOW_LATENCIES = 15

#: Above this relative difference between the window's halves a run gets a warning. Wider
#: than the simulation's 10 %: a measurement shares its cores, and the halves are read
#: from reports a period apart. Runs of examples/bench-local.toml over 6 s on a loaded
#: 2-core machine read 1-12 %; 64 MiB fragments after a 0.5 s warm-up read 90 % while the
#: readout units made their fragments in the window, 3.8 % once made up front.
STEADY_TOLERANCE = 0.20


def short_window(
    latencies: float | None, latency_seconds: float, key: str, events: int | None = None
) -> str | None:
    """Why a window of `latencies` event latencies of `latency_seconds` each leaves the
    throughput uncertain, naming the length of `key` to give (in seconds; in events when
    the window was `events` long, bench.events); None when it is long enough (or unknown)."""
    if latencies is None or latencies >= WINDOW_LATENCIES:
        return None
    enough = (
        math.ceil(events * WINDOW_LATENCIES / latencies)
        if events
        else math.ceil(WINDOW_LATENCIES * latency_seconds)
    )
    # Rounded down: 14.98 printed as "15.0" read as no reason to warn.
    return (
        f"the measurement window held only {math.floor(latencies * 10) / 10:.1f} event "
        f"latencies ({latency_seconds:.2g} s each): the throughput counts the events built in "
        f"it, whole or not at all, so it can be off either way by up to about "
        f"{min(1.0, 1 / max(latencies, 1e-9)):.0%} (a latency's worth of events at its edges); "
        f"give {key} >= {enough:,}"
    )


def halves_difference(
    series: Sequence[Mapping[str, Any]], start: float, seconds: float
) -> float | None:
    """Relative difference of the built-event throughput between the window's two halves.

    The builders' counters are known at the ends of the time series' periods only, so the
    bytes built by a time between two ends are interpolated; None when a half holds fewer
    than two period ends (too coarse to tell), or nothing was built.
    """
    if not series or not seconds > 0 or not start >= 0:
        return None
    ends = [0.0] + [float(row["time_seconds"]) for row in series]
    built = [0.0]
    for row in series:
        built.append(built[-1] + float(row["built_bytes"]))
    t0, t1 = start, start + seconds
    mid = 0.5 * (t0 + t1)
    if t1 > ends[-1] or min(sum(t0 < t <= mid for t in ends), sum(mid < t <= t1 for t in ends)) < 2:
        return None
    return rate_halves(ends, built, t0, t1)


def rate_halves(times: Any, done: Any, t0: float, t1: float) -> float | None:
    """Relative difference of the rate of `done` (a running total at increasing `times`,
    linear in between) over [t0, mid] and over [mid, t1]; None when nothing was done."""
    mid = 0.5 * (t0 + t1)
    c0, c1, c2 = (float(c) for c in np.interp([t0, mid, t1], times, done))
    a, b = (c1 - c0) / (mid - t0), (c2 - c1) / (t1 - mid)
    return abs(a - b) / max(a, b) if max(a, b) > 0 else None


def unsteady_window(difference: float | None, key: str) -> str | None:
    """Why a window whose halves differ by `difference` does not read a steady state, naming
    the warm-up `key` to raise; None when they agree."""
    if difference is None or difference <= STEADY_TOLERANCE:
        return None
    return (
        f"the built-event throughput of the window's two halves differs by {difference:.0%} "
        f"(over {STEADY_TOLERANCE:.0%}): the run was not in a steady state (still starting, "
        f"or the machine's load changed); give a longer {key} and read timeseries.csv"
    )


def rate_shortfall(
    rate_hz: float, events_built: int, window_seconds: float, p50: float | None
) -> str | None:
    """Why a run under bench.rate_hz did not keep up with it: fewer events built in the window
    than the rate makes (by more than 5 % and 2 events: the window's edges cut events in
    two); None when it kept up, or without a rate. The builders then take events made ever
    longer ago, so the latency, counted from each event's data, grows with the run."""
    if not rate_hz > 0 or not window_seconds > 0:
        return None
    made = rate_hz * window_seconds
    if made - events_built <= max(2.0, 0.05 * made):
        return None
    at = f", and the latency (from each event's data) reads p50 {p50 * 1e3:.3g} ms" if p50 else ""
    return (
        f"bench.rate_hz = {_per_second(rate_hz)} Hz was not sustained: {_per_second(events_built / window_seconds)} "
        f"events/s were built in the window, so a backlog of events made but not yet built "
        f"grows with the run{at}, however long it is"
    )


def pacing(
    rate_hz: float, events_built: int, window_seconds: float, p50: float | None
) -> tuple[str | None, bool]:
    """A run under bench.rate_hz: its shortfall warning (rate_shortfall), and whether it was
    paced (kept up with the rate). Paced builders wait for data: the rate is the throughput,
    and neither rounds of credits nor the window's halves measure a steady state (at 5 Hz a
    second holds 5 events, whatever the credits, and its halves 2 and 3). Behind the rate,
    the latency is the backlog's, no measure of the window's edges."""
    behind = rate_shortfall(rate_hz, events_built, window_seconds, p50)
    return behind, rate_hz > 0 and behind is None


#: Below this many events made at bench.rate_hz in its window a paced run gets a warning.
PACED_EVENTS = 20


def paced_window(
    rate_hz: float, window_seconds: float, key: str, events: int | None = None
) -> str | None:
    """Why a paced run's window (it kept up with bench.rate_hz) holds too few events for its
    throughput: that counts whole events, so one at either edge is 1/N of it (at 2 Hz over
    2 s, 4 events: 25 %). None from PACED_EVENTS events on (5 %). `key` is the window's
    length to give: in events when the window was `events` long, else in seconds."""
    made = rate_hz * window_seconds
    if not made > 0 or made >= PACED_EVENTS:
        return None
    enough = PACED_EVENTS if events else math.ceil(PACED_EVENTS / rate_hz * 10) / 10
    count = f"{made:.3g}"
    return (
        f"the measurement window held only {count} event{'' if count == '1' else 's'} made at bench.rate_hz = "
        f"{_per_second(rate_hz)} Hz: the throughput counts whole events, so one more or less at "
        f"its edges moves it by {1 / made:.0%}; give {key} >= {enough:g}"
    )


def _per_second(x: float) -> str:
    # 1e300 Hz printed all its 301 digits.
    return f"{x:,.0f}" if 100 <= x < 1e12 else f"{x:.3g}"
