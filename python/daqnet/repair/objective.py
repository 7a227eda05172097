"""How a repair is judged: the static analysis (conflicts) and the max-min step simulation
(seconds) of the same routing, hosts and schedule, and a lower bound on conflicts that no
rank order can beat."""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from .. import _core
from ..errors import DaqnetError
from ..memory_budget import (
    ANALYSIS_BYTES_PER_FLOW,
    SIMULATION_BYTES_PER_FLOW_NO_IDEAL,
    check_step_memory,
)
from ..routing import Routing
from ..stops import noted
from ..workload import Workload

__all__ = ["Judge", "rank_order_lower_bound"]


class Judge:
    """Conflicts and simulated seconds of (hosts in rank order, schedule) on one routing."""

    def __init__(
        self,
        routing: Routing,
        model: _core.simulate.NetworkModel,
        message_bytes: float,
        progress: Callable[[int, int], object] | None = None,
    ):
        self.routing, self.model, self.message_bytes = routing, model, message_bytes
        self.progress = progress
        # (workload, hosts, seconds) simulated already: a rank-order repair times its
        # candidates, and the command the start and the answer again. Weak references: a
        # schedule repair's losing workloads are freed, and a dead one matches nothing.
        self._timed: list[tuple[weakref.ref[Workload], bytes, float]] = []

    def conflicts(self, hosts: np.ndarray, workload: Workload) -> _core.analysis.ConflictResult:
        check_step_memory(workload, ANALYSIS_BYTES_PER_FLOW, "the repair's conflict analysis")
        result, stopped = _core.analysis.analyze_conflicts(
            self.routing._core, np.ascontiguousarray(hosts, dtype=np.int32), workload._core
        )
        if stopped or result.interrupted:
            raise KeyboardInterrupt
        out: _core.analysis.ConflictResult = result
        return out

    def seconds(self, hosts: np.ndarray, workload: Workload) -> float:
        """The schedule's time with max-min fair sharing (docs/simulate.md, steps mode)."""
        key = np.ascontiguousarray(hosts, dtype=np.int32).tobytes()
        for w, h, s in self._timed:
            if w() is workload and h == key:
                return s

        waited = noted()

        def report(done: int, total: int) -> bool:
            if self.progress is not None:
                self.progress(done, total)
            return noted() == waited  # a signal noted meanwhile (a run stopped already) stops it

        check_step_memory(
            workload, SIMULATION_BYTES_PER_FLOW_NO_IDEAL, "the repair's step simulation"
        )
        try:
            r = _core.simulate.simulate_steps(
                self.model,
                np.ascontiguousarray(hosts, dtype=np.int32),
                workload._core,
                self.message_bytes,
                False,
                report,
            )
        except ValueError as err:
            raise DaqnetError(str(err)) from None
        if r.interrupted:
            raise KeyboardInterrupt
        self._timed = [t for t in self._timed if t[0]() is not None]
        self._timed.append((weakref.ref(workload), key, float(r.total_seconds)))
        return float(r.total_seconds)


def rank_order_lower_bound(
    routing: Routing, result: _core.analysis.ConflictResult, workload: Workload
) -> int | None:
    """Conflicts that every rank order of the same hosts must have, or None where no cheap
    bound holds.

    When the schedule sends every ordered pair of ranks once (event building) over
    single-path routes, the flows a link carries over the whole run, F, do not depend on the
    rank order; a link used in at most S steps then has at least F − S conflicts, since a
    step's conflicts on it are load − 1 ≥ 0. So Σ_links max(0, F − S) bounds every order.
    """
    if workload.kind != "event-building" or not routing.single_path:
        return None
    flows = np.asarray(result.link_table()["flows"])
    return int(np.maximum(flows - workload.num_steps, 0).sum())
