"""Schedule repair: the same transfers in steps that share no link.

``barrel-rand`` keeps the schedule's steps and moves each step's conflicting transfers into
extra steps; ``random-steps`` builds steps from scratch out of a random order of all pairs.
Both are conflict-free by construction; which is faster is for the simulation to say, as
extra steps cost time too. Conflicts are not always what slows a schedule down: flows that
share a link only because they share a NIC (all at once: every flow of a builder into its
link) lose nothing a conflict-free schedule could win back, and its extra steps are slower.
So the given schedule stays unless a repair is faster by the simulation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _core
from ..errors import DaqnetError
from ..routing import Routing
from ..workload import Workload, from_steps
from .objective import Judge

__all__ = ["METHODS", "ScheduleFound", "repair_schedule"]

METHODS: dict[str, str] = {
    "barrel-rand": "each step's conflicting transfers moved into extra conflict-free steps",
    "random-steps": "steps of random pairs sharing no link, until every pair is covered",
    "best": "both (and the plain barrel shift when it has no conflict here), keeping the one "
    "the simulation finds faster",
}


@dataclass
class ScheduleFound:
    workload: Workload
    steps: list[np.ndarray]
    method: str
    seconds: float
    candidates: list[dict[str, Any]]


def repair_schedule(
    routing: Routing,
    hosts: np.ndarray,
    workload: Workload,
    judge: Judge,
    method: str = "best",
    seed: int = 0,
) -> ScheduleFound:
    if method not in METHODS:
        raise DaqnetError(f"--schedule {method!r}: expected one of {', '.join(METHODS)}")
    hosts = np.ascontiguousarray(hosts, dtype=np.int32)
    made: list[tuple[str, list[np.ndarray]]] = []
    if method in ("barrel-rand", "best"):
        made.append(
            ("barrel-rand", _core.analysis.barrel_rand(routing._core, hosts, workload._core, seed))
        )
    if method in ("random-steps", "best"):
        if workload.kind != "event-building":
            if method == "random-steps":
                raise DaqnetError(
                    "--schedule random-steps covers every ordered pair: it replaces event "
                    f"building only (workload.kind here is {workload.kind!r})"
                )
        else:
            steps, stopped = _core.analysis.conflict_free_random_steps(
                routing._core, hosts, workload.ranks, seed
            )
            if stopped:
                raise KeyboardInterrupt
            made.append(("random-steps", steps))
    if method == "best" and workload.kind == "event-building":
        # The plain barrel shift of the same ranks covers every pair too, and is often
        # conflict-free as it is (all at once over 8 hosts was repaired into 9 steps where
        # the barrel's 7 have no conflict): a candidate when it has none here.
        from ..workload import event_building

        barrel = event_building(workload.ranks)
        if judge.conflicts(hosts, barrel).total_conflicts == 0:
            made.append(("barrel", [np.asarray(s, dtype=np.int32) for s in barrel.steps()]))
    # The given schedule first: a repair must beat it (equal times, rounding apart, do not).
    given_seconds = judge.seconds(hosts, workload)
    candidates: list[dict[str, Any]] = [
        {
            "method": "given",
            "steps": workload.num_steps,
            "conflicts": int(judge.conflicts(hosts, workload).total_conflicts),
            "seconds": given_seconds,
        }
    ]
    best: ScheduleFound | None = None
    for name, steps in made:
        flows = sum(len(s) for s in steps)
        w = from_steps(workload.ranks, steps, f"{name}: {len(steps)} steps of {flows} flows")
        seconds = judge.seconds(hosts, w)
        conflicts = int(judge.conflicts(hosts, w).total_conflicts)
        candidates.append(
            {"method": name, "steps": len(steps), "conflicts": conflicts, "seconds": seconds}
        )
        if best is None or seconds < best.seconds:
            best = ScheduleFound(w, steps, name, seconds, candidates)
    assert best is not None
    if best.seconds < given_seconds * (1 - 1e-9):
        return best
    slower = ", ".join(f"{c['method']} {c['seconds'] * 1e3:.3f} ms" for c in candidates[1:])
    return ScheduleFound(
        workload,
        list(workload.steps()),
        f"the given schedule (the conflict-free ones are not faster: {slower})",
        given_seconds,
        candidates,
    )
