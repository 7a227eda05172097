"""The document of ``daqnet repair`` (docs/repair.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..result import Result, optional

__all__ = ["RepairResult"]


@dataclass
class RepairResult(Result):
    """A repair and its predicted gain: conflicts (static analysis) and seconds (max-min step
    simulation) before and after, with the repaired item (hosts in rank order, or steps)."""

    what: str  #: rank-order | node-set | schedule
    scenario: str
    name: str
    fabric: str
    routing: str
    workload: str  #: the schedule judged (before the repair)
    ranks: int
    message_bytes: float  #: bytes of every flow in the simulation
    conflicts_before: int
    conflicts_after: int
    seconds_before: float
    seconds_after: float
    speedup: float  #: seconds_before / seconds_after
    method: str  #: how the repaired item was found
    lower_bound: int | None = optional()  #: conflicts no rank order of these hosts can beat
    steps_before: int | None = optional()
    steps_after: int | None = optional()
    search: dict[str, Any] | None = optional()  #: local search: moves, accepted, interrupted
    candidates: list[dict[str, Any]] | None = optional()  #: what else was weighed
    nearest: dict[str, Any] | None = optional()  #: node-set: smallest conflict-free N' ≥ N
    no_nearest: str | None = optional()  #: node-set: why there is none (conflicts left)
    launch: dict[str, str] | None = optional()  #: command lines that apply the repair
    files: dict[str, str] | None = optional()  #: what --out wrote
    interrupted: bool = False
    hosts: list[str] | None = optional()  #: the hosts in rank order
    steps: list[list[list[int]]] | None = optional()  #: per step, [source, destination] ranks
    config: dict[str, Any] = field(default_factory=dict)
    #: where the document was made: daqnet version, build commit, machine, date (daqnet.provenance)
    provenance: dict[str, Any] | None = optional()
