"""A scenario derived from another (``daqnet opensm``, ``daqnet repair``): the same values with
some sections changed, written somewhere else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .scenario import Scenario
from .schema import SCHEMA

__all__ = ["derived"]


def derived(scenario: Scenario, name: str, changes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The keys the scenario was given (in its file or by --set) as a TOML document, files as
    absolute paths since the new scenario lives elsewhere, with the sections in `changes`
    replaced whole; their paths stay as given (relative to the new file). Defaults are left
    to the new scenario: written out, they would be given keys there, some of which clash
    (bench.events = 0 with bench.seconds = 0 is an error when given) and some of which belong
    to other kinds of fabric (PERCS rates under a fat tree)."""
    doc: dict[str, Any] = {"name": name}
    for section, keys in scenario.values.items():
        if isinstance(keys, dict):
            given = {
                k: str(Path(v).absolute()) if SCHEMA[section][k].kind == "path" else v
                for k, v in keys.items()
                if v is not None and f"{section}.{k}" in scenario.given
            }
            if given:
                doc[section] = given
    doc.update(changes)
    return doc
