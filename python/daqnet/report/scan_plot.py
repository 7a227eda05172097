"""Figures of a scan (matplotlib, headless): a line over one varied key, a heat map over two,
small multiples of heat maps over a third and fourth key.

Numeric values are placed in increasing order, strings and lists in the order given. The
best point (highest or lowest, as the metric wants) is marked; missing points of an
interrupted scan are left blank.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..io.files import save_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["MAX_KEYS", "MAX_PANELS", "layout_problem", "plot_scan", "scan_figure"]

MAX_KEYS = 4  # x, y, facet columns, facet rows
MAX_PANELS = 30  # heat maps in one figure
_ANNOTATE_CELLS = 400  # write the value in each cell up to this many cells per heat map
# Labelled ticks per axis at most: a label for each of thousands of values is unreadable, and
# matplotlib's layout took 35 s over the 8,000 of one scan.
_MAX_TICKS = 40

# The contention-free counterpart drawn next to a steps-mode metric.
_IDEAL = {"gbps_per_host": "ideal_gbps_per_host", "total_seconds": "ideal_seconds"}
_LABELS = {
    "gbps_per_host": "Gb/s per host",
    "ideal_gbps_per_host": "contention-free Gb/s per host",
    "throughput_gbps": "built-event throughput (Gb/s)",
    "events_per_second": "events per second",
    "events_built": "events built",
    "window_seconds": "measured window (s)",
    "total_seconds": "time of all steps (s)",
    "ideal_seconds": "contention-free time (s)",
    "slowdown": "slowdown against a contention-free fabric",
    "steps_total": "steps",
    "steps_done": "steps done",
    "latency_p50_seconds": "event latency p50 (s)",
    "latency_p99_seconds": "event latency p99 (s)",
    "latency_max_seconds": "event latency max (s)",
}


def _label(metric: str) -> str:
    """The axis label of a column, also of a measured scan's NAME_median, predicted_NAME."""
    for suffix, how in (("_median", "median"), ("_min", "min"), ("_max", "max")):
        base = metric.removesuffix(suffix)
        if base != metric and base in _LABELS:
            return f"{_LABELS[base]}, measured ({how} of runs)"
    if metric.startswith("predicted_") and metric[10:] in _LABELS:
        return f"{_LABELS[metric[10:]]}, predicted"
    if metric.startswith("ratio_") and metric[6:] in _LABELS:
        return f"{_LABELS[metric[6:]]}: measured / predicted"
    return _LABELS.get(metric, metric)


def layout_problem(sizes: list[int]) -> str | None:
    """Why a scan over keys with these numbers of values cannot be drawn, or None."""
    if len(sizes) > MAX_KEYS:
        return (
            f"a figure shows at most {MAX_KEYS} varied keys (x, y, facet columns, facet rows); "
            f"this scan varies {len(sizes)} (set some to one value, or plot scan.csv yourself)"
        )
    panels = math.prod(sizes[2:])
    if panels > MAX_PANELS:
        return f"the 3rd and 4th varied keys give {panels} panels, at most {MAX_PANELS} fit in one figure"
    return None


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _ordered(values: list[Any]) -> list[Any]:
    return sorted(values) if all(_is_number(v) for v in values) else list(values)


def _ident(v: Any) -> str:
    return json.dumps(v, sort_keys=True)


def _text(key: str, v: Any) -> str:
    """A tick label: byte sizes in KiB/MiB/GiB when whole, numbers short, lists compact."""
    if _is_number(v) and key.endswith("bytes") and v >= 1024:
        for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if v >= scale and float(v / scale).is_integer():
                return f"{int(v / scale)} {unit}"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, dict)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def _ticks(n: int) -> list[int]:
    """Indices of the values to label on an axis of n: all, or _MAX_TICKS evenly spread
    from the first to the last."""
    if n <= _MAX_TICKS:
        return list(range(n))
    return sorted({round(i * (n - 1) / (_MAX_TICKS - 1)) for i in range(_MAX_TICKS)})


def _value(row: dict[str, Any] | None, metric: str) -> float:
    v = None if row is None else row.get(metric)
    return float(v) if v is not None and _is_number(v) else math.nan


def _fmt(v: float) -> str:
    if math.isnan(v):
        return ""
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.4g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2e}"


def plot_scan(doc: Mapping[str, Any], path: str | Path) -> Path:
    """Draw the scan document (scan.json) into `path`."""
    import matplotlib.pyplot as plt

    fig = scan_figure(doc)
    path = Path(path)
    try:
        save_figure(fig, path, dpi=120)
    finally:
        plt.close(fig)
    return path


