"""Steps mode: every step of ``[workload]`` with max-min fair sharing, and on a contention-free
fabric (docs/simulate.md)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _core
from ..analysis.link_loads import class_loads, link_bytes
from ..errors import DaqnetError
from ..memory_budget import (
    SIMULATION_BYTES_PER_FLOW,
    SIMULATION_BYTES_PER_FLOW_NO_IDEAL,
    check_step_memory,
)
from ..placement import Placement
from ..scenario import Scenario
from ..threads import resolve_threads
from ..workload import Workload
from .model import Progress, Stages, context, network_model, report
from .results import SolverStats, StepsResult

__all__ = ["simulate_steps"]

#: Bisections whose rates are averaged after a stopped run: a user who stopped it does not
#: wait for a second pass as long as the first (one round costs about one simulated step).
EBB_AFTER_STOP = 1000


def simulate_steps(
    scenario: Scenario,
    progress: Progress = None,
    stages: Stages | None = None,
    threads: int | None = None,
    reuse: bool = True,
) -> StepsResult:
    """Every step of ``[workload]``: its duration with fair sharing and on an ideal fabric,
    steps shared out over `threads` threads (None or 0: every core; same result). `reuse`
    answers a step identical to an earlier one up to relabelled links with that step's
    figures (bit for bit what simulating it gives); False simulates every step."""
    fabric, routing, placement, workload = stages or scenario.build()
    with_ideal = scenario["simulate"]["ideal"]
    per_flow = SIMULATION_BYTES_PER_FLOW if with_ideal else SIMULATION_BYTES_PER_FLOW_NO_IDEAL
    check_step_memory(workload, per_flow, "the step simulation")
    model = network_model(scenario, routing)
    message = scenario.message_bytes()
    try:
        r = _core.simulate.simulate_steps(
            model,
            placement.hosts,
            workload._core,
            message,
            with_ideal,
            report(progress),
            threads=resolve_threads(threads),
            reuse=reuse,
        )
    except ValueError as err:
        raise DaqnetError(f"{scenario.source}: {err}") from None
    total, ideal = r.total_seconds, r.ideal_total_seconds
    ranks = workload.ranks
    hosts = int(np.count_nonzero(np.bincount(placement.hosts[:ranks])))  # cheaper than np.unique
    per_host = r.bytes / hosts if hosts else 0.0
    done = len(r.step)
    # The simulation counted the messages over each link, on every thread; a routing that
    # splits flows leaves that to a pass over the steps done.
    uses = np.asarray(r.link_uses)
    per_link = (
        uses * message if uses.size else link_bytes(routing, placement, workload, message, done)
    )
    loads = class_loads(fabric, per_link)
    ebb = (
        effective_bisection(
            model, placement, workload, min(done, EBB_AFTER_STOP) if r.interrupted else done
        )
        if workload.kind == "bisection" and done
        else None
    )

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
        hosts=hosts,
        tasks_per_node=placement.tasks_per_node,
        message_bytes=message,
        steps_total=int(r.steps_total),
        steps_done=len(steps),
        total_seconds=total,
        ideal_seconds=ideal if with_ideal else None,
        # Stopped inside the first step: no time was measured, and 0 Gb/s or a slowdown of 1 would read
        # as one (the sums over no step stay 0).
        slowdown=ratio(total, ideal) if done else None,
        gbps_per_host=rate(total) if done else None,
        ideal_gbps_per_host=rate(ideal) if with_ideal and done else None,
        # A Ctrl-C in the bisections' rates, after every step, stops the run too.
        interrupted=bool(r.interrupted) or bool(ebb and ebb["interrupted"]),
        solver=SolverStats.of(r.solver, int(r.reused_steps)),
        steps=steps,
        link_loads=loads,
        effective_bisection=ebb,
    )


def effective_bisection(
    model: _core.simulate.NetworkModel, placement: Placement, workload: Workload, rounds: int
) -> dict[str, Any]:
    """Effective bisection bandwidth (Hoefler et al. 2008; ORCS, Netgauge ebb): over random
    bisections (the workload's steps), every pair exchanging at once, the mean of each
    network flow's max-min rate. Also as a share of the same flows' rates on a contention-
    free fabric (Σ over Σ per round): with one task per node, a flow's rate alone; with
    several, the tasks of a node share its own link in any fabric, which is not the
    fabric's doing (one flow may then get more than there, from a slowed node-mate)."""
    means, shares, lowest, local = [], [], math.inf, 0
    done, stopped = 0, False
    try:
        for s in range(rounds):
            rates, free, n_local = _core.simulate.step_flow_rates(
                model, placement.hosts, workload._core, s
            )
            # Figures of the round first, kept together: a Ctrl-C between two appends left
            # the lists over different rounds.
            row = (
                (float(rates.mean()), float(rates.sum() / free.sum()), float(rates.min()))
                if len(rates)
                else None
            )
            local += int(n_local)
            if row:
                means.append(row[0])
                shares.append(row[1])
                lowest = min(lowest, row[2])
            done = s + 1
    except KeyboardInterrupt:  # Ctrl-C in this pass: the mean of the rounds done
        stopped = True
    return {
        "rounds": done,
        "interrupted": stopped,
        "gbps": float(np.mean(means)) if means else None,
        "fraction": float(np.mean(shares)) if shares else None,
        "min_flow_gbps": lowest if means else None,
        "local_flows": local,
    }
