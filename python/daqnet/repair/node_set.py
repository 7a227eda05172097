"""Node-set repair: which N hosts of a pool to run on so that leaves are full and the
schedule is conflict-free, or the nearest N' ≥ N for which that holds.

Partially filled leaves break the symmetry that makes a barrel shift conflict-free (a leaf
with 10 of 18 hosts sends to destinations its up-ports do not spread evenly), so the pool's
leaves are taken whole, fullest first and pod by pod; each candidate set is ordered by
:func:`.rank_order.repair_rank_order` and judged by the analysis.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DaqnetError
from ..routing import Routing
from ..workload import Workload
from .objective import Judge
from .rank_order import OrderFound, repair_rank_order
from .tree_view import leaf_blocks

__all__ = ["NodeSetFound", "given_set", "repair_node_set"]


@dataclass
class NodeSetFound:
    chosen: OrderFound  #: N hosts in rank order, whole leaves
    nearest: tuple[int, OrderFound] | None  #: (N', order) with no conflicts, N' ≥ N
    tried: list[dict[str, Any]]
    given: np.ndarray  #: the set the user would run on (see given_set), the "before"
    workload: Workload  #: the workload of `ranks` ranks both were judged on (Judge caches by it)
    #: Why the given set stays (whole leaves are slower), or None when `chosen` is the answer.
    keep_given: str | None = None

    @property
    def hosts(self) -> np.ndarray:
        """The answer: the given set when it stays, else the chosen whole leaves."""
        return self.given if self.keep_given else self.chosen.hosts


def given_set(order: np.ndarray, pool: np.ndarray, ranks: int) -> np.ndarray:
    """The set a user would run on: the first `ranks` hosts of the placement's `order` that
    lie in the pool, then the pool's others in its own order. (Not the placement's first N:
    under hostname order those lay mostly outside a pool of node[001-300], and the repair
    read x0.968 against them.)"""
    inside = order[np.isin(order, pool)][:ranks]
    rest = pool[~np.isin(pool, inside)]
    return np.concatenate([inside, rest[: ranks - len(inside)]]).astype(order.dtype)


def _take(blocks: list[np.ndarray], n: int) -> np.ndarray:
    """The first n hosts of the blocks, whole blocks first."""
    return np.concatenate(blocks)[:n]


def repair_node_set(
    routing: Routing,
    pool: np.ndarray,
    ranks: int,
    workload_of: Callable[[int], Workload],
    judge: Judge,
    moves: int = 50_000,
    seed: int = 0,
    progress: Any = None,
    order: np.ndarray | None = None,
) -> NodeSetFound:
    """N = `ranks` hosts from `pool`, ordered, and the nearest conflict-free N' ≥ N (whole
    leaves added one at a time) when N itself cannot be made conflict-free. Never slower
    than the given set (the placement's `order` within the pool, default the pool's): it
    stays when whole leaves, the best found, are slower."""
    if ranks < 2:
        raise DaqnetError(f"node set: --ranks {ranks}: at least 2 ranks (one pair) to place")
    if ranks > len(pool):
        raise DaqnetError(
            f"node set: {ranks} ranks but the pool (--pool, default every host) has "
            f"{len(pool)} hosts; --ranks sets how many to choose"
        )
    blocks = leaf_blocks(routing, pool)
    sizes = np.cumsum([len(b) for b in blocks])
    # One workload object throughout: the judge's timings are cached by it (a new one per
    # timing simulated the same sets again, two full step simulations more).
    workload = workload_of(ranks)
    chosen = repair_rank_order(
        routing,
        _take(blocks, ranks),
        workload,
        judge,
        moves,
        seed,
        progress,
        "leaf-block",
    )
    tried = [{"ranks": ranks, "conflicts": chosen.conflicts}]
    nearest = (ranks, chosen) if chosen.conflicts == 0 else None
    if nearest is None and not chosen.interrupted:
        for n in (int(s) for s in sizes if s > ranks):
            # Table order only (no search): whole leaves are conflict-free by construction
            # when the tables allow it, and each candidate stays cheap.
            found = repair_rank_order(
                routing,
                _take(blocks, n),
                workload_of(n),
                judge,
                0,
                start_label="leaf-block",
                by_time=False,  # only whether it has no conflicts matters here
            )
            tried.append({"ranks": n, "conflicts": found.conflicts})
            if found.conflicts == 0:
                nearest = (n, found)
                break
    given = given_set(pool if order is None else order, pool, ranks)
    result = NodeSetFound(chosen, nearest, tried, given, workload)
    if not chosen.interrupted:
        leaves, before = judge.seconds(chosen.hosts, workload), judge.seconds(given, workload)
        if leaves > before * (1 + 1e-9):
            result.keep_given = (
                f"the given set (the first {ranks:,} of the placement within the pool): "
                f"whole leaves, the best found, took {leaves * 1e3:.3f} ms, slower"
            )
    return result
