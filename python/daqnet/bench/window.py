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

__all__ = ["WINDOW_LATENCIES", "short_window"]

#: Below this many event latencies a window gets a warning.
WINDOW_LATENCIES = 15


def short_window(latencies: float | None, latency_seconds: float, key: str) -> str | None:
    """Why a window of `latencies` event latencies of `latency_seconds` each leaves the
    throughput uncertain, naming the length of `key` to give; None when it is long enough
    (or unknown)."""
    if latencies is None or latencies >= WINDOW_LATENCIES:
        return None
    return (
        f"the measurement window held only {latencies:.1f} event latencies "
        f"({latency_seconds:.2g} s each): the throughput counts the events built in it, so it "
        f"can be several % off either way; give {key} >= "
        f"{math.ceil(WINDOW_LATENCIES * latency_seconds)}"
    )
