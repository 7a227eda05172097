"""Keeping an earlier complete result that a rerun into the same directory replaces, until
the rerun is complete too.

A run given an ``--out`` that already holds a result writes over it. Finished, that is what
the user asked for; interrupted (Ctrl-C two seconds in), it left a partial result where a
complete one had been, with no way back. So a complete earlier result of the same command
is moved into ``OUT/previous/`` (``previous-2`` if a directory of the user's has the name)
before it is written over: by ``bench``, ``scan`` and ``emulate``, which write as they go,
when they start (``bench --prepare`` too), and removed once the new run is complete; by
``conflicts``, ``simulate`` and ``study``, which write at the end, only when the run was
interrupted. After an interrupted or failed run it stays, and the command says where.
``daqnet report OUT/previous`` reads it as any result.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from ..errors import DaqnetError
from .result_files import recognise

__all__ = ["PREVIOUS", "discard_previous", "keep_if_interrupted", "kept", "set_aside"]

#: The subdirectory of --out that keeps an earlier complete result.
PREVIOUS = "previous"
# Written in it: only a directory daqnet made is ever emptied or removed (a user's own
# "previous" beside the results is theirs).
_MARK = ".daqnet-previous"


def _ours(keep: Path) -> bool:
    return keep.is_dir() and not keep.is_symlink() and (keep / _MARK).is_file()


def _keeper(out: Path) -> Path:
    """OUT/previous/, or previous-2, -3, ... when a user's own directory has the name."""
    keep, n = out / PREVIOUS, 1
    while (keep.exists() or keep.is_symlink()) and not _ours(keep):
        n += 1
        keep = out / f"{PREVIOUS}-{n}"
    return keep


def _kept(out: Path) -> Path | None:
    return next((p for p in sorted(out.glob(f"{PREVIOUS}*")) if _ours(p)), None)


def _complete(doc: object, command: str, result_name: str) -> bool:
    """That `doc` is a result of `command` ("simulate", "bench", ...) that ran to its end."""
    kind = recognise(doc)
    if kind is None or kind.split("-")[0] != command or not isinstance(doc, dict):
        return False
    if doc.get("interrupted") or doc.get("status") not in (None, "finished", "degraded"):
        return False
    return doc.get("points_done") == doc.get("points_total")  # a scan's or a study's


def set_aside(
    out: str | Path, command: str, files: Iterable[Path | str], result_name: str = "result.json"
) -> Path | None:
    """When `out` holds a complete `command` result (its `result_name` document), move it and
    the other `files` (names in `out`, or paths there; missing ones are passed over) into
    OUT/previous/, emptied first; returns that directory, or None when nothing complete was
    there (an earlier interrupted result is replaced as before, and OUT/previous/ kept)."""
    out = Path(out)
    try:
        doc = json.loads((out / result_name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not _complete(doc, command, result_name):
        return None
    discard_previous(out)
    keep = _keeper(out)
    try:
        keep.mkdir()
        (keep / _MARK).touch()
        for name in dict.fromkeys([result_name, *(Path(f).name for f in files)]):
            src = out / name
            if src.is_file() or (src.is_dir() and not src.is_symlink()):
                src.rename(keep / name)
    except OSError as err:
        raise DaqnetError(
            f"--out {out}: cannot keep the earlier result in {keep}: {err.strerror}"
        ) from None
    return keep


def discard_previous(out: str | Path) -> None:
    """Remove what OUT/previous/ keeps, once the run that replaced it is complete."""
    while (keep := _kept(Path(out))) is not None:
        shutil.rmtree(keep, ignore_errors=True)
        if keep.exists():  # could not be removed: leave it
            return


def kept(out: str | Path | None) -> str:
    """ " (an earlier complete result is kept in OUT/previous)" when OUT/previous/ holds one,
    for the note of a run that did not complete; else ""."""
    keep = _kept(Path(out)) if out else None
    return f" (an earlier complete result is kept in {keep})" if keep else ""


def keep_if_interrupted(
    out: str | Path,
    command: str,
    interrupted: bool,
    files: Iterable[Path | str],
    result_name: str = "result.json",
) -> None:
    """For a command that writes its files at the end, before it writes them: interrupted, a
    complete earlier result is set aside; complete, what an earlier one kept is removed."""
    if interrupted:
        set_aside(out, command, files, result_name)
    else:
        discard_previous(out)
