"""Job mappings: which node runs which MPI task, when every node runs several tasks.

Tasks are numbered row-major over the workload's task grid (workload.task_grid). A mapping
deals them to the fabric's hosts (nodes), ``tasks_per_node`` each, hosts taken in cabling
order (PERCS: supernode, drawer, node). The blocked mappings give every node — or drawer,
or supernode — a compact block of the grid, so that stencil neighbours stay together; the
random ones shuffle whole nodes or whole drawers of the default mapping. Drawers and
supernodes are the fabric's host units (Fabric.units): on a dragonfly, routers and groups.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import product

import numpy as np

from . import _core
from .errors import DaqnetError
from .fabric import Fabric

__all__ = ["MAPPINGS", "block_shape", "blocked_order", "map_tasks"]

MAPPINGS: dict[str, str] = {
    "default": "tasks in rank order: node i runs tasks i·T .. i·T+T-1",
    "blocked-node": "every node runs a compact block of T tasks of the task grid",
    "blocked-drawer": "every drawer (router) runs a compact block of the grid, split into "
    "compact blocks per node",
    "blocked-supernode": "every supernode (group) runs a compact block of the grid, split "
    "into blocks per drawer and per node",
    "random-node": "the default mapping with whole nodes shuffled (seeded)",
    "random-drawer": "the default mapping with whole drawers (routers) shuffled (seeded)",
}


def block_shape(region: Sequence[int], size: int) -> tuple[int, ...] | None:
    """The block of `size` tasks that tiles `region` with the least surface (Σ size/b_i,
    what a stencil sends out of it), the most nearly cubic on ties; None if none tiles it."""
    divisors = [[d for d in range(1, r + 1) if r % d == 0] for r in region]
    best: tuple[float, float, tuple[int, ...]] | None = None
    for b in product(*divisors):
        if math.prod(b) != size:
            continue
        key = (sum(size / x for x in b), max(b) / min(b), tuple(-x for x in b))
        if best is None or key < (best[0], best[1], tuple(-x for x in best[2])):
            best = (key[0], key[1], b)
    return None if best is None else best[2]


def blocked_order(dims: Sequence[int], sizes: Sequence[int], what: str) -> np.ndarray:
    """Tasks in slot order: slot s runs on node s // sizes[0]. `sizes` are tasks per unit,
    smallest first (node, drawer, supernode); each unit gets a compact block of the grid,
    cut into compact blocks of the next smaller unit."""
    grid = np.arange(math.prod(dims), dtype=np.int64).reshape(tuple(dims))
    parts: list[np.ndarray] = []

    def cut(region: np.ndarray, levels: list[int]) -> None:
        if not levels:
            parts.append(region.ravel())
            return
        b = block_shape(region.shape, levels[0])
        if b is None:
            shape = " × ".join(map(str, region.shape))
            raise DaqnetError(
                f"placement.order = {what!r}: a {shape} block of the task grid does not split "
                f"into blocks of {levels[0]} tasks; choose task and node counts that tile it"
            )
        counts = [r // x for r, x in zip(region.shape, b, strict=True)]
        for idx in np.ndindex(*counts):
            cut(
                region[tuple(slice(i * x, (i + 1) * x) for i, x in zip(idx, b, strict=True))],
                levels[1:],
            )

    cut(grid, sorted(sizes, reverse=True))
    return np.concatenate(parts)


def _unit(fabric: Fabric, which: int, order: str) -> int:
    units = sorted(fabric.units.values())
    if len(units) <= which:
        raise DaqnetError(
            f"placement.order = {order!r} needs a fabric with drawers and supernodes "
            "(fabric.kind = percs, or dragonfly: routers and groups)"
        )
    return units[which]


def map_tasks(
    fabric: Fabric, order: str, tasks_per_node: int, dims: Sequence[int], seed: int = 0
) -> np.ndarray:
    """Host of every task (task id = row-major index over `dims`), over every host."""
    nodes = fabric.num_hosts
    tasks = nodes * tasks_per_node
    if math.prod(dims) != tasks:
        raise DaqnetError(f"a task grid of {math.prod(dims)} tasks for {tasks} tasks")
    t = tasks_per_node
    if order == "default":
        return np.repeat(np.arange(nodes, dtype=np.int32), t)
    if order == "random-node":
        perm = _core.workload.random_permutation(nodes, seed)
        return np.repeat(perm.astype(np.int32), t)
    if order == "random-drawer":
        drawer = _unit(fabric, 0, order)
        perm = _core.workload.random_permutation(nodes // drawer, seed).astype(np.int64)
        node = np.arange(nodes)
        moved = perm[node // drawer] * drawer + node % drawer
        return np.repeat(moved.astype(np.int32), t)
    levels = {"blocked-node": 0, "blocked-drawer": 1, "blocked-supernode": 2}
    if order not in levels:
        raise DaqnetError(f"placement.order = {order!r}: expected one of {', '.join(MAPPINGS)}")
    sizes = [t] + [t * _unit(fabric, i, order) for i in range(levels[order])]
    slots = blocked_order(dims, sizes, order)
    host = np.empty(tasks, dtype=np.int32)
    host[slots] = np.arange(tasks, dtype=np.int64) // t
    return host
