"""Host list files: one hostname per line, '#' comments, blank lines ignored.

The format of ``scontrol show hostnames`` output; used for host naming and placement.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DaqnetError
from .files import read_text

__all__ = ["read_hostnames"]


def read_hostnames(path: str | Path, key: str) -> list[tuple[str, int]]:
    """(hostname, line number) for every name in the file; a repeated name is an error.

    `key` is the scenario key that named the file, for the message when it cannot be read.
    """
    lines = read_text(path, f"{key} host list").splitlines()
    out: list[tuple[str, int]] = []
    first: dict[str, int] = {}
    for lineno, line in enumerate(lines, 1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        if len(name.split()) != 1:
            raise DaqnetError(f"{path}:{lineno}: expected one hostname per line, got '{name}'")
        if name in first:
            raise DaqnetError(
                f"{path}:{lineno}: host '{name}' already listed on line {first[name]}"
            )
        first[name] = lineno
        out.append((name, lineno))
    return out
