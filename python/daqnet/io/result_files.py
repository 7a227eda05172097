"""Finding the results of daqnet's commands on disk, and telling them apart by what they hold.

``daqnet conflicts --out``, ``simulate --out`` and ``bench --out`` write ``result.json``;
``daqnet scan``, ``study``, ``repair`` and ``emulate`` write ``scan.json``, ``study.json``,
``repair.json`` and ``emulate.json``. The file name does not say which command wrote it (three write
result.json), so every JSON file of a directory is read and recognised by its keys. Files
that are JSON but no result (a benchmark's ``rank-N.json``, ``launch.json``) are passed
over; a directory with no result at all, or whose only candidates are not valid JSON, stops
with one line naming it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DaqnetError
from .files import read_text

__all__ = ["KINDS", "ResultFile", "check_not_another", "read_results", "recognise"]

#: What each kind of result is called on the page, by the key :func:`recognise` returns.
KINDS = {
    "conflicts": "daqnet conflicts",
    "simulate-steps": "daqnet simulate (steps mode)",
    "simulate-protocol": "daqnet simulate (protocol mode)",
    "scan": "daqnet scan",
    "bench": "daqnet bench",
    "study": "daqnet study",
    "repair": "daqnet repair",
    "emulate": "daqnet emulate",
    "plan": "daqnet plan",
}

# The keys that make each document what it is (every one of them is written by its command).
_SIGNATURES: dict[str, tuple[frozenset[str], Mapping[str, Any]]] = {
    "conflicts": (
        frozenset({"total_conflicts", "steps", "levels", "worst_links", "sum_max_link_load"}),
        {},
    ),
    "simulate-steps": (
        frozenset({"steps", "link_loads", "solver", "total_seconds", "ideal_seconds", "config"}),
        {"mode": "steps"},
    ),
    "simulate-protocol": (
        frozenset({"units", "timeseries", "links", "solver", "throughput_gbps", "config"}),
        {"mode": "protocol"},
    ),
    "scan": (frozenset({"vary", "rows", "columns", "metric", "points_total", "best"}), {}),
    "bench": (
        frozenset({"run_config", "units", "timeseries", "status", "ranks", "transport"}),
        {},
    ),
    "study": (frozenset({"study", "rows", "columns", "findings", "points_total"}), {}),
    "repair": (
        frozenset({"what", "method", "conflicts_before", "conflicts_after", "seconds_after"}),
        {},
    ),
    "emulate": (
        frozenset({"scale", "traffic", "measured", "predicted", "links", "paths_match", "hosts"}),
        {},
    ),
    "plan": (frozenset({"hosts", "gbps", "radix", "prices", "candidates"}), {}),
}


@dataclass
class ResultFile:
    """One result document and where it was read from."""

    kind: str  #: a key of KINDS
    path: Path
    doc: dict[str, Any]

    @property
    def title(self) -> str:
        """The scenario's name and the command, e.g. "bench-local — daqnet bench"."""
        name = self.doc.get("name") or self.doc.get("config", {}).get("values", {}).get("name")
        if not name and self.kind == "plan" and isinstance(self.doc.get("hosts"), int):
            name = f"{self.doc['hosts']:,} hosts"  # a plan has no scenario
        return f"{name or self.path.parent.name}{self._changes()} — {KINDS[self.kind]}"

    def _changes(self) -> str:
        """The --set items the run changed its scenario file with, as " (fabric.hosts=72)":
        after `--set fabric.hosts=72` the title named the file's 540-host scenario alone."""
        config = self.doc.get("config")
        sets = config.get("set") if isinstance(config, dict) else self.doc.get("set")
        if not isinstance(sets, list) or not sets:
            return ""
        shown = ", ".join(str(s) for s in sets[:2])
        return f" ({shown}{f', +{len(sets) - 2} more --set' if len(sets) > 2 else ''})"


