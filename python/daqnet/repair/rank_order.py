"""Rank-order repair: the order of the given hosts that the tables serve best.

First the order the tables imply (:func:`.tree_view.table_order`), exactly conflict-free for
a barrel shift when the tables spread each leaf's hosts over distinct up-ports consistently;
then a local search in the core (swaps judged by the change in conflicts) from the better of
that order and the current one. Conflicts can never end above the start, and a lower bound
(:func:`.objective.rank_order_lower_bound`) says how far from the best possible they are.
The orders with fewer conflicts are then simulated: the fastest is the answer, the start
when none is faster (fewer conflicts are not always faster on a tapered tree).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _core
from ..routing import Routing
from ..workload import Workload
from .objective import Judge, rank_order_lower_bound
from .tree_view import leaf_blocks, table_order

__all__ = ["OrderFound", "repair_rank_order"]


@dataclass
class OrderFound:
    hosts: np.ndarray  #: host ids in rank order
    conflicts: int
    method: str
    lower_bound: int | None
    candidates: list[dict[str, Any]]
    search: dict[str, Any] | None
    interrupted: bool


def repair_rank_order(
    routing: Routing,
    hosts: np.ndarray,
    workload: Workload,
    judge: Judge,
    moves: int = 50_000,
    seed: int = 0,
    progress: Any = None,
    start_label: str = "given",
    by_time: bool = True,
) -> OrderFound:
    """The best order of `hosts` found for `workload`; `moves` bounds the local search
    (0: the table order or the start, whichever is better). Ctrl-C stops the search with the
    best order so far. With `by_time`, the orders with fewer conflicts than the start are
    also simulated, and the fastest of them and the start is the answer."""
    fabric = routing.fabric
    start = np.ascontiguousarray(hosts, dtype=np.int32)
    current = judge.conflicts(start, workload)
    bound = rank_order_lower_bound(routing, current, workload)
    candidates = [{"order": start_label, "conflicts": int(current.total_conflicts)}]
    best, best_conflicts, method = start, int(current.total_conflicts), f"{start_label} order"
    # Orders with fewer conflicts than the start: (candidate, hosts, method) to time.
    better: list[tuple[dict[str, Any], np.ndarray, str]] = []
    if fabric.levels >= 2 or routing.has_tables:
        ordered = np.ascontiguousarray(table_order(fabric, routing, start), dtype=np.int32)
        c = int(judge.conflicts(ordered, workload).total_conflicts)
        candidates.append({"order": "tables", "conflicts": c})
        if c < best_conflicts:
            best, best_conflicts, method = ordered, c, "table order (leaf by leaf, by up-port)"
            better.append((candidates[-1], best, method))
    if fabric.levels >= 2:
        # Whole leaves in cabling order, as the node-set repair takes them: on 3 levels
        # OpenSM's ftree rotates each spine's up-ports, the table order's vote per host is
        # then arbitrary, and it scattered the leaves (7,416 conflicts where this has 0).
        blocks = np.ascontiguousarray(np.concatenate(leaf_blocks(routing, start)), dtype=np.int32)
        c = int(judge.conflicts(blocks, workload).total_conflicts)
        candidates.append({"order": "leaf blocks", "conflicts": c})
        if c < best_conflicts:
            best, best_conflicts, method = (
                blocks,
                c,
                "leaf-block order (whole leaves, in cabling order)",
            )
            better.append((candidates[-1], best, method))
    search = None
    interrupted = False
    if _every_pair_each_step(workload):
        # No order changes a step in which every rank sends to every other: the search
        # tried 50,000 swaps, kept them all (each as good as the last) and found nothing.
        method = (
            f"{start_label} order (every step exchanges all pairs of ranks: no order changes it)"
        )
        moves = 0
    if best_conflicts > 0 and best_conflicts != bound and moves > 0:

        def report(done: int, total: int) -> bool:
            if progress is not None:
                progress(done, total)
            return True

        r, stopped = _core.analysis.improve_rank_order(
            routing._core, best, workload._core, seed, moves, report
        )
        interrupted = bool(stopped or r.interrupted)
        search = {
            "moves": int(r.moves),
            "accepted": int(r.accepted),
            "conflicts_start": int(r.conflicts_start),
            "conflicts": int(r.conflicts),
            "interrupted": interrupted,
        }
        if r.conflicts < best_conflicts:
            best, best_conflicts = np.asarray(r.placement, dtype=np.int32), int(r.conflicts)
            method += " + local search"
            candidates.append({"order": "local search", "conflicts": best_conflicts})
            better.append((candidates[-1], best, method))
    if by_time and better:
        # Conflicts stand for time where a step's links may each carry one flow (a full fat
        # tree). On a tapered tree or partly filled leaves the fewest conflicts can crowd
        # more flows onto a step's busiest up-link: a repair came out slower than the order
        # it was given (16 -> 12 conflicts, 0.842 -> 0.926 ms). The simulated time decides,
        # fewer conflicts only between equal times; the start stays unless one is faster.
        slower = method
        best, best_conflicts = start, int(current.total_conflicts)
        try:
            candidates[0]["seconds"] = fastest = judge.seconds(start, workload)
            method = f"{start_label} order (the {slower} has fewer conflicts but is slower)"
            for cand, order, how in better:
                cand["seconds"] = judge.seconds(order, workload)
                same = abs(cand["seconds"] - fastest) <= 1e-9 * fastest  # rounding apart
                if (cand["seconds"] < fastest and not same) or (
                    same and cand["conflicts"] < best_conflicts
                ):
                    fastest, best, best_conflicts, method = (
                        cand["seconds"],
                        order,
                        cand["conflicts"],
                        how,
                    )
        except KeyboardInterrupt:  # stopped as they were timed: none is known to be faster
            best, best_conflicts = start, int(current.total_conflicts)
            method = (
                f"{start_label} order (stopped while the orders with fewer conflicts were timed)"
            )
            interrupted = True
    return OrderFound(best, best_conflicts, method, bound, candidates, search, interrupted)


def _every_pair_each_step(workload: Workload, most_steps: int = 16) -> bool:
    """Whether each step holds every ordered pair of distinct ranks once (all-to-all at
    once), which any rank order maps onto itself. Checked for workloads of few steps only
    (a barrel over 27,648 ranks is 764 million flows, and no such workload)."""
    n = workload.ranks
    if n < 2 or workload.num_steps > most_steps:
        return False
    for flows in workload.steps():
        if len(flows) != n * (n - 1):
            return False
        src, dst = flows[:, 0].astype(np.int64), flows[:, 1].astype(np.int64)
        if np.any(src == dst) or len(np.unique(src * n + dst)) != len(flows):
            return False
    return True
