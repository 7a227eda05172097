"""The figures of ``daqnet report`` (matplotlib, headless), drawn from result documents as
read back from JSON, and turned into SVG for the page.

The figures ``daqnet conflicts --plot`` and ``daqnet scan`` draw are reused as they are
(:func:`.conflicts_plot.conflicts_figure`, :func:`.scan_plot.scan_figure`); the others are the
views of a result the terminal summaries give as numbers: throughput over time, latency
percentiles, link loads per link class, step times.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeGuard, cast

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "bench_units_figure",
    "latency_figure",
    "link_bytes_figure",
    "link_utilization_figure",
    "step_times_figure",
    "svg_data_uri",
    "throughput_figure",
]

Row = Mapping[str, Any]


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def svg_data_uri(fig: Figure) -> str:
    """The figure as an SVG ``data:`` URI (text drawn as paths: no font needed to view it),
    and the figure closed. Each figure lives in its own image, so the ids matplotlib gives
    to an SVG's clip paths and glyphs cannot clash between figures of one page."""
    plt = _plt()
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="svg", metadata={"Date": None})
    finally:
        plt.close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _finite(v: Any) -> TypeGuard[float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def throughput_figure(
    series: Sequence[tuple[str, Sequence[Row], float | None]], per_node: int | None = None
) -> Figure:
    """Built-event throughput over time, one line per (label, time-series rows, warm-up
    seconds); each row covers ``seconds`` up to ``time_seconds``. With `per_node`, Gb/s per
    node (throughput over that many nodes) instead of the total. A benchmark's ``partial``
    periods, which hold the ranks' last reports, are left out: under bench.rate_hz the drain
    builds the last events at once, and 16 ms holding 8 of them read 16.7 Gb/s where the run
    made 0.07 (the axis scaled to it, the run's line flat on the floor)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 3.6), constrained_layout=True)
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
    for i, (label, rows, warmup) in enumerate(series):
        xs: list[float] = []
        ys: list[float] = []
        for r in rows:
            if r.get("partial"):
                continue
            t, width, gbps = r.get("time_seconds"), r.get("seconds"), r.get("throughput_gbps")
            if not (_finite(t) and _finite(width) and _finite(gbps)):
                continue
            y = gbps / per_node if per_node else gbps
            xs += [t - width, t]
            ys += [y, y]
        color = colors[i % len(colors)]
        ax.plot(xs, ys, color=color, lw=1.4, label=label)
        if warmup and _finite(warmup):
            ax.axvspan(0, warmup, color=color, alpha=0.08, lw=0)
            ax.axvline(warmup, color=color, ls=":", lw=1)
    ax.set_xlabel("time since start (s); shaded: warm-up, not measured")
    ax.set_ylabel("Gb/s per node" if per_node else "built-event throughput (Gb/s)")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    return cast("Figure", fig)


def latency_figure(entries: Sequence[tuple[str, Mapping[str, float | None]]]) -> Figure:
    """Event latency p50, p99 and max, one group of bars per percentile and one bar per
    (label, latency_seconds) entry; milliseconds."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 3.4), constrained_layout=True)
    names = ["p50", "p99", "max"]
    width = 0.8 / max(1, len(entries))
    for i, (label, lat) in enumerate(entries):
        xs = [j + (i - len(entries) / 2 + 0.5) * width for j in range(len(names))]
        ys = [(lat.get(n) or 0.0) * 1e3 for n in names]
        bars = ax.bar(xs, ys, width=width, label=label)
        ax.bar_label(bars, labels=[f"{y:.3g}" for y in ys], fontsize=7, padding=2)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_ylabel("event latency (ms)")
    ax.margins(y=0.15)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    return cast("Figure", fig)


def link_utilization_figure(links: Sequence[Row]) -> Figure:
    """Mean utilization of every directed link over the run, per link class (box and points)."""
    plt = _plt()
    classes = list(dict.fromkeys(str(ln["class"]) for ln in links))
    data = [[float(ln["utilization"]) * 100 for ln in links if ln["class"] == c] for c in classes]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * len(classes) + 2), 3.4), constrained_layout=True)
    if classes:
        ax.boxplot(data, showfliers=False)  # every link is drawn as a point
        for i, values in enumerate(data, start=1):
            ax.plot([i] * len(values), values, ".", color="tab:blue", alpha=0.35, ms=4)
        ax.set_xticks(range(1, len(classes) + 1))
        ax.set_xticklabels([f"{c}\n{len(d)} links" for c, d in zip(classes, data, strict=True)])
    ax.set_ylabel("mean utilization (% of capacity)")
    ax.set_ylim(0, 105)
    ax.grid(axis="y", alpha=0.3)
    return cast("Figure", fig)


def link_bytes_figure(rows: Sequence[Row]) -> Figure:
    """Bytes per link over the steps, per link class: median, mean, p99 and max."""
    plt = _plt()
    stats = [("median_bytes", "median"), ("mean_bytes", "mean"), ("p99_bytes", "p99")]
    stats.append(("max_bytes", "max"))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.6 * len(rows) + 2), 3.4), constrained_layout=True)
    width = 0.8 / len(stats)
    for i, (key, label) in enumerate(stats):
        xs = [j + (i - len(stats) / 2 + 0.5) * width for j in range(len(rows))]
        ax.bar(xs, [float(r[key]) / 1e6 for r in rows], width=width, label=label)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([f"{r['class']}\n{r['links']} links" for r in rows])
    ax.set_ylabel("MB per link over all steps")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small", ncol=4)
    return cast("Figure", fig)


def step_times_figure(steps: Sequence[Row]) -> Figure:
    """Every step's time with fair sharing, and on a contention-free fabric."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 3.4), constrained_layout=True)
    xs = [int(s["step"]) for s in steps]
    dot = "o" if len(xs) == 1 else ""  # a line of one point draws nothing (one-step workloads)
    ax.plot(
        xs,
        [float(s["seconds"]) * 1e3 for s in steps],
        drawstyle="steps-mid",
        lw=1,
        marker=dot,
        label="step",
    )
    ideal = [s.get("ideal_seconds") for s in steps]
    if all(_finite(v) for v in ideal):
        ax.plot(
            xs,
            [float(v) * 1e3 for v in ideal if _finite(v)],
            drawstyle="steps-mid",
            color="0.45",
            ls="--",
            lw=1,
            marker=dot,
            label="contention-free fabric",
        )
    ax.set_xlabel("step")
    ax.set_ylabel("time (ms)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    return cast("Figure", fig)


def bench_units_figure(units: Sequence[Row]) -> Figure:
    """Gb/s each readout unit sent and each builder unit received over the window, by rank."""
    plt = _plt()
    ru = [u for u in units if u.get("unit") == "ru"]
    bu = [u for u in units if u.get("unit") == "bu"]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.5 * max(len(ru), len(bu)) + 3), 3.2))
    fig.set_layout_engine("constrained")
    width = 0.4
    ax.bar(
        [int(u["rank"]) - width / 2 for u in ru],
        [float(u.get("gbps_out") or 0) for u in ru],
        width=width,
        label="readout unit, sent",
    )
    ax.bar(
        [int(u["rank"]) + width / 2 for u in bu],
        [float(u.get("gbps_in") or 0) for u in bu],
        width=width,
        label="builder unit, received",
    )
    ax.set_xlabel("rank")
    ax.set_ylabel("Gb/s")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    return cast("Figure", fig)
