"""Scenarios: the schema, overrides and the Scenario class (docs/scenario.md)."""

from __future__ import annotations

from .key_use import read_with, run_length_from_bench, unused
from .overrides import Axis, parse_set, parse_vary
from .scenario import Scenario
from .schema import SCHEMA, Key

__all__ = [
    "SCHEMA",
    "Axis",
    "Key",
    "Scenario",
    "parse_set",
    "parse_vary",
    "read_with",
    "run_length_from_bench",
    "unused",
]
