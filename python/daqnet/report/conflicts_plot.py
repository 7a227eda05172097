"""Figures (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..analysis import ConflictReport
from ..errors import DaqnetError
from ..io.files import save_figure

__all__ = ["check_plot_path", "plot_conflicts"]


def check_plot_path(path: str | Path) -> None:
    """A writable file name with an extension matplotlib can write, or DaqnetError."""
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
    if not p.parent.is_dir():
        raise DaqnetError(f"figure {path!s}: directory {p.parent} does not exist")


def plot_conflicts(report: ConflictReport, path: str | Path, title: str | None = None) -> Path:
    """Conflicts and max link load per step, and the load distribution per link class."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    s = report.steps()
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(10, 7), constrained_layout=True)
    ax.plot(
        s["step"], s["conflicts"], drawstyle="steps-mid", color="tab:red", lw=1, label="conflicts"
    )
    ax.set_xlabel("step")
    ax.set_ylabel("conflicts (Σ max(0, flows − 1) over links)")
    ax.set_xlim(0.5, max(1.5, s["step"][-1] + 0.5) if len(s["step"]) else 1.5)
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot(
        s["step"],
        s["max_link_load"],
        drawstyle="steps-mid",
        color="tab:blue",
        lw=0.8,
        alpha=0.7,
        label="max link load",
    )
    ax2.set_ylabel("max flows on one link")
    ax2.set_ylim(bottom=0)
    ax2.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    lines = ax.get_lines() + ax2.get_lines()
    ax.legend(lines, [ln.get_label() for ln in lines], loc="upper right")
    title = title or f"{report.workload.describe()} — {report.total_conflicts} conflicts"
    if report.interrupted:  # the figure must not claim steps it does not hold
        title += f"\nINTERRUPTED: steps 1–{report.steps_done:,} of {report.steps_total:,} only"
        ax.set_xlim(0.5, report.steps_total + 0.5)
    ax.set_title(title)

    levels = report.levels()
    width = 0.8 / max(1, len(levels))
    for i, lv in enumerate(levels):
        loads = np.array(sorted(lv["histogram"]))
        counts = np.array([lv["histogram"][k] for k in loads], dtype=float)
        bx.bar(
            loads + (i - len(levels) / 2 + 0.5) * width,
            counts / max(1, lv["link_steps"]),
            width=width,
            label=lv["class"],
        )
    bx.xaxis.set_major_locator(MaxNLocator(integer=True))
    bx.set_xlabel("flows on a link in one step")
    bx.set_ylabel("fraction of (link, step) pairs")
    bx.set_yscale("log")
    bx.legend(ncol=3, fontsize="small")
    bx.set_title("load distribution per link class")
    try:
        save_figure(fig, path, dpi=110)
    except OSError as err:
        raise DaqnetError(f"figure {path}: cannot write: {err.strerror}") from None
    except ValueError as err:  # e.g. an unknown file extension
        raise DaqnetError(f"figure {path}: {err}") from None
    finally:
        plt.close(fig)
    return Path(path)