def recognise(doc: Any) -> str | None:
    """The kind of result `doc` is (a key of KINDS), or None if it is none of them."""
    if not isinstance(doc, dict):
        return None
    for kind, (keys, values) in _SIGNATURES.items():
        if keys <= doc.keys() and all(doc.get(k) == v for k, v in values.items()):
            return kind
    return None


def _incomplete(doc: Any) -> str | None:
    """What a document lacks to be the result it comes closest to (most of a kind's keys,
    at least half): "not a complete daqnet scan result: no 'rows'", or None."""
    if not isinstance(doc, dict):
        return None
    have = {kind: len(keys & doc.keys()) for kind, (keys, _values) in _SIGNATURES.items()}
    best = max(have, key=lambda kind: have[kind])
    keys = _SIGNATURES[best][0]
    missing = keys - doc.keys()
    if have[best] * 2 < len(keys) or not missing:
        return None
    names = ", ".join(f"'{k}'" for k in sorted(missing))
    return f"not a complete {KINDS[best]} result: no {names}"


def _load(path: Path) -> Any:
    text = read_text(path, "result file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        if path.suffix.lower() != ".json":  # a table or a scenario, not a damaged result
            raise DaqnetError(
                f"{path}: not a daqnet result (a {path.suffix or 'file without suffix'} "
                "file; give the directory written with --out, or its result JSON file)"
            ) from None
        raise DaqnetError(
            f"{path}:{err.lineno}:{err.colno}: not valid JSON ({err.msg}); "
            "the file is damaged or was cut short"
        ) from None


def _from_dir(directory: Path) -> list[ResultFile]:
    found, broken = [], []
    for path in sorted(directory.glob("*.json")):
        if not path.is_file():
            continue
        try:
            doc = _load(path)
        except DaqnetError as err:
            broken.append(err)
            continue
        kind = recognise(doc)
        if kind is not None:
            found.append(ResultFile(kind, path, doc))
        elif why := _incomplete(doc):
            broken.append(DaqnetError(f"{path}: {why}"))
    if broken and not found:
        raise broken[0]
    for problem in broken:  # beside a readable result: say so, and go on
        print(f"daqnet: warning: skipped {problem}", file=sys.stderr)
    if not found:
        raise DaqnetError(
            f"{directory}: no daqnet result in this directory (expected the result.json, "
            "scan.json, study.json, repair.json or emulate.json that daqnet conflicts, simulate, "
            "bench, scan, study, repair or emulate write with --out)"
        )
    return found


def read_results(paths: Iterable[str | Path]) -> list[ResultFile]:
    """The results in each directory (or result file) given, in the order given; each file
    once. DaqnetError naming the path for a missing path, a directory without a result, a
    result file that is not valid JSON or not a daqnet result."""
    out: list[ResultFile] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            results = _from_dir(path)
        elif path.is_file():
            doc = _load(path)
            kind = recognise(doc)
            if kind is None:
                raise DaqnetError(
                    f"{path}: "
                    + (
                        _incomplete(doc)
                        or "not a daqnet result (no document of daqnet conflicts, simulate, "
                        "bench, scan, study, repair or emulate)"
                    )
                )
            results = [ResultFile(kind, path, doc)]
        elif path.exists():
            raise DaqnetError(f"{path}: neither a directory nor a file")
        else:
            raise DaqnetError(f"{path}: no such file or directory")
        for r in results:
            key = r.path.resolve()
            if key not in seen:
                seen.add(key)
                out.append(r)
    return out


def check_not_another(out: str | Path | None, command: str, option: str = "--out") -> None:
    """DaqnetError when `out` holds another command's result.json: writing there would
    replace it and leave its other files beside the new ones (a simulation over a
    benchmark's directory kept its memory.csv and rank files, silently)."""
    if out is None:
        return
    path = Path(out) / "result.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # nothing there, or nothing daqnet wrote: the writer says what it must
    kind = recognise(doc)
    if kind is not None and kind.split("-")[0] != command:
        raise DaqnetError(
            f"{option} {out} holds a {KINDS[kind]} result (result.json), which daqnet "
            f"{command} would replace, leaving its other files beside the new ones: give "
            "another directory"
        )
