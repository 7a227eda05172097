"""The document of ``daqnet bench`` and ``daqnet collect`` (docs/bench.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..result import Result, optional

__all__ = ["BenchResult"]

Row = dict[str, Any]


@dataclass
class BenchResult(Result):
    """What a run of daqnet-evb measured, complete or not; field order is the JSON's."""

    status: (
        str  #: finished, degraded (recovered from failures, bench.recover), interrupted or failed
    )
    interrupted: bool
    errors: list[str]  #: one line per problem, naming the rank
    ranks: int
    transport: str | None
    mpi_library: str | None
    #: libfabric transport: the provider, fabric and domain it chose ("tcp, 127.0.0.1/32, lo")
    fabric_endpoint: str | None = optional()
    # What was run, from run.cfg (absent when run.cfg lacks the key)
    mode: str | None = optional()
    protocol: str | None = optional()
    schedule: str | None = optional()
    credits: int | None = optional()
    in_flight: int | None = optional()
    fragment_bytes: int | None = optional()
    meta_bytes: int | None = optional()
    run_config: dict[str, Any] = field(default_factory=dict)  #: all of run.cfg
    # The measurement window of the event manager (most keys absent without its snapshot)
    throughput_gbps: float | None = None  #: built-event payload over the window, all builders
    bytes_per_second: float | None = optional()
    events_built: int = 0
    events_per_second: float | None = optional()
    measured_seconds: float | None = optional()
    warmup_seconds: float | None = optional()
    latency_seconds: dict[str, float | None] = field(
        default_factory=lambda: {"p50": None, "p99": None, "max": None}
    )
    events_assigned: int | None = optional()
    lost_fragments: int = 0
    in_flight_fragments: int = 0  #: of events under way when the run stopped early
    duplicate_fragments: int = 0
    corrupt_fragments: int = 0
    #: bench.recover: ranks that died {rank, role, detected_at_seconds, silent_seconds,
    #: recovery_seconds} (docs/bench.md, Failure recovery)
    failures: list[Row] = field(default_factory=list)
    abandoned_events: int = 0  #: assigned to a builder that died before building them
    incomplete_events: int = 0  #: built without a readout unit that died
    builder_latency_seconds: dict[str, float | None] = field(default_factory=dict)
    #: why the figures may mislead (a short or unsteady window, a rate not sustained), as printed
    warnings: list[str] = field(default_factory=list)
    baseline: dict[str, Any] | None = optional()  #: name, throughput_gbps, ratio, ...
    units: list[Row] = field(default_factory=list)
    timeseries: list[Row] = field(default_factory=list)
    #: per process: peak RSS, buffer bytes by role, allocations after warm-up, NUMA nodes
    memory: list[Row] = field(default_factory=list)
    config: dict[str, Any] | None = optional()  #: the effective scenario (daqnet bench only)
    #: daqnet emulate's run: {scale, result}; the rates and times above are the emulated
    #: fabric's (rates ÷ scale), and its result (emulate.json) has them in the fabric's units
    emulated: dict[str, Any] | None = optional()
    out_dir: str | None = optional()
    #: where the document was made: daqnet version, build commit, machine, date (daqnet.provenance)
    provenance: dict[str, Any] | None = optional()
