"""Fabrics: any graph of hosts with NICs, switches with numbered ports, directed links.

A :class:`Fabric` wraps the compiled ``daqnet._core.fabric.Fabric``. Nodes are numbered
hosts first, in cabling (topology) order, then switches. Ports are numbered from 1, as on
InfiniBand. Every directed link has a rate, a latency and a named *link class*
(host->leaf, leaf->spine, ... on fat trees; any names on other graphs); levels are
optional node information that tree builders set and :func:`graph` infers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import _core
from .errors import DaqnetError
from .io.hostlist import read_hostnames

__all__ = [
    "KINDS",
    "NAMINGS",
    "Fabric",
    "dragonfly",
    "fat_tree",
    "from_ibnetdiscover",
    "graph",
    "parse_taper",
    "percs",
]

#: Fabric families a scenario can name (fabric.kind).
KINDS: dict[str, str] = {
    "fat-tree": "a k-ary fat tree of 2 or 3 levels built from radix and host count",
    "ibnetdiscover": "the cabling ibnetdiscover reported (or an ibsim net file), from fabric.file",
    "slurm-topology": "switches and nodes of a Slurm topology.conf (tree plugin), from fabric.file",
    "percs": "an IBM PERCS-like two-level direct network: supernodes of drawers of nodes, "
    "each node with its hub (LL, LR and D links)",
    "dragonfly": "a dragonfly of g groups of a routers, p hosts and h global ports per router",
}

#: Host naming schemes: how hostnames relate to the cabling order.
NAMINGS: dict[str, str] = {
    "cabling": "names follow the cabling order (prefix + zero-padded index)",
    "shuffled": "the same names dealt to hosts in a seeded random order, as on a cluster "
    "whose hostnames do not follow its cabling",
    "file": "names read from naming_file, one per line, in cabling order",
}


class Fabric:
    """Hosts, switches and directed links, addressable by name and number."""

    def __init__(self, core: _core.fabric.Fabric, units: dict[str, int] | None = None):
        self._core = core
        self._names = core.node_names()
        self._index = {n: i for i, n in enumerate(self._names)}
        self._by_class: tuple[tuple[str, np.ndarray, np.ndarray], ...] | None = None
        #: Nested host groups of a direct network, smallest first, as consecutive hosts:
        #: {"drawer": 8, "supernode": 32} on PERCS ({"router": p, "group": a·p} on a
        #: dragonfly). The job mappings block and shuffle by them.
        self.units: dict[str, int] = dict(units or {})

    # -- sizes -------------------------------------------------------------------------
    @property
    def num_hosts(self) -> int:
        return self._core.num_hosts

    @property
    def num_switches(self) -> int:
        return self._core.num_switches

    @property
    def num_links(self) -> int:
        """Directed links (two per cable)."""
        return self._core.num_links

    @property
    def levels(self) -> int:
        """Highest switch level (0 when the fabric has no levels)."""
        return self._core.num_levels

    def describe(self) -> str:
        return self._core.describe()

    @property
    def default_rate_cables(self) -> int:
        """Cables an importer gave the default rate (fabric.link_gbps): their lines carry
        none (an ibsim net file); 0 for a capture, whose every line does."""
        return int(self._core.default_rate_cables)

    # -- names -------------------------------------------------------------------------
    @property
    def host_names(self) -> list[str]:
        """Hostnames in cabling order (host id i is the i-th)."""
        return self._names[: self.num_hosts]

    @property
    def node_names(self) -> list[str]:
        return list(self._names)

    def name(self, node: int) -> str:
        return self._names[node]

    def node(self, name: str) -> int:
        """Node id of a host or switch name."""
        try:
            return self._index[name]
        except KeyError:
            raise DaqnetError(f"no host or switch named '{name}' in the fabric") from None

    def level_name(self, level: int) -> str:
        return self._core.level_name(level)

    def address(self, node: int | str) -> tuple[int, int, int]:
        """(node GUID, port GUID, LID) of an imported node; zeros when unknown."""
        return self._core.address(self.node(node) if isinstance(node, str) else node)

    def write_ibsim_net(self, path: str | Path) -> None:
        """Write the fabric as an ibsim net file (ibnetdiscover's format; node ids are
        daqnet's names), e.g. for OpenSM to compute its forwarding tables. Written whole
        or not at all: a fabric ibsim cannot describe fails half-way."""
        from .io.files import atomic_path

        with atomic_path(path) as tmp:
            _core.fabric.write_ibsim_net(self._core, tmp)

    def ports(self, node: int | str) -> list[tuple[int, int, int, int]]:
        """(port, peer node or -1, peer port, outgoing link or -1) for each port."""
        return self._core.ports(self.node(node) if isinstance(node, str) else node)

    # -- tables ------------------------------------------------------------------------
    def nodes(self) -> dict[str, np.ndarray]:
        """Per node: level (0 = host, -1 = unknown), position, ports, ports_used."""
        return self._core.node_table()

    def links(self) -> dict[str, np.ndarray]:
        """Per directed link: src, src_port, dst, dst_port, class (an index into
        link_class_names()), gbps, latency_seconds."""
        return self._core.link_table()

    def link_class_names(self) -> list[str]:
        """Names of the link classes, in order of first use: host->leaf, leaf->host, ..."""
        return self._core.link_class_names()

    def links_by_class(self) -> tuple[tuple[str, np.ndarray, np.ndarray], ...]:
        """(class name, its links' numbers, their Gb/s) for each class that has links, in
        class order; computed once per fabric (per-class link statistics ask for it at
        every call, and the link table costs a millisecond at 10,000 hosts); read-only."""
        if self._by_class is None:
            links = self.links()
            cls, gbps = links["class"], links["gbps"]
            groups = []
            for c, name in enumerate(self.link_class_names()):
                index = np.flatnonzero(cls == c)
                if len(index):
                    index.setflags(write=False)
                    rate = gbps[index]
                    rate.setflags(write=False)
                    groups.append((name, index, rate))
            self._by_class = tuple(groups)
        return self._by_class

    def link_classes(self) -> list[str]:
        """The class name of every directed link."""
        names = self.link_class_names()
        return [names[c] for c in self.links()["class"]]

    @property
    def xgft(self) -> dict[str, Any] | None:  # the bindings give None or a dict
        """The generalized fat-tree shape (levels, down m_l, up w_l), or None."""
        shape = self._core.xgft
        return shape if isinstance(shape, dict) else None

    def hosts_per_switch(self) -> dict[str, int]:
        """Hosts cabled to each switch that has hosts (the leaves), in switch order."""
        links = self.links()
        from_host = links["src"] < self.num_hosts
        counts = np.bincount(links["dst"][from_host], minlength=len(self._names))
        return {self._names[s]: int(counts[s]) for s in np.flatnonzero(counts)}

    def partial_subtrees(self) -> list[dict[str, Any]]:
        """Subtrees below the top level that are not full: the last leaf, the last pod...

        One row per partial subtree: level name, the switches that serve it, hosts cabled
        and host capacity. Partial subtrees break the symmetry that makes shift patterns
        conflict-free under D-mod-K.
        """
        shape = self.xgft
        if shape is None:
            return []
        nodes = self.nodes()
        out = []
        hosts_below, parallel = 1, 1  # M_l and W_l of the XGFT shape
        for level in range(1, shape["levels"]):
            hosts_below *= shape["down"][level - 1]
            parallel *= shape["up"][level - 1]
            if self.num_hosts % hosts_below == 0:
                continue
            last = self.num_hosts // hosts_below
            ids = np.flatnonzero(
                (nodes["level"] == level) & (nodes["position"] // parallel == last)
            )
            out.append(
                {
                    "level": self.level_name(level),
                    "switches": [self._names[i] for i in ids],
                    "hosts": self.num_hosts - last * hosts_below,
                    "capacity": hosts_below,
                }
            )
        return out

    def __repr__(self) -> str:
        return f"<daqnet.Fabric: {self.describe()}>"


def parse_taper(
    value: str | Sequence[str], levels: int, key: str = "fabric.taper"
) -> list[tuple[int, int]]:
    """Parse "a:b" (leaf level) or a list of them (one per level below the top)."""
    items = [value] if isinstance(value, str) else list(value)
    out = []
    for i, item in enumerate(items):
        where = key if isinstance(value, str) else f"{key}[{i}]"
        m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", str(item)) if isinstance(item, str) else None
        if m is None:
            raise DaqnetError(f'{where} = {item!r}: expected a ratio such as "2:1" (down:up)')
        a, b = int(m.group(1)), int(m.group(2))
        if max(a, b) > 65535:
            raise DaqnetError(f'{where} = "{item}": ratio terms must be at most 65535')
        out.append((a, b))
    if len(out) > levels - 1:
        raise DaqnetError(
            f"{key}: {len(out)} ratios given, a {levels}-level tree has {levels - 1} tapered level(s)"
        )
    return out


def _read_names(path: str | Path, count: int, key: str, taken: Sequence[str] = ()) -> list[str]:
    """`count` host names from a host list; none may be one of `taken` (the switches')."""
    listed = read_hostnames(path, key)
    if len(listed) != count:
        raise DaqnetError(f"{path}: {len(listed)} hostnames for a fabric of {count} hosts")
    switches = set(taken)
    for name, lineno in listed:
        if name in switches:
            raise DaqnetError(f"{path}:{lineno}: host '{name}' has the name of a switch")
    return [name for name, _ in listed]


def fat_tree(
    radix: int = 36,
    hosts: int = 540,
    levels: int = 2,
    taper: str | Sequence[str] = "1:1",
    link_gbps: float = 100.0,
    latency_seconds: float = 100e-9,
    hosts_per_leaf: int | None = None,
    spine_radix: int | None = None,
    naming: str = "cabling",
    naming_seed: int = 0,
    naming_file: str | Path | None = None,
    host_prefix: str = "node",
) -> Fabric:
    """A fat tree of 2 or 3 levels; leaves filled in cabling order, the last maybe partial.

    ``taper`` ("a:b" down:up) removes up-links: at 2:1 a 36-port leaf keeps 18 hosts and
    9 up-links. For 3 levels give a list to taper the next level too (["2:1", "2:1"]).
    ``spine_radix`` lets the top level be director switches (e.g. 648 ports).
    """
    if naming not in NAMINGS:
        raise DaqnetError(f"fabric.naming = {naming!r}: expected one of {', '.join(NAMINGS)}")
    for key, value in (
        ("radix", radix),
        ("hosts", hosts),
        ("levels", levels),
        ("hosts_per_leaf", hosts_per_leaf),
        ("spine_radix", spine_radix),
    ):
        if value is not None and not -(2**31) <= value < 2**31:
            raise DaqnetError(f"fabric.{key} = {value}: out of range")
    if hosts_per_leaf is not None and hosts_per_leaf < 1:
        raise DaqnetError(f"fabric.hosts_per_leaf = {hosts_per_leaf}: must be >= 1")
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", host_prefix) or host_prefix in (
        "leaf",
        "spine",
        "core",
    ):
        raise DaqnetError(
            f"fabric.host_prefix = {host_prefix!r}: use letters, digits, '_', '.', '-', "
            "and not a switch prefix (leaf, spine, core)"
        )
    if not 0 <= naming_seed < 2**64:
        raise DaqnetError(f"fabric.naming_seed = {naming_seed}: a seed must be from 0 to 2^64-1")
    core = _core.fabric.build_fat_tree(
        radix=radix,
        hosts=hosts,
        levels=levels,
        taper=parse_taper(taper, levels) if levels in (2, 3) else [],
        hosts_per_leaf=-1 if hosts_per_leaf is None else hosts_per_leaf,
        top_radix=-1 if spine_radix is None else spine_radix,
        link_gbps=link_gbps,
        latency_seconds=latency_seconds,
        host_prefix=host_prefix,
    )
    if naming == "shuffled":
        names = core.node_names()[:hosts]
        perm = _core.workload.random_permutation(hosts, naming_seed)
        core.rename_hosts([names[i] for i in perm])
    elif naming == "file":
        if naming_file is None:
            raise DaqnetError('fabric.naming = "file" needs fabric.naming_file')
        switches = core.node_names()[hosts:]
        core.rename_hosts(_read_names(naming_file, hosts, "fabric.naming_file", switches))
    return Fabric(core)


def percs(
    supernodes: int,
    drawers_per_supernode: int = 4,
    nodes_per_drawer: int = 8,
    d_links_per_pair: int = 1,
    ll_gbps: float = 192.0,
    lr_gbps: float = 40.0,
    d_gbps: float = 80.0,
    host_gbps: float = 1536.0,
    latency_seconds: float = 100e-9,
) -> Fabric:
    """An IBM PERCS-like network: every node with its hub; LL links all-to-all in a drawer,
    LR links between the drawers of a supernode, ``d_links_per_pair`` D links between every
    two supernodes, dealt round-robin over the hubs (docs/direct-networks.md). Defaults are
    the public PERCS rates: LL 24 GB/s, LR 5 GB/s, D 10 GB/s, host ↔ hub 192 GB/s."""
    core = _core.fabric.build_percs(
        supernodes,
        drawers_per_supernode,
        nodes_per_drawer,
        d_links_per_pair,
        ll_gbps,
        lr_gbps,
        d_gbps,
        host_gbps,
        latency_seconds,
    )
    per_sn = drawers_per_supernode * nodes_per_drawer
    return Fabric(core, {"drawer": nodes_per_drawer, "supernode": per_sn})


def dragonfly(
    p: int,
    a: int,
    h: int,
    g: int,
    local_gbps: float = 100.0,
    global_gbps: float = 100.0,
    host_gbps: float = 100.0,
    latency_seconds: float = 100e-9,
) -> Fabric:
    """A dragonfly (Kim et al., ISCA 2008) with the consecutive global-link arrangement
    (docs/direct-networks.md): g groups of a routers, p hosts and h global ports each."""
    core = _core.fabric.build_dragonfly(
        p, a, h, g, local_gbps, global_gbps, host_gbps, latency_seconds
    )
    return Fabric(core, {"router": p, "group": a * p})


def _levels_from_cables(
    hosts: list[str], switches: list[str], cables: list[tuple[Any, ...]]
) -> dict[str, int]:
    """A switch's level: its distance to the nearest host (leaves 1, ...)."""
    peers: dict[str, list[str]] = {n: [] for n in [*hosts, *switches]}
    for c in cables:
        peers[c[0]].append(c[2])
        peers[c[2]].append(c[0])
    level = dict.fromkeys(hosts, 0)
    frontier = list(hosts)
    while frontier:
        nxt = []
        for n in frontier:
            for p in peers[n]:
                if p not in level:
                    level[p] = level[n] + 1
                    nxt.append(p)
        frontier = nxt
    return {s: level[s] for s in switches if s in level}


def graph(
    hosts: Sequence[str],
    switches: Sequence[tuple[str, int] | tuple[str, int, int]],
    cables: Sequence[tuple[Any, ...]],
    link_gbps: float = 100.0,
    latency_seconds: float = 100e-9,
    description: str | None = None,
) -> Fabric:
    """Any fabric, cable by cable: the general model behind every builder and importer.

    ``switches`` are ``(name, ports)`` or ``(name, ports, level)``; without levels, a
    switch's level is its distance to the nearest host, so per-level views exist for any
    graph. ``cables`` are ``(a, port_a, b, port_b)`` with node names, optionally followed
    by ``gbps``, ``latency_seconds`` and the link class names of both directions
    (``"local", "local"``); by default classes are named after the ends' levels
    (``leaf->spine``). A host has one NIC, its port 1.
    """
    names = [*hosts, *(sw[0] for sw in switches)]
    known = set(names)
    for n, c in enumerate(cables):
        if len(c) not in (4, 5, 6, 8):
            raise DaqnetError(
                f"cable {n}: expected (a, port_a, b, port_b[, gbps[, latency_seconds[, class_ab, class_ba]]])"
            )
        for name in (c[0], c[2]):
            if name not in known:
                raise DaqnetError(f"cable {n}: no host or switch named {name!r}")
    core = _core.fabric.Fabric()
    try:
        for h in hosts:
            core.add_host(h)
        given = {sw[0]: sw[2] for sw in switches if len(sw) > 2}
        inferred = _levels_from_cables(list(hosts), names[len(hosts) :], [tuple(c) for c in cables])
        for sw in switches:
            core.add_switch(sw[0], sw[1], given.get(sw[0], inferred.get(sw[0], -1)))
        index = {n: i for i, n in enumerate(core.node_names())}
        for c in cables:
            a, pa, b, pb = c[:4]
            gbps = c[4] if len(c) > 4 else link_gbps
            lat = c[5] if len(c) > 5 else latency_seconds
            if len(c) == 8:
                core.connect(
                    index[a],
                    pa,
                    index[b],
                    pb,
                    gbps,
                    lat,
                    core.link_class(c[6]),
                    core.link_class(c[7]),
                )
            else:
                core.connect(index[a], pa, index[b], pb, gbps, lat)
    except ValueError as err:  # the core's checks: one line naming the node or port
        raise DaqnetError(str(err)) from None
    core.set_description(
        description
        or f"graph of {len(hosts)} host{'s' if len(hosts) != 1 else ''}, {len(switches)} "
        f"switch{'es' if len(switches) != 1 else ''}, {len(cables)} cable{'s' if len(cables) != 1 else ''}"
    )
    return Fabric(core)


def from_ibnetdiscover(
    path: str | Path, default_gbps: float = 100.0, latency_seconds: float = 100e-9
) -> Fabric:
    """The fabric an ``ibnetdiscover`` run reported (default or ``--full`` output), or an
    ibsim net file.

    Hosts are the channel adapters, named by the first word of their node description
    (``"node017 HCA-1"`` → ``node017``), switches by their description (blanks as ``_``);
    without a unique description a node keeps its ibnetdiscover id (``H-<guid>``). Link
    rates come from the width × speed of each port line (``4xEDR`` = 100 Gb/s), else
    ``default_gbps``. GUIDs and LIDs are kept (:meth:`Fabric.address`) for the
    forwarding tables; levels are inferred from the distance to the hosts.
    """
    return Fabric(_core.fabric.read_ibnetdiscover(str(path), default_gbps, latency_seconds))
