"""A scenario derived from another (``daqnet opensm``, ``daqnet repair``): the same values with
some sections changed, written somewhere else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .scenario import Scenario
from .schema import SCHEMA

__all__ = ["derived", "given_keys"]


def given_keys(scenario: Scenario, section: str) -> dict[str, Any]:
    """The keys of `section` the scenario was given (in its file or by --set), files as
    absolute paths (a derived scenario lives elsewhere)."""
    return {
        k: _written(SCHEMA[section][k].kind, SCHEMA[section][k].whole, v)
        for k, v in scenario.values[section].items()
        if v is not None and f"{section}.{k}" in scenario.given
    }


def _written(kind: str, whole: bool, v: Any) -> Any:
    """A value as the new file gives it: paths absolute, byte counts whole (1048576, where
    the float they are kept as would read 1048576.0)."""
    if kind == "path":
        return str(Path(v).absolute())
    if whole and isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def derived(
    scenario: Scenario,
    name: str,
    changes: dict[str, dict[str, Any]],
    keep: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    """The keys the scenario was given as a TOML document, with the sections in `changes`
    replaced: of a replaced section, only the given keys named in `keep` stay (what the
    change leaves meaningful: a schedule's message_bytes, not its shifts), under the
    change's; the change's paths stay as given (relative to the new file). Defaults are left
    to the new scenario: written out, they would be given keys there, some of which clash
    (bench.events = 0 with bench.seconds = 0 is an error when given) and some of which belong
    to other kinds of fabric (PERCS rates under a fat tree)."""
    doc: dict[str, Any] = {"name": name}
    for section, keys in scenario.values.items():
        if isinstance(keys, dict):
            given = given_keys(scenario, section)
            if section in changes:
                kept = (keep or {}).get(section, ())
                given = {k: v for k, v in given.items() if k in kept} | changes[section]
            if given:
                doc[section] = given
    return doc
