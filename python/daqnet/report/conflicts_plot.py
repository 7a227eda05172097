"""The figure of ``daqnet conflicts`` (matplotlib, headless), from a report or its JSON tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis import ConflictReport
from ..errors import DaqnetError
from ..io.files import save_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["check_plot_path", "conflicts_figure", "plot_conflicts"]


def check_plot_path(path: str | Path, made: str | Path | None = None) -> None:
    """A writable file name with an extension matplotlib can write, or DaqnetError; its
    directory may be `made`, which the command creates first (its --out)."""
    from matplotlib.figure import Figure

    p = Path(path)
    formats = Figure().canvas.get_supported_filetypes()
    ext = p.suffix.lstrip(".").lower()
    if not p.name or (p.name.startswith(".") and not p.stem.lstrip(".")):
        raise DaqnetError(f"figure {path!s}: give a file name, e.g. conflicts.png")
    if ext not in formats:
        raise DaqnetError(
            f"figure {path!s}: unknown figure format '{ext}' (use one of {', '.join(sorted(formats))})"
        )
    if not p.parent.is_dir() and not (
        made is not None and p.parent.resolve() == Path(made).resolve()
    ):
        raise DaqnetError(f"figure {path!s}: directory {p.parent} does not exist")


def plot_conflicts(report: ConflictReport, path: str | Path, title: str | None = None) -> Path:
    """Conflicts and max link load per step, and the load distribution per link class."""
    title = title or f"{report.workload.describe()} — {report.total_conflicts} conflicts"
    s = report.steps()
    fig = conflicts_figure(
        s["step"],
        s["conflicts"],
        s["max_link_load"],
        report.levels(),
        title,
        None if not report.interrupted else (report.steps_done, report.steps_total),
    )
    import matplotlib.pyplot as plt

    try:
        save_figure(fig, path, dpi=110)
    except OSError as err:
        raise DaqnetError(f"figure {path}: cannot write: {err.strerror}") from None
    except ValueError as err:  # e.g. an unknown file extension
        raise DaqnetError(f"figure {path}: {err}") from None
    finally:
        plt.close(fig)
    return Path(path)


def conflicts_figure(
    step: Sequence[int] | np.ndarray,
    conflicts: Sequence[int] | np.ndarray,
    max_link_load: Sequence[int] | np.ndarray,
    levels: Sequence[Mapping[str, Any]],
    title: str,
    interrupted: tuple[int, int] | None = None,
) -> Figure:
    """The figure of :func:`plot_conflicts` from plain tables: the per-step columns and the
    per-class load histograms (``levels``, keys as numbers or, read from JSON, as strings),
    as the ``--json`` document holds them. `interrupted` is (steps done, steps total)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    steps = np.asarray(step)
    # A line of one point draws nothing: a one-step workload (stencil, multicast,
    # all-to-all) had empty axes. Markers then, of two sizes: the two points sit at the same
    # height of their own axes.
    one = len(steps) == 1
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(10, 7), constrained_layout=True)
    ax.plot(
        steps,
        conflicts,
        drawstyle="steps-mid",
        color="tab:red",
        lw=1,
        marker="o" if one else "",
        ms=10,
        label="conflicts",
    )
    ax.set_xlabel("step")
    ax.set_ylabel("conflicts (Σ max(0, flows − 1) over links)")
    ax.set_xlim(0.5, max(1.5, steps[-1] + 0.5) if len(steps) else 1.5)
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot(
        steps,
        max_link_load,
        drawstyle="steps-mid",
        color="tab:blue",
        lw=0.8,
        alpha=0.7,
        marker="D" if one else "",
        ms=5,
        label="max link load",
    )
    ax2.set_ylabel("max flows on one link")
    ax2.set_ylim(bottom=0)
    ax2.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    # Steps, not step 0.6 (with one step the locator's two ticks needed fractions).
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    if one and len(max_link_load):
        # Both markers sat at the top of their own axes, one on the other.
        ax2.set_ylim(0, max(1.0, float(np.asarray(max_link_load)[0])) * 1.6)
    lines = ax.get_lines() + ax2.get_lines()
    ax.legend(lines, [ln.get_label() for ln in lines], loc="upper right")
    if interrupted is not None:  # the figure must not claim steps it does not hold
        done, total = interrupted
        title += f"\nINTERRUPTED: steps 1–{done:,} of {total:,} only"
        ax.set_xlim(0.5, total + 0.5)
    ax.set_title(title)

    width = 0.8 / max(1, len(levels))
    lowest = 1.0
    for i, lv in enumerate(levels):
        hist = {int(k): v for k, v in lv["histogram"].items()}
        loads = np.array(sorted(hist))
        counts = np.array([hist[k] for k in loads], dtype=float)
        fractions = counts / max(1, lv["link_steps"])
        bx.bar(
            loads + (i - len(levels) / 2 + 0.5) * width, fractions, width=width, label=lv["class"]
        )
        lowest = min([lowest, *(f for f in fractions if f > 0)])
    bx.xaxis.set_major_locator(MaxNLocator(integer=True))
    bx.set_xlabel("flows on a link in one step")
    bx.set_ylabel("fraction of (link, step) pairs")
    bx.set_yscale("log")
    # Fractions: up to 1, and the smallest bar tall enough to see (the axis ran from just
    # below it, a stub, up to 10).
    bx.set_ylim(lowest / 4, 1.5)
    bx.legend(ncol=3, fontsize="small")
    bx.set_title("load distribution per link class")
    return fig
