"""Slurm's ``topology.conf`` (topology/tree plugin) as a fabric, and back.

Each line names a switch and what hangs below it::

    SwitchName=leaf01 Nodes=node[001-018]
    SwitchName=spine1 Switches=leaf[01-04]

The file gives no port numbers or link rates: a switch's ports are numbered in the order
the file lists what it connects (nodes, then child switches, then its parents), every
cable runs at one rate. Hosts are in file order (the leaves' ``Nodes`` in turn).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DaqnetError
from ..fabric import Fabric, graph
from .files import read_text, write_text_atomic
from .hostlist import collect, expand

__all__ = ["read_slurm_topology", "write_slurm_topology"]

_KEYS = ("switchname", "switches", "nodes", "linkspeed")
# What a name in a topology.conf cannot hold: the hostlist syntax's separators and brackets,
# the line's word and key separators, and the comment mark.
_NOT_IN_NAMES = frozenset(",[]= \t#\\")


def _writable(name: str, path: str | Path) -> str:
    bad = sorted({c for c in name if c in _NOT_IN_NAMES or not c.isprintable()})
    if bad:
        raise DaqnetError(
            f"{path}: the name {name!r} cannot be written in a topology.conf (Slurm's node and "
            f"switch names hold no {' '.join(repr(c) for c in bad)}); rename it "
            "(fabric.naming_file) or export --format ibsim, which quotes names"
        )
    return name


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each non-empty line, comments cut, lines ending in a
    backslash joined with the next as Slurm's parser does (a long Nodes= list)."""
    out: list[tuple[int, str]] = []
    held, first = "", 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not held:
            first = lineno
        if line.endswith("\\"):
            held += line[:-1]  # joined as is: "n[1-4],\" + "n[5-8]" is one list
            continue
        line, held = (held + line).strip(), ""
        if line:
            out.append((first, line))
    if held.strip():
        out.append((first, held.strip()))
    return out


def read_slurm_topology(
    path: str | Path, link_gbps: float = 100.0, latency_seconds: float = 100e-9
) -> Fabric:
    """The switches and nodes of a topology.conf, cabled as it describes."""
    switches: dict[str, int] = {}  # name → line
    children: dict[str, list[tuple[str, int]]] = {}  # switch → [(child switch, line)]
    nodes: dict[str, list[str]] = {}
    host_line: dict[str, tuple[int, str]] = {}
    for lineno, line in _logical_lines(read_text(path, "fabric.file topology")):
        at = f"{path}:{lineno}"
        fields: dict[str, str] = {}
        for word in line.split():
            key, eq, value = word.partition("=")
            if not eq or key.lower() not in _KEYS:
                raise DaqnetError(
                    f"{at}: {key or word}: expected SwitchName=, Switches=, Nodes= or LinkSpeed="
                )
            if not value:
                raise DaqnetError(f"{at}: {key}: empty value")
            if key.lower() in fields:
                raise DaqnetError(f"{at}: {key}: given twice on one line")
            fields[key.lower()] = value
        name = fields.get("switchname")
        if name is None:
            raise DaqnetError(f"{at}: SwitchName: missing (every line describes one switch)")
        if name in switches:
            raise DaqnetError(
                f"{at}: SwitchName: '{name}' already defined on line {switches[name]}"
            )
        switches[name] = lineno
        nodes[name] = expand(fields["nodes"], f"{at}: Nodes") if "nodes" in fields else []
        for host in nodes[name]:
            if host in host_line:
                first, sw = host_line[host]
                raise DaqnetError(
                    f"{at}: Nodes: '{host}' is already below switch '{sw}' (line {first}); "
                    "daqnet models one NIC per host"
                )
            host_line[host] = (lineno, name)
        children[name] = (
            [(c, lineno) for c in expand(fields["switches"], f"{at}: Switches", "switch")]
            if ("switches" in fields)
            else []
        )
    if not switches:
        raise DaqnetError(f"{path}: no SwitchName lines: not a Slurm topology.conf")
    if not host_line:
        raise DaqnetError(f"{path}: no Nodes= on any switch: the fabric has no hosts")
    collide = set(switches) & set(host_line)
    if collide:
        name = sorted(collide)[0]
        raise DaqnetError(f"{path}:{switches[name]}: SwitchName: '{name}' is also a node's name")

    used: dict[str, int] = dict.fromkeys(switches, 0)
    cables: list[tuple[str, int, str, int]] = []

    def port(sw: str) -> int:
        used[sw] += 1
        return used[sw]

    for sw, hosts in nodes.items():
        for host in hosts:
            cables.append((host, 1, sw, port(sw)))
    for parent, kids in children.items():
        for kid, lineno in kids:
            if kid not in switches:
                raise DaqnetError(
                    f"{path}:{lineno}: Switches: '{kid}' has no SwitchName line (below '{parent}')"
                )
            if kid == parent:
                raise DaqnetError(f"{path}:{lineno}: Switches: '{parent}' lists itself")
            cables.append((parent, port(parent), kid, port(kid)))
    _refuse_cycles(path, children)
    hosts = [h for sw in nodes for h in nodes[sw]]
    return graph(
        hosts,
        [(sw, max(used[sw], 1)) for sw in switches],
        cables,
        link_gbps=link_gbps,
        latency_seconds=latency_seconds,
        description=f"{len(hosts)} host{'s' if len(hosts) != 1 else ''}, {len(switches)} "
        f"{'switch' if len(switches) == 1 else 'switches'} from {Path(path).name}",
    )


