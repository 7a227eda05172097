"""The summary table and the figure of ``daqnet study``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..io.files import save_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_study", "study_figure", "study_summary"]


def study_summary(r: Mapping[str, Any], files: list[str]) -> str:
    lines = [f"daqnet study {r['study']} — {r['scenario']}", ""]
    if r["study"] == "mapping":
        lines.append(
            f"  {'pattern':<11}{'routing':<10}{'mapping':<19}{'time':>11}{'ideal':>11}{'slowdown':>10}  bottleneck"
        )
        for row in r["rows"]:
            lines.append(
                f"  {row['pattern']:<11}{row['routing.engine']:<10}{row['placement.order']:<19}"
                f"{row['total_seconds'] * 1e3:>8.2f} ms{row['ideal_seconds'] * 1e3:>8.2f} ms"
                f"{row['slowdown']:>10.1f}  {row['bottleneck_class']}"
            )
    else:
        first = next((c for c in r["columns"] if c.startswith("slowdown_vs_")), "")
        lines.append(
            f"  {'taper':<7}{'pattern':<12}{'time':>11}{'vs ' + first[12:]:>9}{'switches':>10}"
            f"{'cost':>13}  bottleneck"
        )
        for row in r["rows"]:
            vs = row.get(first)
            lines.append(
                f"  {row['taper']:<7}{row['pattern']:<12}{row['total_seconds'] * 1e3:>8.2f} ms"
                f"{('×' + format(vs, '.2f')) if vs else '':>9}{row['switches']:>10,}{row['cost']:>13,.0f}"
                f"  {row['bottleneck_class']}"
            )
    lines += ["", *[f"  {f}" for f in r["findings"]]]
    done = f"{r['points_done']} of {r['points_total']} points"
    lines += [
        "",
        f"  {'INTERRUPTED: ' if r['interrupted'] else ''}{done}; wrote {', '.join(files)}",
    ]
    return "\n".join(lines)


def plot_study(r: Mapping[str, Any], path: Path) -> Path | None:
    """Write the study's figure (None when no point was run)."""
    if not r["rows"]:
        return None  # before matplotlib loads (seconds)
    import matplotlib.pyplot as plt

    fig = study_figure(r)
    try:
        save_figure(fig, path, 120)
    finally:
        plt.close(fig)
    return path


def study_figure(r: Mapping[str, Any]) -> Figure:
    """Mapping: iteration time per mapping, direct and indirect, one panel per pattern.
    Taper: slowdown against the full tree per pattern, and mean bytes per stage (headless;
    of a study with rows)."""
    rows = r["rows"]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if r["study"] == "mapping":
        patterns = list(dict.fromkeys(row["pattern"] for row in rows))
        fig, axes = plt.subplots(
            1,
            len(patterns),
            figsize=(5 * len(patterns), 4.5),
            squeeze=False,
            constrained_layout=True,
        )
        for ax, pattern in zip(axes[0], patterns, strict=True):
            mine = [row for row in rows if row["pattern"] == pattern]
            orders = list(dict.fromkeys(row["placement.order"] for row in mine))
            for k, engine in enumerate(("direct", "indirect")):
                of = [row for row in mine if row["routing.engine"] == engine]
                t = {row["placement.order"]: row["total_seconds"] * 1e3 for row in of}
                xs = [i + 0.4 * k for i in range(len(orders))]
                ax.bar(xs, [t.get(o, 0) for o in orders], 0.4, label=engine)
                # Each mapping's own contention-free time: what stays on a node differs by
                # mapping, and one line at the lowest sat 2.8x under the default's own.
                ideal = {row["placement.order"]: row["ideal_seconds"] * 1e3 for row in of}
                ax.plot(
                    xs,
                    [ideal.get(o, float("nan")) for o in orders],
                    ls="",
                    marker="_",
                    ms=14,
                    mew=2,
                    color="k",
                    label="contention-free" if k == 0 else None,
                )
            ax.set_xticks([i + 0.2 for i in range(len(orders))], orders, rotation=35, ha="right")
            ax.set_yscale("log")
            ax.set_ylabel("iteration time (ms)")
            ax.set_title(pattern)
        # One legend below the panels: inside one it covered the last bars (multicast).
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8)
    else:
        tapers = list(dict.fromkeys(row["taper"] for row in rows))
        patterns = list(dict.fromkeys(row["pattern"] for row in rows))
        first = next(c for c in r["columns"] if c.startswith("slowdown_vs_"))
        stages = [c[: -len(":mean_bytes")] for c in r["columns"] if c.endswith(":mean_bytes")]
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.5), constrained_layout=True)
        width = 0.8 / len(tapers)
        for k, t in enumerate(tapers):
            v = {row["pattern"]: row.get(first) or 0 for row in rows if row["taper"] == t}
            ax.bar(
                [i + k * width for i in range(len(patterns))],
                [v.get(p, 0) for p in patterns],
                width,
                label=t,
            )
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(patterns))], patterns)
        ax.set_ylabel(f"time against {first[12:]}")
        ax.legend(title="taper")
        # Per-link load of every switch stage relative to a host link's: where the bytes
        # go when up-links are trimmed.
        labels = [f"{t}\n{p}" for t in tapers for p in patterns]
        inner = [st for st in stages if not st.startswith("host->") and not st.endswith("->host")]
        width2 = 0.8 / max(1, len(inner))
        for k, st in enumerate(inner):
            vals = []
            for t in tapers:
                for p in patterns:
                    row: Mapping[str, Any] = next(
                        (x for x in rows if x["taper"] == t and x["pattern"] == p), {}
                    )
                    host = row.get("host->leaf:mean_bytes") or 0
                    vals.append((row.get(f"{st}:mean_bytes") or 0) / host if host else 0)
            bx.bar([i + k * width2 for i in range(len(labels))], vals, width2, label=st)
        bx.set_xticks([i + 0.4 - width2 / 2 for i in range(len(labels))], labels, fontsize=7)
        bx.set_ylabel("mean bytes per link, relative to a host link")
        bx.legend(fontsize=7)
    fig.suptitle(f"{r['name']}: study {r['study']}")
    return fig
