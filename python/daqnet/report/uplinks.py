"""``daqnet uplinks``: the up-port usage table as text, and as a figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..analysis.uplinks import UplinkUsage
from ..io.files import save_figure
from .format import table

__all__ = ["plot_uplinks", "uplinks_summary"]


def _pattern(row: np.ndarray, n: int = 16) -> str:
    """The first n ranks' up-port indexes, "." for a rank on the leaf: column k is rank k on
    every leaf (dropping the leaf's own ranks shifted the columns by leaf)."""
    seq = ("." if x < 0 else str(int(x)) for x in row[:n])
    return " ".join(seq) + (" ..." if len(row) > n else "")


def uplinks_summary(u: UplinkUsage, source: str = "") -> str:
    if len(u.leaves) == 2:
        patterns = "2 leaves: no rank lies off both, so their tables cannot be compared"
    else:
        patterns = (
            f"{len(u.leaves)} leaves, {u.patterns} distinct pattern(s) of spine per destination"
        )
        if u.patterns == 1 and len(u.leaves) > 2:
            patterns += " (regular tables: every leaf agrees)"
        if u.levels > 2:
            # Seen: updn tables on 3 levels, every leaf alike, 11,520 conflicts all on spine
            # to core links, which no rank order removes.
            patterns += (
                f"; leaves only: the spines' up-ports of this {u.levels}-level tree are not "
                "shown, and daqnet conflicts counts the conflicts there"
            )
    lines = [
        f"daqnet uplinks — {source}" if source else "daqnet uplinks",
        f"  fabric     {u.fabric}",
        f"  routing    {u.routing}",
        f"  placement  {u.placement}",
        "",
        f"  {patterns}",
        "  clashes: the leaf's destinations sharing an up-port, mean over the barrel steps",
        "  (its up-link conflicts per step; a tapered leaf has some whatever the order)",
        "",
    ]
    head = [
        "leaf",
        "hosts",
        "up",
        "dest/port",
        "clashes",
        "same as",
        "up-port of ranks 0-15 (. on the leaf)",
    ]
    rows = []
    for i, r in enumerate(u.leaves):
        per = r.destinations_per_port
        lo, hi = (min(per), max(per)) if per else (0, 0)
        rows.append(
            [
                r.leaf,
                str(r.hosts),
                str(len(r.up_ports)),
                f"{lo}" if lo == hi else f"{lo}-{hi}",
                f"{r.clashes_per_step:.2f}",
                r.same_as or "",
                _pattern(u.matrix[i]),
            ]
        )
    lines += table(head, rows, [False, True, True, True, True, False, False])
    return "\n".join(lines)


def plot_uplinks(u: UplinkUsage, path: str | Path, title: str | None = None) -> Path:
    """Leaves (rows) × destinations in rank order (columns), coloured by the up-port used;
    a leaf's own hosts are blank. Regular tables show the same stripes on every row."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = np.ma.masked_less(u.matrix, 0)
    ports = int(u.matrix.max()) + 1 if u.matrix.size else 1
    # At least as tall as the colour bar's label needs (4 leaves cut it to "p-port (index").
    height = min(max(3.5, 2.0 + 0.12 * len(u.leaves)), 14.0)
    fig, ax = plt.subplots(figsize=(10, height), layout="constrained")
    cmap = plt.get_cmap("tab20" if ports <= 20 else "viridis", ports)
    im = ax.imshow(
        m, aspect="auto", interpolation="nearest", cmap=cmap, vmin=-0.5, vmax=ports - 0.5
    )
    ax.set_xlabel("destination rank")
    ax.set_ylabel("leaf")
    if len(u.leaves) <= 40:
        ax.set_yticks(range(len(u.leaves)), [r.leaf for r in u.leaves], fontsize=7)
    bar = fig.colorbar(im, ax=ax, label="up-port (index\namong the leaf's up-ports)")
    if ports <= 20:  # one tick per port, not at the colours' edges
        bar.set_ticks(range(ports))
    ax.set_title(title or f"up-port per destination: {u.routing}", fontsize=10)
    save_figure(fig, path, 150)
    plt.close(fig)
    return Path(path)
