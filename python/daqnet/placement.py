"""Placement: which host runs which rank.

Orders: ``topology`` (cabling order), ``hostname`` (sorted hostnames, numbers compared as
numbers, as Slurm orders a node list), ``random`` (seeded), ``file`` (hostnames listed one
per line, e.g. the output of ``scontrol show hostnames``, or a Slurm hostlist expression).

With several tasks per node (``workload.tasks_per_node``), ranks are tasks: the orders above
give each chosen host that many consecutive ranks, and the job mappings of
:mod:`daqnet.mapping` (``default``, ``blocked-node``, ``blocked-drawer``, ...) deal the task
grid to every host of a direct network.

A hostlist expression (``hosts = "node[001-064]"``) chooses the node set: with order
``file`` the ranks follow the expression's order; with the other orders, that order is
applied to the chosen hosts (as Slurm hands an allocation's nodes out in hostname order).
"""

from __future__ import annotations

from pathlib import Path

import natsort
import numpy as np

from . import _core
from .errors import DaqnetError
from .fabric import Fabric
from .io.hostlist import expand, read_hostnames
from .mapping import MAPPINGS, map_tasks

__all__ = [
    "MAPPINGS",
    "ORDERS",
    "Placement",
    "build",
    "from_file",
    "from_hostlist",
    "hostname",
    "random",
    "topology",
]

ORDERS: dict[str, str] = {
    "topology": "rank i on the i-th host in cabling order",
    "hostname": "ranks in sorted hostname order (numbers compared as numbers), as Slurm does",
    "random": "ranks on hosts in a seeded random order",
    "file": "rank i on the host named on the i-th line of a file",
    **MAPPINGS,
}


class Placement:
    """Rank → host id, over a fabric."""

    def __init__(self, fabric: Fabric, hosts: np.ndarray, order: str, tasks_per_node: int = 1):
        self.fabric = fabric
        self.hosts = np.ascontiguousarray(hosts, dtype=np.int32)
        self.order = order
        #: ranks (tasks) per host: 1, or workload.tasks_per_node
        self.tasks_per_node = tasks_per_node

    @property
    def ranks(self) -> int:
        return len(self.hosts)

    def host_names(self) -> list[str]:
        names = self.fabric.host_names
        return [names[h] for h in self.hosts]

    def describe(self) -> str:
        if self.tasks_per_node > 1:
            return (
                f"{self.order} mapping, {self.ranks:,} tasks ({self.tasks_per_node} per node) "
                f"on {self.ranks // self.tasks_per_node:,} of {self.fabric.num_hosts:,} hosts"
            )
        n, hosts = self.ranks, self.fabric.num_hosts
        return (
            f"{self.order} order, {n:,} rank{'s' if n != 1 else ''} on "
            f"{hosts:,} host{'s' if hosts != 1 else ''}"
        )

    def with_tasks(self, tasks_per_node: int) -> Placement:
        """The same hosts in the same order, each running `tasks_per_node` consecutive ranks."""
        if tasks_per_node == 1:
            return self
        return Placement(
            self.fabric, np.repeat(self.hosts, tasks_per_node), self.order, tasks_per_node
        )

    def __repr__(self) -> str:
        return f"<daqnet.Placement {self.describe()}>"


def _count(fabric: Fabric, ranks: int | None) -> int:
    n = fabric.num_hosts if ranks is None else ranks
    if not 2 <= n <= fabric.num_hosts:
        raise DaqnetError(
            f"placement.ranks = {n}: must be between 2 and the {fabric.num_hosts} hosts"
        )
    return n


def topology(fabric: Fabric, ranks: int | None = None) -> Placement:
    return Placement(fabric, np.arange(_count(fabric, ranks)), "topology")


def hostname(fabric: Fabric, ranks: int | None = None) -> Placement:
    """Ranks in natural hostname order (digit runs compared as numbers: node2 < node10), as
    Slurm orders a node list; natsort does the comparing."""
    names = fabric.host_names
    order = natsort.index_natsorted(names)
    return Placement(fabric, np.array(order[: _count(fabric, ranks)]), "hostname")


def random(fabric: Fabric, ranks: int | None = None, seed: int = 0) -> Placement:
    perm = _core.workload.random_permutation(fabric.num_hosts, seed)
    return Placement(fabric, perm[: _count(fabric, ranks)], "random")


