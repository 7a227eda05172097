"""Fabrics: hosts with NICs, switches with numbered ports, directed links.

A :class:`Fabric` wraps the compiled ``daqnet._core.fabric.Fabric``. Nodes are numbered
hosts first, in cabling (topology) order, then switches level by level. Ports are
numbered from 1, as on InfiniBand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import _core
from .errors import DaqnetError
from .hostlist import read_hostnames

__all__ = ["NAMINGS", "Fabric", "fat_tree", "parse_taper"]

#: Host naming schemes: how hostnames relate to the cabling order.
NAMINGS = {
    "cabling": "names follow the cabling order (prefix + zero-padded index)",
    "shuffled": "the same names dealt to hosts in a seeded random order, as on a cluster "
    "whose hostnames do not follow its cabling",
    "file": "names read from naming_file, one per line, in cabling order",
}

_LEVEL_NAMES = {2: ("host", "leaf", "spine"), 3: ("host", "leaf", "spine", "core")}


class Fabric:
    """Hosts, switches and directed links, addressable by name and number."""

    def __init__(self, core: _core.fabric.Fabric):
        self._core = core
        self._names = core.node_names()
        self._index = {n: i for i, n in enumerate(self._names)}

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
        return self._core.num_levels

    def describe(self) -> str:
        return self._core.describe()

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
        names = _LEVEL_NAMES.get(self.levels, ())
        return names[level] if level < len(names) else f"level{level}"

    def ports(self, node: int | str) -> list[tuple[int, int, int, int]]:
        """(port, peer node or -1, peer port, outgoing link or -1) for each port."""
        return self._core.ports(self.node(node) if isinstance(node, str) else node)

    # -- tables ------------------------------------------------------------------------
    def nodes(self) -> dict[str, np.ndarray]:
        """Per node: level (0 = host), position, ports, ports_used."""
        return self._core.node_table()

    def links(self) -> dict[str, np.ndarray]:
        """Per directed link: src, src_port, dst, dst_port, tier, up, gbps, latency_seconds."""
        return self._core.link_table()

    def link_class_names(self) -> list[str]:
        """Names of link classes 2·tier + down: host->leaf, leaf->host, leaf->spine, ..."""
        out = []
        for tier in range(self.levels):
            lo, hi = self.level_name(tier), self.level_name(tier + 1)
            out += [f"{lo}->{hi}", f"{hi}->{lo}"]
        return out

    @property
    def xgft(self) -> dict | None:
        """The generalized fat-tree shape (levels, down m_l, up w_l), or None."""
        return self._core.xgft

    def partial_subtrees(self) -> list[dict]:
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


def _read_names(path: str | Path, count: int, key: str) -> list[str]:
    names = [name for name, _ in read_hostnames(path, key)]
    if len(names) != count:
        raise DaqnetError(f"{path}: {len(names)} hostnames for a fabric of {count} hosts")
    return names


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
        core.rename_hosts(_read_names(naming_file, hosts, "fabric.naming_file"))
    return Fabric(core)
