"""Up-port usage of each leaf's forwarding table: which up-port (spine) carries traffic to
each destination, in rank order.

A barrel step sends a full leaf's hosts to consecutive ranks; the step is free of up-link
conflicts at that leaf only if those ranks leave through distinct up-ports. So the table
of up-ports over destinations in rank order shows irregular tables at a glance: regular
tables repeat one pattern on every leaf, irregular ones do not. Two leaves agree when, on
every rank off both, they use the same spine, or, when they share no spine (leaves of
different pods), the same up-port index; a leaf joins the pattern of the first earlier
leaf that heads one and agrees with it. With two leaves no rank lies off both: nothing to
compare, so no pattern is shared and no verdict given. ``clashes`` counts, in
each barrel step, the leaf's destinations that share an up-port with another: the leaf's
up-link conflicts that step (a tapered leaf has some in every step), as a mean over steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import DaqnetError
from ..placement import Placement
from ..repair.tree_view import host_leaves
from ..result import Result
from ..routing import Routing

__all__ = ["UplinkRow", "UplinkUsage", "uplink_usage"]


@dataclass
class UplinkRow(Result):
    leaf: str
    hosts: int  #: hosts cabled to the leaf
    up_ports: list[int]  #: the leaf's up-ports, in port order
    destinations_per_port: list[int]  #: off-leaf placed destinations routed through each
    clashes_per_step: float  #: up-link conflicts at the leaf, mean over the barrel steps
    #: the first leaf heading a pattern whose table sends every rank off both leaves the
    #: same way (same spine; same up-port index for leaves of different pods)
    same_as: str | None


@dataclass
class UplinkUsage(Result):
    fabric: str
    routing: str
    placement: str
    leaves: list[UplinkRow]
    patterns: int  #: distinct (spine per destination) patterns among the leaves
    #: switch levels of the tree (1 leaves only, 2 leaves and spines, 3 with a core level):
    #: above 2 the spines' up-ports, which this table does not show, route too
    levels: int = 2
    #: per leaf (rows) and rank (columns): index of the up-port used, -1 on the leaf itself
    matrix: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0)))

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.pop("matrix")
        return d


def _clashes_per_step(ports: np.ndarray, senders: np.ndarray) -> float:
    """Mean over the barrel steps of the up-link conflicts at one leaf.

    `ports[r]`: index of the up-port towards rank r (-1 on the leaf itself); `senders`: the
    leaf's ranks. In step s rank i sends to (i + s) mod N; the leaf's destinations sharing
    an up-port with another (entries − distinct ports) are its up-link conflicts that step.
    """
    n = len(ports)
    if n < 2 or len(senders) == 0:
        return 0.0
    u = int(ports.max(initial=-1)) + 1
    if u == 0:  # every destination on the leaf itself
        return 0.0
    # Sender i's destinations over steps 1 .. n-1 are ports[i+1 : i+n] of the ports twice
    # over: rows of a sliding window, no modulo. Per (step, port), the destinations through
    # it; each beyond the first is a conflict. A block of steps at a time: bounded memory.
    twice = np.concatenate([ports, ports]).astype(np.int32)
    total = 0
    block = max(1, 4_000_000 // len(senders))
    for first in range(1, n, block):
        width = min(block, n - first)
        rows = np.lib.stride_tricks.sliding_window_view(twice[first:], width)[senders]
        # Port p of step j counted in cell j * (u + 1) + p + 1; cell 0 of a step takes the
        # destinations on the leaf itself (-1).
        cells = rows + np.arange(1, width * (u + 1), u + 1, dtype=np.int32)
        per = np.bincount(cells.ravel(), minlength=width * (u + 1)).reshape(width, u + 1)[:, 1:]
        total += int(per.sum()) - np.count_nonzero(per)
    return total / (n - 1)


def uplink_usage(routing: Routing, placement: Placement) -> UplinkUsage:
    """The up-port every leaf's table uses towards every placed rank."""
    fabric = routing.fabric
    if fabric.units:  # routers of a direct network have no up and down, nor spines
        raise DaqnetError(
            f"up-ports belong to a tree's leaves; {fabric.describe()} is a direct network: "
            "daqnet conflicts and simulate give its loads per link class (LL, LR, D, local, "
            "global)"
        )
    H = fabric.num_hosts
    lv = fabric.nodes()["level"]
    links = fabric.links()
    names = fabric.node_names
    leaf_of = host_leaves(fabric)
    # Switches with hosts above the leaves (a management node on a spine) have no up-ports
    # to show: their hosts are destinations only.
    leaves = np.array([s for s in np.unique(leaf_of) if lv[s] <= 1], dtype=np.int64)
    dest = placement.hosts
    rows: list[UplinkRow] = []
    matrix = np.full((len(leaves), len(dest)), -1, dtype=np.int64)
    # A host on each leaf to route from (tables are per destination, so any will do).
    first_host = {int(leaf_of[h]): h for h in range(H - 1, -1, -1)}
    # One leaf per pattern: its spine and up-port index per rank, its spines, its name.
    groups: list[tuple[np.ndarray, np.ndarray, set[int], str]] = []
    table = routing.table() if routing.has_tables else None
    for i, leaf in enumerate(leaves):
        out = links["src"] == leaf
        up = out & (lv[links["dst"]] > lv[leaf]) if lv[leaf] >= 0 else out & (links["dst"] >= H)
        up_ports = sorted(int(p) for p in links["src_port"][up])
        peer_of_port = dict(
            zip(links["src_port"][out].tolist(), links["dst"][out].tolist(), strict=True)
        )
        off_leaf = leaf_of[dest] != leaf
        if table is not None:
            ports = table[leaf - H, dest].astype(np.int64)
        else:  # the port of each route's second link, out of the leaf
            src = first_host[int(leaf)]
            ports = np.zeros(len(dest), dtype=np.int64)
            for r in np.flatnonzero(off_leaf):
                path = routing.path(int(src), int(dest[r]))
                ports[r] = int(links["src_port"][path[1]]) if len(path) > 1 else 0
        index_of_port = np.full(int(max(ports.max(initial=0), *up_ports, 0)) + 1, -1)
        index_of_port[up_ports] = np.arange(len(up_ports))
        spine_of_port = np.full(len(index_of_port), -1)
        for p in up_ports:
            spine_of_port[p] = peer_of_port[p]
        matrix[i] = np.where(off_leaf, index_of_port[ports], -1)
        spines = np.where(matrix[i] >= 0, spine_of_port[ports], -1)
        seq = matrix[i][matrix[i] >= 0]
        counts = np.bincount(seq, minlength=len(up_ports))
        mine = {peer_of_port[p] for p in up_ports}
        same = None
        for head_spines, head_index, head_set, head_name in groups:
            both = (spines >= 0) & (head_spines >= 0)  # ranks off both leaves
            if not both.any():
                continue  # nothing to compare (two leaves alone)
            # Leaves of different pods share no spine: their tables can only agree by port.
            mine_by, head_by = (spines, head_spines) if mine & head_set else (matrix[i], head_index)
            if np.array_equal(mine_by[both], head_by[both]):
                same = head_name
                break
        if same is None:
            groups.append((spines, matrix[i], mine, names[leaf]))
        rows.append(
            UplinkRow(
                leaf=names[leaf],
                hosts=int((leaf_of == leaf).sum()),
                up_ports=up_ports,
                destinations_per_port=[int(c) for c in counts],
                clashes_per_step=_clashes_per_step(
                    matrix[i], np.flatnonzero(leaf_of[dest] == leaf)
                ),
                same_as=same,
            )
        )
    return UplinkUsage(
        fabric=fabric.describe(),
        routing=routing.engine,
        placement=placement.describe(),
        leaves=rows,
        patterns=len(groups),
        levels=int(lv[H:].max(initial=1)),
        matrix=matrix,
    )