def scan_figure(doc: Mapping[str, Any]) -> Figure:
    """The matplotlib Figure of a scan document (headless)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problem = layout_problem([len(v["values"]) for v in doc["vary"]])
    if problem is not None:
        raise ValueError(problem)
    note = f"{doc['name']} ({doc['mode']} mode)"
    if doc["overrides"]:
        note += ", set " + " ".join(doc["overrides"])
    if doc["points_done"] < doc["points_total"]:
        note += f", {doc['points_done']} of {doc['points_total']} points"
    from .scan_caveats import ranking_note

    caveat = ranking_note(doc)
    if caveat:
        note += "; " + caveat.split(" --metric")[0].rstrip(";")
    fig = _line(doc, plt) if len(doc["vary"]) == 1 else _heat_maps(doc, plt)
    # Wrapped by hand: constrained layout makes room for the lines it is given.
    width = max(40, int(fig.get_figwidth() * 12))
    fig.suptitle(
        "\n".join([textwrap.fill(_title(doc), width), textwrap.fill(note, width)]), fontsize=10
    )
    return fig


def _title(doc: Mapping[str, Any]) -> str:
    how = "highest" if doc["higher_is_better"] else "lowest"
    best = doc["best"]
    if best is None:
        return _label(doc["metric"])
    where = ", ".join(f"{v['key']}={_text(v['key'], best[v['key']])}" for v in doc["vary"])
    mark = " (red frame)" if len(doc["vary"]) > 1 else ""
    return f"{_label(doc['metric'])} — best ({how}){mark}: {_fmt(best[doc['metric']])} at {where}"


def _line(doc: Mapping[str, Any], plt: Any) -> Figure:
    key = doc["vary"][0]["key"]
    metric = doc["metric"]
    values = _ordered(doc["vary"][0]["values"])
    rows = {_ident(r[key]): r for r in doc["rows"]}
    numeric = all(_is_number(v) for v in values)
    xs = list(values) if numeric else list(range(len(values)))
    ys = [_value(rows.get(_ident(v)), metric) for v in values]

    fig, ax = plt.subplots(figsize=(8, 4.8), constrained_layout=True)
    # Categories (mpi, tcp) have no values between them: points, not a line through them.
    style = "o-" if numeric else "o"
    ax.plot(xs, ys, style, color="tab:blue", label=_label(metric))
    base = metric.removesuffix("_median")
    repeat = doc.get("repeat", 1)
    if base != metric and rows and f"{base}_min" in doc["columns"] and repeat > 1:
        # A measured scan: the spread of the runs around their median.
        low = [_value(rows.get(_ident(v)), f"{base}_min") for v in values]
        high = [_value(rows.get(_ident(v)), f"{base}_max") for v in values]
        ax.fill_between(
            xs,
            low,
            high,
            color="tab:blue",
            alpha=0.2,
            label=f"min–max of {repeat} runs",
        )
    if base != metric and rows and f"predicted_{base}" in doc["columns"]:
        ax.plot(
            xs,
            [_value(rows.get(_ident(v)), f"predicted_{base}") for v in values],
            "s--" if numeric else "s",
            color="tab:orange",
            ms=4,
            label=f"{_LABELS.get(base, base)}, predicted",
        )
    ideal = _IDEAL.get(metric) if doc["mode"] == "steps" else None
    ideal_ys = [_value(rows.get(_ident(v)), ideal) for v in values] if ideal else []
    if not all(math.isnan(y) for y in ideal_ys):  # none with simulate.ideal = false
        ax.plot(
            xs,
            ideal_ys,
            "s--" if numeric else "s",
            color="0.45",
            ms=4,
            label="contention-free fabric",
        )
    best = doc["best"]
    if best is not None:
        bx = best[key] if numeric else values.index(best[key])
        ax.plot([bx], [best[metric]], "*", color="tab:red", ms=16, zorder=5, label="best")
    if numeric and min(values) > 0 and max(values) / min(values) >= 16:
        ax.set_xscale("log", base=2 if key.endswith("bytes") else 10)
    if not numeric or len(values) <= 12:
        shown = _ticks(len(values))
        ax.set_xticks([xs[i] for i in shown])
        ax.set_xticklabels([_text(key, values[i]) for i in shown])
        ax.minorticks_off()
    ax.set_xlabel(key)
    ax.set_ylabel(_label(metric))
    if all(not math.isnan(y) and y >= 0 for y in ys):
        ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    return cast("Figure", fig)


def _heat_maps(doc: Mapping[str, Any], plt: Any) -> Figure:
    from matplotlib.colors import Normalize
    from matplotlib.patches import Rectangle

    metric = doc["metric"]
    axes_ = doc["vary"]
    keys = [v["key"] for v in axes_]
    order = [_ordered(v["values"]) for v in axes_]
    xk, yk = keys[0], keys[1]
    xs, ys = order[0], order[1]
    cols = order[2] if len(keys) > 2 else [None]
    rws = order[3] if len(keys) > 3 else [None]
    by_point = {tuple(_ident(r[k]) for k in keys): r for r in doc["rows"]}
    best = doc["best"]

    def grid(c: Any, r: Any) -> list[list[float]]:
        extra = (c, r)[: len(keys) - 2]
        return [
            [_value(by_point.get(tuple(_ident(v) for v in (x, y, *extra))), metric) for x in xs]
            for y in ys
        ]

    grids = {(ci, ri): grid(c, r) for ci, c in enumerate(cols) for ri, r in enumerate(rws)}
    finite = [v for g in grids.values() for line in g for v in line if not math.isnan(v)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if hi <= lo:
        lo, hi = lo - 0.5 * abs(lo or 1), hi + 0.5 * abs(hi or 1)
    norm = Normalize(lo, hi)
    cmap = plt.get_cmap("viridis" if doc["higher_is_better"] else "viridis_r").with_extremes(
        bad="0.9"
    )

    cell = 0.8 if len(xs) * len(ys) <= _ANNOTATE_CELLS else 0.25
    pw = max(4.0, cell * len(xs) + 1.8)
    ph = max(3.0, 0.7 * cell * len(ys) + 1.4)
    fig, grid_axes = plt.subplots(
        len(rws),
        len(cols),
        figsize=(min(40, pw * len(cols) + 1.5), min(40, ph * len(rws) + 0.8)),
        squeeze=False,
        constrained_layout=True,
    )
    annotate = len(xs) * len(ys) <= _ANNOTATE_CELLS
    image = None
    for (ci, ri), g in grids.items():
        ax = grid_axes[ri][ci]
        image = ax.imshow(
            g,  # NaN (a point not run) is drawn in the colormap's "bad" grey
            origin="lower",
            aspect="auto",
            cmap=cmap,
            norm=norm,
            interpolation="nearest",
        )
        shown_x, shown_y = _ticks(len(xs)), _ticks(len(ys))
        ax.set_xticks(shown_x)
        ax.set_xticklabels([_text(xk, xs[i]) for i in shown_x], rotation=45 if len(xs) > 6 else 0)
        ax.set_yticks(shown_y)
        ax.set_yticklabels([_text(yk, ys[i]) for i in shown_y])
        if ri == len(rws) - 1:
            ax.set_xlabel(xk)
        if ci == 0:
            ax.set_ylabel(yk)
        facet = []
        if len(keys) > 2:
            facet.append(f"{keys[2]}={_text(keys[2], cols[ci])}")
        if len(keys) > 3:
            facet.append(f"{keys[3]}={_text(keys[3], rws[ri])}")
        if facet:
            ax.set_title(", ".join(facet), fontsize=9)
        if annotate:
            for yi, line in enumerate(g):
                for xi, v in enumerate(line):
                    if math.isnan(v):
                        continue
                    shade = norm(v) if doc["higher_is_better"] else 1 - norm(v)
                    ax.text(
                        xi,
                        yi,
                        _fmt(v),
                        ha="center",
                        va="center",
                        fontsize=7 if len(xs) > 8 else 8,
                        color="black" if shade > 0.6 else "white",
                    )
        if best is not None:
            here = [_ident(best[k]) for k in keys[2:]]
            mine = [_ident(v) for v in (cols[ci], rws[ri])[: len(keys) - 2]]
            if here == mine:
                bx = [_ident(v) for v in xs].index(_ident(best[xk]))
                by = [_ident(v) for v in ys].index(_ident(best[yk]))
                ax.add_patch(
                    Rectangle(
                        (bx - 0.5, by - 0.5),
                        1,
                        1,
                        fill=False,
                        edgecolor="red",
                        lw=2.5,
                        zorder=4,
                        clip_on=False,
                    )
                )
    fig.colorbar(image, ax=grid_axes, shrink=0.9, label=_label(metric))
    return cast("Figure", fig)
