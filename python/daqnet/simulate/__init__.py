"""Flow-level simulation of a scenario: step by step, or the event builder's protocol over time.

Both modes share the fabric, routing and placement of ``daqnet conflicts`` and the max-min
fair sharing of :mod:`daqnet.simulate.fair_share`. The protocol mode reads the ``[bench]``
section through the same checks and run description as ``daqnet bench`` and returns a
document with the benchmark's keys, so that prediction and measurement compare key by key.
"""

from __future__ import annotations

from ..scenario import Scenario
from .model import Progress, Stages
from .protocol import check_protocol, protocol_run_length, simulate_protocol
from .results import ProtocolResult, SolverStats, StepsResult
from .steps import simulate_steps

__all__ = [
    "ProtocolResult",
    "SolverStats",
    "StepsResult",
    "check_protocol",
    "protocol_run_length",
    "simulate",
    "simulate_protocol",
    "simulate_steps",
]


def simulate(
    scenario: Scenario,
    progress: Progress = None,
    stages: Stages | None = None,
    threads: int | None = None,
) -> StepsResult | ProtocolResult:
    """Run the scenario's ``[simulate] mode``; the result document (see docs/simulate.md).

    `stages` replaces the scenario's fabric, routing, placement and workload by ones built
    from Python (any fabric, any routing); the scenario then gives the other keys. Steps
    mode shares steps out over `threads` threads (None or 0: every core); the protocol
    mode is one event-driven run on one core.
    """
    if scenario["simulate"]["mode"] == "protocol":
        return simulate_protocol(scenario, progress, stages=stages)
    return simulate_steps(scenario, progress, stages=stages, threads=threads)
