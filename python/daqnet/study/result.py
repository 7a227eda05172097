"""The document of ``daqnet study``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..result import Result, optional

__all__ = ["StudyResult"]


@dataclass
class StudyResult(Result):
    study: str  #: mapping or taper
    scenario: str
    name: str
    config: dict[str, Any]
    points_total: int
    points_done: int
    interrupted: bool
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: plain statements read off the rows (best mapping per pattern, slowdown per taper...)
    findings: list[str] = field(default_factory=list)
    #: where the document was made: daqnet version, build commit, machine, date (daqnet.provenance)
    provenance: dict[str, Any] | None = optional()
