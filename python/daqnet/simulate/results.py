"""The documents of ``daqnet simulate``, one dataclass per mode (docs/simulate.md).

Field order is the order of the JSON document; tables (steps, units, time series, links)
are lists of rows, one dict each, as written to CSV.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..result import Result, optional

__all__ = ["ProtocolResult", "SolverStats", "StepsResult"]

Row = dict[str, Any]


@dataclass
class SolverStats(Result):
    """Work of the incremental max-min solver (for benchmarks and tests)."""

    #: max-min solves: rate settlements that had something to do, and in steps mode one
    #: per step whose components the step solver ended (a lone flow needs none)
    solves: int = 0
    widenings: int = 0  #: times a re-solved set of resources had to grow
    flows_solved: int = 0  #: flows in all those problems
    #: flows whose rate a solve changed: each needs its completion time moved, a floor on
    #: the work of an exact re-solve with a completion time per flow (in steps mode, the
    #: flow network's only: the step solver's direct solves are not counted)
    rate_changes: int = 0
    #: steps answered by an identical earlier step, up to relabelled links (steps mode)
    reused_steps: int = 0

    @classmethod
    def of(cls, core: Any, reused_steps: int = 0) -> SolverStats:
        return cls(
            int(core.solves),
            int(core.widenings),
            int(core.flows_solved),
            int(core.rate_changes),
            reused_steps,
        )


@dataclass
class StepsResult(Result):
    """Steps mode: every step's duration with fair sharing, and on a contention-free fabric."""

    scenario: str  #: the scenario file
    name: str
    fabric: str  #: one-line descriptions of the stages
    routing: str
    placement: str
    config: dict[str, Any]  #: the effective scenario (file, --set items, every key's value)
    mode: str  #: "steps"
    workload: str
    ranks: int  #: ranks (tasks)
    hosts: int  #: hosts that run them
    tasks_per_node: int
    message_bytes: float  #: bytes of every flow
    steps_total: int
    steps_done: int
    total_seconds: float  #: all steps done
    ideal_seconds: float | None  #: the same on a contention-free fabric (None: not run)
    slowdown: float | None  #: total_seconds / ideal_seconds
    gbps_per_host: float | None  #: bytes each host sends over the network, in Gb/s
    ideal_gbps_per_host: float | None
    interrupted: bool
    solver: SolverStats
    #: per step (counted from 1): step, seconds, ideal_seconds, slowdown, flows, min_flow_gbps
    steps: list[Row] = field(default_factory=list)
    #: per link class over the steps done: links, used, mean/median/p99/max/total bytes,
    #: max_busy_seconds (analysis.link_loads.class_loads)
    link_loads: list[Row] = field(default_factory=list)
    #: workload kind bisection: the effective bisection bandwidth (None otherwise)
    effective_bisection: dict[str, Any] | None = None
    #: where the document was made: daqnet version, build commit, machine, date (daqnet.provenance)
    provenance: dict[str, Any] | None = optional()


@dataclass
class ProtocolResult(Result):
    """Protocol mode: the event builder over time, with daqnet bench's keys."""

    scenario: str
    name: str
    fabric: str
    routing: str
    placement: str
    config: dict[str, Any]
    mode: str  #: "protocol"
    protocol: str  #: push or pull
    schedule: str  #: gather order
    nodes: int
    credits: int
    in_flight: int
    max_in_flight: int
    fragment_bytes: int
    run_length_from: str  #: "bench" (bench.events / bench.seconds) or "simulate"
    status: str  #: finished or interrupted
    interrupted: bool
    errors: list[str]
    events_built: int  #: in the measurement window
    events_total: int  #: warm-up and window
    partial_fragments: int  #: received for events under way when the window closed
    partial_bytes: float
    # The rates below and warmup_seconds are None (null) when the run was stopped before
    # its window opened: nothing was measured.
    warmup_seconds: float | None  #: simulated time before the window
    window_seconds: float
    measured_seconds: float  #: = window_seconds, as daqnet bench names it
    total_seconds: float
    throughput_gbps: float | None  #: payload delivered to builders over the window, in all
    bytes_per_second: float | None
    window_payload_bytes: float
    gbps_per_host: float | None
    network_gbps_per_host: float | None  #: the part that crossed the fabric
    events_per_second: float | None
    latency_seconds: dict[str, float | None]  #: p50, p99, max of the events built in the window
    halves_difference: float | None  #: relative payload-rate difference of the window's halves
    lost_fragments: int
    duplicate_fragments: int
    corrupt_fragments: int
    limits: dict[str, int]  #: largest busy slots, transfers per gather and per process seen
    flows: dict[str, int]  #: network and local fragment flows, control messages
    solver: SolverStats
    units: list[Row]  #: per RU and BU: counters over the run, rates over the window
    timeseries: list[Row]
    links: list[Row]  #: bytes and mean utilization of every directed link
    warnings: list[str] = field(default_factory=list)  #: why it may not be the steady state
    #: where the document was made: daqnet version, build commit, machine, date (daqnet.provenance)
    provenance: dict[str, Any] | None = optional()
