"""The document of ``daqnet scan`` (scan.json; docs/scan.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..result import Result, optional

__all__ = ["ScanResult"]


@dataclass
class ScanResult(Result):
    """What was scanned, how, and one row per finished point in point order."""

    scenario: str
    name: str
    #: steps or protocol (every point simulated in that mode), bench (measured with daqnet
    #: bench) or compare (measured, and predicted by the protocol simulation)
    mode: str
    overrides: list[str]  #: the --set items of every point
    config: dict[str, Any]  #: the base scenario's effective keys
    vary: list[dict[str, Any]]  #: key and values of every varied key, outermost first
    metric: str  #: the column the best point is chosen by
    higher_is_better: bool
    status: str  #: running, finished, interrupted or failed
    interrupted: bool
    error: str | None
    points_total: int
    points_done: int
    ranks: int  #: MPI ranks the points were spread over
    jobs: int  #: points at once per rank
    elapsed_seconds: float
    best: dict[str, Any] | None  #: the first row with the best metric
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: measured scans: runs of daqnet bench per point
    repeat: int | None = optional()
    #: measured scans: the columns of runs.csv, and its rows (one per run of a finished point)
    run_columns: list[str] | None = optional()
    runs: list[dict[str, Any]] | None = optional()
    #: where the document was made: daqnet version, build commit, machine, date (daqnet.provenance)
    provenance: dict[str, Any] | None = optional()
