"""Workloads: steps of flows between ranks, generated one step at a time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from . import _core
from .errors import DaqnetError

__all__ = [
    "KINDS",
    "SCHEDULES",
    "Workload",
    "all_to_all",
    "bisection",
    "build",
    "event_building",
    "from_steps",
    "from_steps_file",
    "grid",
    "multicast",
    "shifts",
    "stencil",
]

KINDS: dict[str, str] = {
    "event-building": "every rank sends a fragment to every other rank, in the order of 'schedule'",
    "shift": "one step per entry of 'shifts': rank i sends to rank (i + k) mod N",
    "all-to-all": "every ordered pair of ranks in one step",
    "stencil2d": "one iteration of a periodic 2-D five-point stencil on the task grid",
    "stencil4d": "one iteration of a periodic 4-D nine-point stencil on the task grid",
    "multicast": "every task sends to 'targets' distinct random others (seeded), one step",
    "bisection": "'rounds' random bisections, one per step: pairs exchange both ways",
    "steps": "the steps listed in 'file', one line per step of SRC>DST flows (daqnet repair writes them)",
}

SCHEDULES: dict[str, str] = {
    "barrel": "step s = 1..N-1: rank i sends to rank (i + s) mod N",
    "random": "N-1 seeded random derangements covering every ordered pair once",
    "all-at-once": "every pair in one step",
}


class Workload:
    """A schedule of steps; each step is an (n, 2) array of (source rank, destination rank)."""

    def __init__(self, core: _core.workload.Schedule, kind: str, largest_step_flows: int = 0):
        self._core = core
        self.kind = kind
        #: Flows of the largest step when one step holds every ordered pair (N(N-1), which
        #: no machine holds at tens of thousands of ranks); 0 for steps of about N flows.
        self.largest_step_flows = largest_step_flows

    @property
    def ranks(self) -> int:
        return self._core.ranks

    @property
    def num_steps(self) -> int:
        return self._core.num_steps

    def step(self, step: int) -> np.ndarray:
        """Flows of step `step`, counted from 1 as in reports."""
        if not 1 <= step <= self.num_steps:
            raise DaqnetError(f"step {step} is out of range 1..{self.num_steps}")
        return self._core.step(step - 1)

    def steps(self) -> Iterator[np.ndarray]:
        for s in range(self.num_steps):
            yield self._core.step(s)

    def describe(self) -> str:
        return (
            f"{self._core.describe()}, {self.num_steps:,} step{'s' if self.num_steps != 1 else ''}"
        )

    def __repr__(self) -> str:
        return f"<daqnet.Workload {self.describe()}>"


def event_building(ranks: int, schedule: str = "barrel", seed: int = 0) -> Workload:
    if schedule == "barrel":
        core = _core.workload.barrel(ranks)
    elif schedule == "random":
        core = _core.workload.random_order(ranks, seed)
    elif schedule == "all-at-once":
        return Workload(_core.workload.all_at_once(ranks), "event-building", ranks * (ranks - 1))
    else:
        raise DaqnetError(
            f"workload.schedule = {schedule!r}: expected one of {', '.join(SCHEDULES)}"
        )
    return Workload(core, "event-building")


def shifts(ranks: int, shift_list: Sequence[int]) -> Workload:
    return Workload(_core.workload.shifts(ranks, [int(k) for k in shift_list]), "shift")


def all_to_all(ranks: int) -> Workload:
    return Workload(_core.workload.all_at_once(ranks), "all-to-all", ranks * (ranks - 1))


#: Dimensions of the task grid of each pattern (ranks are numbered row-major over it).
GRID_DIMS = {"stencil2d": 2, "stencil4d": 4}


def grid(kind: str, tasks: int) -> list[int]:
    """The task grid of a workload kind: as square as `tasks` allows (256 × 256 for 65,536
    tasks in 2-D, 16 × 16 × 16 × 16 in 4-D); one dimension for the other kinds."""
    return list(_core.workload.task_grid(tasks, GRID_DIMS.get(kind, 1)))


def stencil(dims: Sequence[int]) -> Workload:
    """A (2d+1)-point stencil on a periodic grid: every task sends to its 2d neighbours."""
    try:
        core = _core.workload.stencil([int(d) for d in dims])
    except ValueError as err:
        raise DaqnetError(str(err)) from None
    return Workload(core, f"stencil{len(dims)}d")


def multicast(ranks: int, targets: int = 14, seed: int = 0) -> Workload:
    try:
        return Workload(_core.workload.multicast(ranks, targets, seed), "multicast")
    except ValueError as err:
        raise DaqnetError(str(err)) from None


def bisection(ranks: int, rounds: int = 1, seed: int = 0) -> Workload:
    try:
        return Workload(_core.workload.bisection(ranks, rounds, seed), "bisection")
    except ValueError as err:
        raise DaqnetError(str(err)) from None


def from_steps(ranks: int, steps: Sequence[np.ndarray], what: str = "") -> Workload:
    """A workload of explicit steps, each an (n, 2) array of (source rank, destination rank)."""
    arrays = [np.ascontiguousarray(s, dtype=np.int32).reshape(-1, 2) for s in steps]
    flows = sum(len(a) for a in arrays)
    # describe() adds the step count.
    what = what or f"given steps of {flows:,} flows over {ranks:,} ranks"
    try:
        core = _core.workload.explicit_steps(ranks, arrays, what)
    except ValueError as err:
        raise DaqnetError(str(err)) from None
    return Workload(core, "steps")


def from_steps_file(ranks: int, path: str | Path) -> Workload:
    from .io.steps_file import read_steps

    _, steps = read_steps(path, ranks)
    flows = sum(len(s) for s in steps)
    return from_steps(ranks, steps, f"{flows:,} flows from {path}")


def build(
    ranks: int,
    kind: str = "event-building",
    schedule: str = "barrel",
    seed: int = 0,
    shift_list: Sequence[int] = (1,),
    file: str | Path | None = None,
    targets: int = 14,
    rounds: int = 1,
) -> Workload:
    """The workload named in a scenario's [workload] section."""
    if kind in GRID_DIMS:
        return stencil(grid(kind, ranks))
    if kind == "multicast":
        return multicast(ranks, targets, seed)
    if kind == "bisection":
        return bisection(ranks, rounds, seed)
    if kind == "steps":
        if file is None:
            raise DaqnetError("workload.kind = 'steps' needs workload.file (a steps file)")
        return from_steps_file(ranks, file)
    if kind == "event-building":
        return event_building(ranks, schedule, seed)
    if kind == "shift":
        return shifts(ranks, shift_list)
    if kind == "all-to-all":
        return all_to_all(ranks)
    raise DaqnetError(f"workload.kind = {kind!r}: expected one of {', '.join(KINDS)}")
