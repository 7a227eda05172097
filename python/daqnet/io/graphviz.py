"""Graphviz DOT: the fabric as an undirected graph, one edge per cable with its two port
numbers at its ends, one rank (row) per level, for ``dot -Tsvg`` or ``-Tpdf``."""

from __future__ import annotations

from pathlib import Path

from ..fabric import Fabric
from .files import atomic_open

__all__ = ["write_dot"]


def _q(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_dot(fabric: Fabric, path: str | Path) -> None:
    names = fabric.node_names
    level = fabric.nodes()["level"]
    links = fabric.links()
    with atomic_open(path) as out:
        out.write(f"// {fabric.describe()}\ngraph fabric {{\n  rankdir=BT;\n  splines=false;\n")
        out.write('  node [fontname="Helvetica", fontsize=10];\n')
        for lv in sorted(set(level.tolist()), reverse=True):
            members = [i for i in range(len(names)) if level[i] == lv]
            shape = "ellipse" if lv == 0 else "box"
            label = fabric.level_name(lv) if lv >= 0 else "unlevelled"
            out.write(f"  subgraph {_q('level ' + label)} {{ rank=same; node [shape={shape}];\n")
            for i in members:
                out.write(f"    {_q(names[i])};\n")
            out.write("  }\n")
        for a, pa, b, pb, gbps in zip(
            links["src"],
            links["src_port"],
            links["dst"],
            links["dst_port"],
            links["gbps"],
            strict=True,
        ):
            if (a, pa) < (b, pb):  # each cable once (its two directed links)
                out.write(
                    f"  {_q(names[a])} -- {_q(names[b])} "
                    f'[taillabel="{pa}", headlabel="{pb}", tooltip="{gbps:g} Gb/s"];\n'
                )
        out.write("}\n")
