"""Repairs with their predicted gain: a rank order, a node set or a schedule that the given
forwarding tables serve without conflicts (docs/repair.md)."""

from .node_set import NodeSetFound, repair_node_set
from .objective import Judge, rank_order_lower_bound
from .rank_order import OrderFound, repair_rank_order
from .result import RepairResult
from .schedule import METHODS, ScheduleFound, repair_schedule
from .tree_view import host_leaves, leaf_blocks, table_order, up_port_colours

REPAIRS: dict[str, str] = {
    "rank-order": "an order of the placed hosts with the fewest conflicts",
    "node-set": "N hosts of a pool that fill leaves, or the nearest conflict-free N' >= N",
    "schedule": "the same transfers in conflict-free steps",
}

__all__ = [
    "METHODS",
    "REPAIRS",
    "Judge",
    "NodeSetFound",
    "OrderFound",
    "RepairResult",
    "ScheduleFound",
    "host_leaves",
    "leaf_blocks",
    "rank_order_lower_bound",
    "repair_node_set",
    "repair_rank_order",
    "repair_schedule",
    "table_order",
    "up_port_colours",
]
