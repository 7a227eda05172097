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

__all__ = ["NodeSetFound", "repair_node_set"]


@dataclass
class NodeSetFound:
    chosen: OrderFound  #: N hosts in rank order
    nearest: tuple[int, OrderFound] | None  #: (N', order) with no conflicts, N' ≥ N
    tried: list[dict[str, Any]]


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
) -> NodeSetFound:
    """N = `ranks` hosts from `pool`, ordered, and the nearest conflict-free N' ≥ N (whole
    leaves added one at a time) when N itself cannot be made conflict-free."""
    if ranks < 2:
        raise DaqnetError(f"node set: --ranks {ranks}: at least 2 ranks (one pair) to place")
    if ranks > len(pool):
        raise DaqnetError(
            f"node set: {ranks} ranks but the pool (--pool, default every host) has "
            f"{len(pool)} hosts; --ranks sets how many to choose"
        )
    blocks = leaf_blocks(routing, pool)
    sizes = np.cumsum([len(b) for b in blocks])
    chosen = repair_rank_order(
        routing,
        _take(blocks, ranks),
        workload_of(ranks),
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
    return NodeSetFound(chosen, nearest, tried)
