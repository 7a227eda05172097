"""Static analysis of a workload on a fabric: link loads and conflicts per step."""

from __future__ import annotations

from .conflicts import ConflictReport, conflicts

__all__ = ["ConflictReport", "conflicts"]
