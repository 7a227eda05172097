"""What the forwarding tables say about a tree: each host's leaf, the subtrees (leaf, pod...)
and, per destination, the up-port the switches of each level use to reach it.

A barrel shift is conflict-free under D-mod-K when ranks follow the hosts in the order the
tables spread them over up-ports: leaf by leaf, and within a leaf in the order of the
up-port (spine) that carries traffic towards each host. :func:`table_order` derives that
order from any tables, so a rank order can be repaired on an imported fabric whose hostnames
do not follow the cabling and whose tables do not follow a formula.
"""

from __future__ import annotations

import numpy as np

from ..fabric import Fabric
from ..routing import Routing

__all__ = ["host_leaves", "leaf_blocks", "table_order", "up_port_colours"]


def host_leaves(fabric: Fabric) -> np.ndarray:
    """The switch each host is cabled to (its leaf), indexed by host id."""
    links = fabric.links()
    from_host = links["src"] < fabric.num_hosts
    leaf = np.full(fabric.num_hosts, -1, dtype=np.int64)
    leaf[links["src"][from_host]] = links["dst"][from_host]
    return leaf


def _groups(fabric: Fabric, level: int) -> np.ndarray:
    """Per node, the smallest node id of its component among switches of level 1..`level`
    (the leaf itself at level 1, its pod at level 2 of a 3-level tree); -1 elsewhere."""
    lv = fabric.nodes()["level"]
    parent = np.arange(len(lv))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = int(parent[x])
        return x

    links = fabric.links()
    inside = (lv >= 1) & (lv <= level)
    for a, b in zip(links["src"], links["dst"], strict=True):
        if inside[a] and inside[b]:
            ra, rb = root(int(a)), root(int(b))
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    return np.array([root(i) if inside[i] else -1 for i in range(len(lv))], dtype=np.int64)


def up_port_colours(fabric: Fabric, routing: Routing, level: int) -> np.ndarray:
    """Per destination host, the up-port that switches of `level` most often send it to,
    as the rank of the next switch among each switch's up-neighbours (so that switch i of a
    pod's spines is colour i in every pod). -1 where no table sends the host up."""
    H = fabric.num_hosts
    lv = fabric.nodes()["level"]
    switches = np.flatnonzero(lv == level)
    colours = np.full(H, -1, dtype=np.int64)
    if len(switches) == 0 or not routing.has_tables:
        return colours
    table = routing.table()  # (switch - H, host) → port
    links = fabric.links()
    votes = []
    for sw in switches:
        ports = table[sw - H]
        out = links["src"] == sw
        peer = np.full(int(links["src_port"][out].max()) + 1, -1, dtype=np.int64)
        peer[links["src_port"][out]] = links["dst"][out]
        nxt = np.where(ports > 0, peer[np.minimum(ports, len(peer) - 1)], -1)
        ups = np.unique(links["dst"][out][lv[links["dst"][out]] > level])
        rank = np.searchsorted(ups, nxt)
        up = (nxt >= 0) & (lv[np.maximum(nxt, 0)] > level)
        votes.append(np.where(up, rank, -1))
    v = np.array(votes)
    top = int(v.max())
    if top < 0:
        return colours
    counts = np.stack([(v == c).sum(axis=0) for c in range(top + 1)])
    has = counts.sum(axis=0) > 0
    colours[has] = counts.argmax(axis=0)[has]
    return colours


def table_order(fabric: Fabric, routing: Routing, hosts: np.ndarray) -> np.ndarray:
    """`hosts` sorted subtree by subtree, and within each by the up-ports the tables use to
    reach them, from the top level down: (pod, spine colour, leaf, leaf colour) on a 3-level
    tree, (leaf, leaf colour) on a 2-level one. Host id breaks ties."""
    lv = fabric.nodes()["level"]
    top = int(lv.max())
    leaf = host_leaves(fabric)[hosts]
    keys: list[np.ndarray] = []
    for level in range(top - 1, 0, -1):
        keys.append(_groups(fabric, level)[leaf])
        keys.append(up_port_colours(fabric, routing, level)[hosts])
    if not keys:  # a single switch: any order is as good
        keys.append(leaf)
    # np.lexsort sorts by the last key first: host id last-resort, then finest to coarsest.
    return hosts[np.lexsort([hosts, *reversed(keys)])]


def leaf_blocks(routing: Routing, pool: np.ndarray) -> list[np.ndarray]:
    """The pool's hosts by leaf, in the order to take them: leaves the pool fills first, then
    fuller leaves first; within that, pod by pod and leaf by leaf."""
    fabric = routing.fabric
    leaf = host_leaves(fabric)
    capacity = np.bincount(leaf, minlength=len(fabric.node_names))
    pod = _groups(fabric, 2) if fabric.levels >= 3 else np.arange(len(fabric.node_names))
    blocks: dict[int, list[int]] = {}
    for h in pool:
        blocks.setdefault(int(leaf[h]), []).append(int(h))
    order = sorted(
        blocks,
        key=lambda s: (len(blocks[s]) < capacity[s], -len(blocks[s]), int(pod[s]), s),
    )
    return [np.array(sorted(blocks[s]), dtype=np.int32) for s in order]