def _refuse_cycles(path: str | Path, children: dict[str, list[tuple[str, int]]]) -> None:
    """Switches= lists a switch's children: a switch below itself (s0 lists s2, s2 lists s0)
    is no tree, and was read as two parallel cables between them, with more bandwidth than
    either line meant. One error at the line that closes the cycle, naming it."""
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done
    for root in children:
        if root in state:
            continue
        path_: list[str] = [root]
        stack = [iter(children[root])]
        state[root] = 1
        while stack:
            step = next(stack[-1], None)
            if step is None:
                state[path_.pop()] = 2
                stack.pop()
                continue
            kid, lineno = step
            if state.get(kid) == 1:
                loop = " → ".join([*path_[path_.index(kid) :], kid])
                raise DaqnetError(
                    f"{path}:{lineno}: Switches: '{kid}' is already above '{path_[-1]}' "
                    f"(a cycle: {loop}); a switch lists only the switches below it"
                )
            if kid not in state:
                state[kid] = 1
                path_.append(kid)
                stack.append(iter(children[kid]))


def _in_port_order(names: list[str]) -> str:
    """Hostlist expressions, comma-joined, that expand to `names` in their order: the
    importer cables hosts to ports in file order, and a sorted list would renumber them
    (and change what port-based routing does)."""
    parts: list[str] = []
    run: list[str] = []
    for name in names:
        # In collect's order pairwise, so the whole run is (its order is a sort): linear.
        if run and expand(collect([run[-1], name]), "") != [run[-1], name]:
            parts.append(collect(run))
            run = []
        run.append(name)
    if run:
        parts.append(collect(run))
    return ",".join(parts)


def write_slurm_topology(fabric: Fabric, path: str | Path) -> None:
    """A topology.conf for the fabric: one line per switch, its hosts as a hostlist
    expression and the switches one level below it (levels as the fabric has them)."""
    nodes = fabric.nodes()
    level = nodes["level"]
    lines = [f"# Slurm topology.conf written by daqnet: {fabric.describe()}"]
    for sw in range(fabric.num_hosts, fabric.num_hosts + fabric.num_switches):
        hosts: list[str] = []
        below: list[str] = []
        for _, peer, _, _ in fabric.ports(sw):
            if peer < 0:
                continue
            if peer < fabric.num_hosts:
                hosts.append(_writable(fabric.name(peer), path))
            elif not (level[sw] >= 0 and level[peer] >= 0 and level[peer] != level[sw]):
                # Dropped, the file would describe another fabric (a black hole on import).
                raise DaqnetError(
                    f"{path}: topology.conf describes trees: the cable {fabric.name(sw)} - "
                    f"{fabric.name(peer)} joins switches of one level (or of none); "
                    "export --format graphviz or simgrid keeps any graph (ibsim too, where "
                    "every link rate is an InfiniBand width × speed)"
                )
            elif level[peer] < level[sw] and fabric.name(peer) not in below:
                below.append(_writable(fabric.name(peer), path))
        words = [f"SwitchName={_writable(fabric.name(sw), path)}"]
        if hosts:
            words.append(f"Nodes={_in_port_order(hosts)}")
        if below:
            words.append(f"Switches={collect(below)}")
        lines.append(" ".join(words))
    write_text_atomic(path, "\n".join(lines) + "\n")