def from_file(
    fabric: Fabric, path: str | Path, ranks: int | None = None, tasks_per_node: int = 1
) -> Placement:
    """Ranks on the hosts listed in `path`, in its order. With `tasks_per_node` > 1 a file
    that lists each host that many times is one line per task, as Slurm's SLURM_HOSTFILE
    (line i is rank i; daqnet repair writes it so); one that lists each once gives each host
    that many consecutive ranks."""
    index = {n: i for i, n in enumerate(fabric.host_names)}
    hosts = []
    why = f"workload.tasks_per_node = {tasks_per_node}"
    for name, lineno in read_hostnames(path, "placement.file", tasks_per_node, why):
        if name not in index:
            raise DaqnetError(f"{path}:{lineno}: no host named '{name}' in the fabric")
        hosts.append(index[name])
    if tasks_per_node > 1:
        counts = np.bincount(hosts, minlength=fabric.num_hosts)
        if counts.max() > 1:  # one line per task
            if ranks is not None:
                raise DaqnetError(
                    f"placement.ranks = {ranks} with {path}, which lists a line per task: "
                    "the file gives the ranks (leave placement.ranks out)"
                )
            if (short := np.flatnonzero((counts > 0) & (counts != tasks_per_node))).size:
                name = fabric.host_names[int(short[0])]
                raise DaqnetError(
                    f"{path}: lists hosts once per task, so each of them {tasks_per_node} times "
                    f"({why}), but '{name}' {int(counts[short[0]])} time(s)"
                )
            return Placement(fabric, np.array(hosts), "file", tasks_per_node)
    n = len(hosts) if ranks is None else ranks
    if len(hosts) < n:
        raise DaqnetError(f"{path}: lists {len(hosts)} hosts but placement.ranks = {n}")
    if n < 2:
        what = (
            f"placement.ranks = {n}" if ranks is not None else f"{path} lists {len(hosts)} host(s)"
        )
        raise DaqnetError(f"{what}: at least 2 ranks are needed")
    return Placement(fabric, np.array(hosts[:n]), "file").with_tasks(tasks_per_node)


def from_hostlist(
    fabric: Fabric,
    expression: str,
    order: str = "file",
    ranks: int | None = None,
    seed: int = 0,
    where: str = "placement.hosts",
) -> Placement:
    """Ranks on the hosts of a Slurm hostlist expression: in its order (``order="file"``), or
    in topology, hostname or random order among those hosts."""
    index = {n: i for i, n in enumerate(fabric.host_names)}
    names = expand(expression, where)
    missing = [n for n in names if n not in index]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise DaqnetError(
            f"{where} = {expression!r}: no host named '{missing[0]}'{more} in the fabric"
        )
    hosts = np.array([index[n] for n in names], dtype=np.int32)
    n = len(hosts) if ranks is None else ranks
    if not 2 <= n <= len(hosts):
        raise DaqnetError(
            f"placement.ranks = {n}: must be between 2 and the {len(hosts)} hosts of {where}"
        )
    if order == "topology":
        hosts = np.sort(hosts)
    elif order == "hostname":
        hosts = hosts[natsort.index_natsorted(names)]
    elif order == "random":
        hosts = hosts[_core.workload.random_permutation(len(hosts), seed)]
    elif order != "file":
        raise DaqnetError(f"placement.order = {order!r}: expected one of {', '.join(ORDERS)}")
    return Placement(fabric, hosts[:n], order)


def build(
    fabric: Fabric,
    order: str = "topology",
    ranks: int | None = None,
    seed: int = 0,
    file: str | Path | None = None,
    hosts: str | None = None,
    tasks_per_node: int = 1,
    grid: list[int] | None = None,
) -> Placement:
    """The placement named in a scenario's [placement] section; with `tasks_per_node` > 1
    every host runs that many ranks (tasks). `grid` is the workload's task grid, which the
    blocked mappings cut into blocks (default: one dimension)."""
    if order in MAPPINGS:
        if ranks is not None or hosts is not None or file is not None:
            raise DaqnetError(
                f"placement.order = {order!r} maps tasks onto every host of the fabric: "
                "remove placement.ranks, placement.hosts and placement.file"
            )
        dims = grid or [fabric.num_hosts * tasks_per_node]
        return Placement(
            fabric, map_tasks(fabric, order, tasks_per_node, dims, seed), order, tasks_per_node
        )
    if order == "file" and file is not None and hosts is None and tasks_per_node > 1:
        return from_file(fabric, file, ranks, tasks_per_node)
    return _hosts(fabric, order, ranks, seed, file, hosts).with_tasks(tasks_per_node)


def _hosts(
    fabric: Fabric,
    order: str,
    ranks: int | None,
    seed: int,
    file: str | Path | None,
    hosts: str | None,
) -> Placement:
    if hosts is not None:
        if file is not None:
            raise DaqnetError("placement.hosts and placement.file both given: choose one")
        return from_hostlist(fabric, hosts, order, ranks, seed)
    if order == "topology":
        return topology(fabric, ranks)
    if order == "hostname":
        return hostname(fabric, ranks)
    if order == "random":
        return random(fabric, ranks, seed)
    if order == "file":
        if file is None:
            raise DaqnetError(
                'placement.order = "file" needs placement.file (or a hostlist in placement.hosts)'
            )
        return from_file(fabric, file, ranks)
    raise DaqnetError(f"placement.order = {order!r}: expected one of {', '.join(ORDERS)}")
