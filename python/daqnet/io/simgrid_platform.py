"""A SimGrid platform (XML, version 4.1) of a fabric and its routing, for SimGrid 3.32's
``Engine::load_platform``: one zone with Full routing, one host per host, one link per
*directed* link (SHARED, so each direction of a cable is its own resource, as in daqnet's
model), and an explicit route for every ordered pair of hosts: the path daqnet's routing
gives it; its <config> sets the network model daqnet's sharing is (SIMGRID_CONFIG). SimGrid
then simulates exactly what daqnet analyses, including imported tables.

Full routing stores N·(N−1) routes, so the file grows with the square of the hosts (about
64 MB at 540 hosts, 2.7 GB and a minute at 3,000). Routings that spread a pair over several
paths have no Full-routing equivalent and are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import quoteattr

from ..errors import DaqnetError
from ..routing import Routing
from .files import atomic_open

__all__ = ["SIMGRID_CONFIG", "link_id", "write_simgrid_platform"]

#: SimGrid settings under which it shares links as daqnet does: CM02 max-min, with no
#: bandwidth or latency factor, TCP window, cross traffic or latency weighting.
SIMGRID_CONFIG = (
    ("network/model", "CM02"),
    ("network/crosstraffic", "0"),
    ("network/TCP-gamma", "0"),
    ("network/weight-S", "0"),
    ("network/latency-factor", "1"),
    ("network/bandwidth-factor", "1"),
)


def link_id(names: list[str], src: int, src_port: int, dst: int, dst_port: int) -> str:
    """The platform's name of a directed link: ``leaf3:21->spine2:4``."""
    return f"{names[src]}:{src_port}->{names[dst]}:{dst_port}"


def write_simgrid_platform(
    routing: Routing,
    path: str | Path,
    host_speed: str = "1Gf",
    progress: Callable[[int, int], object] | None = None,
) -> None:
    """Write the platform; `progress(done, total)` gets the source hosts whose routes are
    written (minutes and gigabytes from a few thousand hosts on)."""
    if not routing.single_path:
        raise DaqnetError(
            f"routing {routing.engine} spreads flows over several paths; a SimGrid Full-routing "
            "platform holds one route per pair of hosts"
        )
    fabric = routing.fabric
    names = fabric.node_names
    links = fabric.links()
    ids = [
        quoteattr(link_id(names, int(s), int(sp), int(d), int(dp)))
        for s, sp, d, dp in zip(
            links["src"], links["src_port"], links["dst"], links["dst_port"], strict=True
        )
    ]
    H = fabric.num_hosts
    with atomic_open(path) as out:
        out.write("<?xml version='1.0'?>\n")
        out.write('<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n')
        out.write(f"<!-- {fabric.describe()}; routing {routing.engine}; written by daqnet -->\n")
        out.write('<platform version="4.1">\n')
        # The network model of daqnet's max-min sharing, which a program loading the file
        # gets without setting it (SimGrid's default LV08 factors, TCP window and cross
        # traffic made a barrel step 15 % longer).
        out.write("<config>\n")
        for key, value in SIMGRID_CONFIG:
            out.write(f'  <prop id="{key}" value="{value}"/>\n')
        out.write("</config>\n")
        out.write('<zone id="daqnet" routing="Full">\n')
        for h in range(H):
            out.write(f'  <host id={quoteattr(names[h])} speed="{host_speed}"/>\n')
        for i, (gbps, lat) in enumerate(zip(links["gbps"], links["latency_seconds"], strict=True)):
            out.write(
                f'  <link id={ids[i]} bandwidth="{float(gbps) * 1e9 / 8!r}Bps" '
                f'latency="{float(lat)!r}s"/>\n'
            )
        for s in range(H):
            if progress is not None:
                progress(s, H)
            src = quoteattr(names[s])
            for d in range(H):
                if s == d:
                    continue
                route = "".join(f"<link_ctn id={ids[link]}/>" for link in routing.path(s, d))
                out.write(
                    f'  <route src={src} dst={quoteattr(names[d])} symmetrical="NO">{route}</route>\n'
                )
        out.write("</zone>\n</platform>\n")
        if progress is not None:  # before the file takes its name: a Ctrl-C here writes none
            progress(H, H)
