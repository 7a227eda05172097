"""How numbers look in every summary: durations, quantities with units, table cells."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["cell", "count", "duration", "in_flight", "quantity", "size", "table"]


def count(n: int, noun: str) -> str:
    """``1 conflict``, ``2,016 conflicts``: a count with its noun in the right number."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def in_flight(schedule: Any, n: Any) -> str:
    """``8 in flight``, or for all-at-once gathers, which send every fragment of a gather at
    once whatever bench.in_flight says, ``all in flight`` (it read "1 in flight")."""
    return "all in flight" if schedule == "all-at-once" else f"{n} in flight"


def duration(seconds: float) -> str:
    """Milliseconds below 1 s (``12.030 ms``), seconds above (``3.000 s``, ``12.50 s``): a
    window of 3 s read "3,000.000 ms"."""
    if seconds < 1:
        return f"{seconds * 1e3:,.3f} ms"
    return f"{seconds:,.3f} s" if seconds < 10 else f"{seconds:,.2f} s"


def quantity(value: float | None, unit: str = "", scale: float = 1.0, digits: int = 2) -> str:
    """``value × scale`` with `digits` decimals and a unit, or more decimals for two
    significant digits of a small value (0.03 Gb/s printed "0.00 GB/s"); ``n/a`` when
    there is no value."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    v = value * scale
    if v and abs(v) < 10.0 ** (1 - digits):
        digits = 1 - math.floor(math.log10(abs(v)))
    return f"{v:,.{digits}f}{unit}"


def table(
    head: list[str], rows: list[list[str]], right: list[bool], indent: str = "  "
) -> list[str]:
    """Lines of a plain aligned table (tabulate): cells as given, `right` per column."""
    from tabulate import tabulate

    text = tabulate(
        rows,
        headers=head,
        tablefmt="plain",
        disable_numparse=True,
        colalign=["right" if r else "left" for r in right],
    )
    return [indent + line.rstrip() for line in text.splitlines()]


def cell(value: Any) -> str:
    """A table cell: four significant digits, thousands separators from 1,000 (a column
    read "17,198" above "7253"); whole numbers as they are, to be typed back as values."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1e3 else f"{value:.4g}"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def size(b: float) -> str:
    """Bytes in decimal units, one decimal: 2.7 GB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return f"{b / scale:.1f} {unit}"
    return f"{b:.0f} B"
