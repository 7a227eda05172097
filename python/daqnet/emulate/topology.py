"""What an emulated fabric is made of, decided before anything is created.

Every node of the model (host or switch) becomes a network namespace; every cable a veth
pair whose ends are named ``p<port>`` after the model's port numbers (a host's one port is
``eth0``); every node has one IPv4 address, from RFC 2544's benchmarking range
198.18.0.0/15, on all its ports. Switches forward by per-destination static routes taken
from the routing tables of the scenario (``via`` the next node's address, ``onlink``), so a
packet follows exactly the route the analysis uses. Nothing here touches the system: the
plan is data, so it can be checked (and tested) without root.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from ..errors import DaqnetError
from ..fabric import Fabric
from ..routing import Routing

__all__ = ["MAX_HOSTS", "Link", "Topology", "plan"]

#: Emulated hosts at most (docs/emulate.md: CPU per shaped link and processes limit it).
MAX_HOSTS = 32
_BASE = ipaddress.IPv4Address("198.18.0.0")
_RANGE = 2**17  # 198.18.0.0/15


@dataclass(frozen=True)
class Link:
    """One directed link of the model: the egress of `ifname` in node `node`'s namespace."""

    link: int  # the model's directed link id
    node: int
    ifname: str
    peer: int
    peer_ifname: str
    gbps: float


@dataclass
class Topology:
    """Namespaces, cables and routes of one emulated fabric."""

    prefix: str
    node_names: list[str]  # the model's names, by node id
    num_hosts: int
    links: list[Link]  # both directions of every cable
    #: per node: (destination address, next node's address, interface)
    routes: dict[int, list[tuple[str, str, str]]] = field(default_factory=dict)

    def namespace(self, node: int) -> str:
        return f"{self.prefix}-n{node}"

    def address(self, node: int) -> str:
        return str(_BASE + node + 1)

    def host_ifname(self, host: int) -> str:
        return next(lk.ifname for lk in self.links if lk.node == host)

    @property
    def namespaces(self) -> list[str]:
        return [self.namespace(n) for n in range(len(self.node_names))]

    def cables(self) -> list[tuple[Link, Link]]:
        """Each cable once: (its lower node's direction, the other)."""
        by_id = {(lk.node, lk.ifname): lk for lk in self.links}
        return [
            (lk, by_id[(lk.peer, lk.peer_ifname)])
            for lk in self.links
            if (lk.node, lk.ifname) < (lk.peer, lk.peer_ifname)
        ]


def _ifname(fabric: Fabric, node: int, port: int) -> str:
    return "eth0" if node < fabric.num_hosts else f"p{port}"


def plan(fabric: Fabric, routing: Routing, prefix: str) -> Topology:
    """The emulation of `fabric` with `routing`'s forwarding tables; one clear error for
    what cannot be emulated (too many hosts, a multi-port host, per-flow routing)."""
    if fabric.num_hosts > MAX_HOSTS:
        raise DaqnetError(
            f"daqnet emulate: {fabric.num_hosts} hosts; at most {MAX_HOSTS} are emulated on "
            "one machine (docs/emulate.md)"
        )
    if not routing.single_path:
        raise DaqnetError(
            f"daqnet emulate: routing.engine = '{routing.engine}' gives a flow several paths "
            "or draws them per flow; static routes give every destination one next hop"
        )
    if len(fabric.node_names) > _RANGE - 2:
        raise DaqnetError(
            f"daqnet emulate: {len(fabric.node_names)} nodes do not fit 198.18.0.0/15"
        )
    t = fabric.links()
    links = []
    for k in range(len(t["src"])):
        a, b = int(t["src"][k]), int(t["dst"][k])
        pa, pb = int(t["src_port"][k]), int(t["dst_port"][k])
        links.append(
            Link(k, a, _ifname(fabric, a, pa), b, _ifname(fabric, b, pb), float(t["gbps"][k]))
        )
    topo = Topology(prefix, fabric.node_names, fabric.num_hosts, links)
    for h in range(fabric.num_hosts):
        out = [lk for lk in links if lk.node == h]
        if len(out) != 1:
            raise DaqnetError(
                f"daqnet emulate: host {fabric.name(h)} has {len(out)} cabled ports; the "
                "emulation gives every host exactly one"
            )
    # Switches: a /32 route per destination host, out of the port its table names.
    out_link = (
        _tables(fabric, routing, links)
        if routing.has_tables
        else _from_paths(fabric, routing, links)
    )
    for s in range(fabric.num_hosts, len(fabric.node_names)):
        topo.routes[s] = [
            (topo.address(d), topo.address(lk.peer), lk.ifname)
            for d in range(fabric.num_hosts)
            if (lk := out_link.get((s, d))) is not None
        ]
    # Hosts: everything through their one port.
    for h in range(fabric.num_hosts):
        lk = next(lk for lk in links if lk.node == h)
        topo.routes[h] = [("198.18.0.0/15", topo.address(lk.peer), lk.ifname)]
    return topo


def _tables(fabric: Fabric, routing: Routing, links: list[Link]) -> dict[tuple[int, int], Link]:
    """(switch, destination host) → the link out of the port the forwarding table names."""
    port_link = {(lk.node, lk.ifname): lk for lk in links}
    out = {}
    for s in range(fabric.num_hosts, len(fabric.node_names)):
        for d in range(fabric.num_hosts):
            port = routing.port(s, d)
            if port <= 0:
                continue  # no entry: nothing this switch forwards reaches d (checked when built)
            lk = port_link.get((s, f"p{port}"))
            if lk is None:
                raise DaqnetError(
                    f"daqnet emulate: switch {fabric.name(s)} routes {fabric.name(d)} to "
                    f"port {port}, which has no cable"
                )
            out[(s, d)] = lk
    return out


def _from_paths(fabric: Fabric, routing: Routing, links: list[Link]) -> dict[tuple[int, int], Link]:
    """Per-destination routes read off a routing that gives paths (direct networks): every
    host pair's path walked, each switch's next link toward the destination noted. Refused
    when two paths to one destination leave a switch by different links, which static
    routes cannot express (e.g. ties between parallel global links broken per host pair)."""
    out: dict[tuple[int, int], Link] = {}
    seen: dict[tuple[int, int], int] = {}  # (switch, destination) → the source that set it
    for src in range(fabric.num_hosts):
        for dst in range(fabric.num_hosts):
            if src == dst:
                continue
            for k in routing.path(src, dst)[1:]:  # the first link leaves the host
                lk = links[int(k)]
                had = out.setdefault((lk.node, dst), lk)
                if had.link != lk.link:
                    raise DaqnetError(
                        f"daqnet emulate: routing.engine = '{routing.engine}' sends traffic "
                        f"for {fabric.name(dst)} out of switch {fabric.name(lk.node)} by "
                        f"{had.ifname} (from {fabric.name(seen[(lk.node, dst)])}) and by "
                        f"{lk.ifname} (from {fabric.name(src)}): per-destination static "
                        "routes cannot express it (ties between parallel links are broken "
                        "per host pair; with one link per pair of groups they are not)"
                    )
                seen.setdefault((lk.node, dst), src)
    return out
