"""Brute-force references, written independently of daqnet's C++ analysis.

The fabric is read back as a plain graph (node, port) -> (link, peer); routes are traced
hop by hop through the forwarding tables; loads are counted with a Counter.
"""

from __future__ import annotations

from collections import Counter


def plain_graph(fabric):
    """{(node, port): (link id, peer node)} from the fabric's link table."""
    lt = fabric.links()
    return {
        (int(s), int(p)): (i, int(d))
        for i, (s, p, d) in enumerate(zip(lt["src"], lt["src_port"], lt["dst"], strict=True))
    }


def trace(graph, table, num_hosts, src, dst):
    """Links from host src to host dst by walking the tables; asserts no loop, no black hole."""
    if src == dst:
        return []
    link, node = graph[(src, 1)]
    path = [link]
    seen = set()
    while node != dst:
        assert node >= num_hosts, f"delivered to host {node} instead of {dst}"
        assert node not in seen, "loop"
        seen.add(node)
        port = int(table[node - num_hosts, dst])
        assert port != 0, "black hole"
        link, node = graph[(node, port)]
        path.append(link)
    return path


def conflicts(routing, hosts, steps):
    """Per step: (conflicts, max load, Counter of loads); plus per-link totals and hops."""
    fabric = routing.fabric
    graph = plain_graph(fabric)
    table = routing.table()
    per_step = []
    link_flows = Counter()
    link_conflicts = Counter()
    hops = 0
    for flows in steps:
        load = Counter()
        for s, d in flows:
            p = trace(graph, table, fabric.num_hosts, int(hosts[s]), int(hosts[d]))
            assert (not p) or (
                fabric.links()["src"][p[0]] == hosts[s] and fabric.links()["dst"][p[-1]] == hosts[d]
            )
            hops += len(p)
            load.update(p)
        c = sum(max(0, v - 1) for v in load.values())
        per_step.append((c, max(load.values(), default=0), load))
        link_flows.update(load)
        for link, v in load.items():
            if v > 1:
                link_conflicts[link] += v - 1
    return per_step, link_flows, link_conflicts, hops
