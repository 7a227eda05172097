"""Steps files: an explicit schedule, one step per line, each flow ``SRC>DST`` (ranks from 0),
flows separated by blanks; ``#`` starts a comment, blank lines are skipped. ``daqnet repair
--what schedule`` writes them and ``[workload] kind = "steps"`` reads them back."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import DaqnetError
from .files import read_text, write_text_atomic

__all__ = ["read_steps", "write_steps"]

_FLOW = re.compile(r"(\d+)>(\d+)")


def read_steps(path: str | Path, ranks: int | None = None) -> tuple[int, list[np.ndarray]]:
    """(ranks, steps as (n, 2) int32 arrays). Ranks default to one more than the largest
    named; with `ranks` given, a larger rank is an error."""
    text = read_text(path, "workload.file")
    steps: list[np.ndarray] = []
    top = -1
    for number, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].split()
        if not body:
            continue
        flows = []
        for col, word in enumerate(body, 1):
            m = _FLOW.fullmatch(word)
            if m is None:
                raise DaqnetError(
                    f"{path}:{number}: flow {col} = {word!r}: expected SRC>DST (ranks from 0)"
                )
            src, dst = int(m.group(1)), int(m.group(2))
            if max(src, dst) >= 2**31 - 1:
                raise DaqnetError(f"{path}:{number}: flow {col} = {word!r}: rank out of range")
            if src == dst:
                raise DaqnetError(f"{path}:{number}: flow {col} = {word!r}: a rank sends to itself")
            if ranks is not None and max(src, dst) >= ranks:
                raise DaqnetError(
                    f"{path}:{number}: flow {col} = {word!r}: rank beyond the {ranks} placed"
                )
            top = max(top, src, dst)
            flows.append((src, dst))
        steps.append(np.array(flows, dtype=np.int32).reshape(-1, 2))
    if not steps:
        raise DaqnetError(f"{path}: no steps (one line per step of SRC>DST flows)")
    return (ranks if ranks is not None else top + 1), steps


def write_steps(path: str | Path, steps: Sequence[np.ndarray], comment: str = "") -> None:
    lines = [f"# {c}" for c in comment.splitlines()] if comment else []
    lines += [" ".join(f"{s}>{d}" for s, d in step) for step in steps]
    write_text_atomic(path, "\n".join(lines) + "\n")
