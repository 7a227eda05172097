"""A scenario derived from another (``daqnet opensm``, ``daqnet repair``): the same values with
some sections changed, written somewhere else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .scenario import Scenario
from .schema import SCHEMA

__all__ = ["derived"]


def derived(scenario: Scenario, name: str, changes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The scenario's values as a TOML document (None left out: TOML has no null; files as
    absolute paths, since the new scenario lives elsewhere) with the sections in `changes`
    replaced whole; their paths stay as given (relative to the new file)."""
    doc: dict[str, Any] = {"name": name}
    for section, keys in scenario.values.items():
        if isinstance(keys, dict):
            doc[section] = {
                k: str(Path(v).absolute()) if SCHEMA[section][k].kind == "path" else v
                for k, v in keys.items()
                if v is not None
            }
    doc.update(changes)
    return doc
