"""Steps mode: every step of ``[workload]`` with max-min fair sharing, and on a contention-free
fabric (docs/simulate.md)."""

from __future__ import annotations

import math

from .. import _core
from ..errors import DaqnetError
from ..scenario import Scenario
from .model import Progress, Stages, context, network_model, report
from .results import SolverStats, StepsResult

__all__ = ["simulate_steps"]


def simulate_steps(
    scenario: Scenario, progress: Progress = None, stages: Stages | None = None
) -> StepsResult:
    """Every step of ``[workload]``: its duration with fair sharing and on an ideal fabric."""
    fabric, routing, placement, workload = stages or scenario.build()
    model = network_model(scenario, routing)
    message = scenario["simulate"]["message_bytes"]
    with_ideal = scenario["simulate"]["ideal"]
    try:
        r = _core.simulate.simulate_steps(
            model, placement.hosts, workload._core, message, with_ideal, report(progress)
        )
    except ValueError as err:
        raise DaqnetError(f"{scenario.source}: {err}") from None
    total, ideal = r.total_seconds, r.ideal_total_seconds
    ranks = workload.ranks
    per_host = r.bytes / ranks if ranks else 0.0

    def ratio(a: float, b: float) -> float | None:
        return None if not with_ideal else (a / b if b > 0 else 1.0)

    def rate(seconds: float) -> float | None:
        if seconds is None or math.isnan(seconds):
            return None
        return per_host * 8 / seconds / 1e9 if seconds > 0 else 0.0

    steps = [
        {
            "step": int(s) + 1,  # counted from 1, as in every report
            "seconds": float(t),
            "ideal_seconds": float(i) if with_ideal else None,
            "slowdown": ratio(t, i),
            "flows": int(n),
            "min_flow_gbps": float(g),
        }
        for s, t, i, n, g in zip(
            r.step, r.seconds, r.ideal_seconds, r.flows, r.min_gbps, strict=True
        )
    ]
    return StepsResult(
        **context(scenario, fabric, routing, placement),
        mode="steps",
        workload=workload.describe(),
        ranks=ranks,
        message_bytes=message,
        steps_total=int(r.steps_total),
        steps_done=len(steps),
        total_seconds=total,
        ideal_seconds=ideal if with_ideal else None,
        slowdown=ratio(total, ideal),
        gbps_per_host=rate(total),
        ideal_gbps_per_host=rate(ideal) if with_ideal else None,
        interrupted=bool(r.interrupted),
        solver=SolverStats.of(r.solver),
        steps=steps,
    )
