"""Host lists: files of one hostname per line ('#' comments, blank lines ignored; the
format of ``scontrol show hostnames``), and Slurm hostlist expressions (``node[001-064,070]``)
read and written by python-hostlist, the maintained implementation of Slurm's syntax.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import hostlist as _hostlist

from ..errors import DaqnetError
from .files import read_text

__all__ = ["collect", "expand", "read_hostnames"]


def expand(expression: str, where: str, noun: str = "host") -> list[str]:
    """The hostnames of a Slurm hostlist expression, in its order; a repeated name is an
    error. `where` names the expression's origin (a scenario key, an option) for messages,
    `noun` what it lists (a topology.conf's Switches= lists switches)."""
    odd = next((c for c in expression if c.isspace() or not c.isprintable()), None)
    if odd is not None:
        # No host name holds one; and python-hostlist recurses without end on a line break
        # inside brackets (its regular expressions stop at it).
        raise DaqnetError(
            f"{where} = {expression!r}: not a hostlist expression ({odd!r} at position {expression.index(odd)})"
        )
    try:
        names: list[str] = _hostlist.expand_hostlist(expression, allow_duplicates=True)
    except _hostlist.BadHostlist as err:
        raise DaqnetError(f"{where} = {expression!r}: not a hostlist expression ({err})") from None
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise DaqnetError(f"{where} = {expression!r}: {noun} '{name}' is listed twice")
        seen.add(name)
    if not names:
        raise DaqnetError(f"{where} = {expression!r}: names no {noun}")
    return names


def collect(names: Sequence[str]) -> str:
    """A compact hostlist expression for a set of names (sorted, as Slurm prints node lists);
    a rank order needs a host file instead."""
    return str(_hostlist.collect_hostlist(list(names)))


def read_hostnames(
    path: str | Path, key: str, repeats: int = 1, why: str = ""
) -> list[tuple[str, int]]:
    """(hostname, line number) for every name in the file; a name listed more than `repeats`
    times is an error (`why` says where a `repeats` > 1 comes from).

    `key` is the scenario key that named the file, for the message when it cannot be read.
    """
    lines = read_text(path, f"{key} host list").splitlines()
    out: list[tuple[str, int]] = []
    first: dict[str, int] = {}
    seen: dict[str, int] = {}
    for lineno, line in enumerate(lines, 1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        if len(name.split()) != 1:
            raise DaqnetError(f"{path}:{lineno}: expected one hostname per line, got '{name}'")
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > repeats:
            more = f" {repeats} times ({why})" if repeats > 1 else f" on line {first[name]}"
            raise DaqnetError(f"{path}:{lineno}: host '{name}' already listed{more}")
        first.setdefault(name, lineno)
        out.append((name, lineno))
    return out
