"""The terminal table of ``daqnet plan``: one column per taper."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..plan import one_switch_cost

__all__ = ["fabric_keys", "plan_notes", "plan_summary", "plan_table"]


def plan_table(r: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """The plan's rows, a label and one value per taper (the first row: the tapers), as
    the terminal and the report show them."""
    rows = r["candidates"]
    cur = r["prices"]["currency"]
    stages = sorted({s for c in rows for s in c["cables"] if "->" in s}, key=_stage_order)
    levels = sorted({lv for c in rows for lv in c["switches"]}, key=_level_order)
    table: list[tuple[str, list[str]]] = [("taper", [c["taper"] for c in rows])]

    def line(label: str, values: list[str]) -> None:
        table.append((label, values))

    line("levels", [str(c["levels"]) for c in rows])
    line(
        "hosts / up-links per leaf",
        [f"{c['hosts_per_leaf']} / {c['uplinks_per_leaf']}" for c in rows],
    )
    full, unit = _fill(r)
    line(f"hosts that fill every {unit}", [f"{n:,}" for n in full])
    for lv in levels:
        line(f"{lv} switches", [f"{c['switches'].get(lv, 0):,}" for c in rows])
    line("switches in all", [f"{c['switches_total']:,}" for c in rows])
    for s in stages:
        line(f"cables {s}", [f"{c['cables'].get(s, 0):,}" for c in rows])
    # The copper / optical split is of every cable, so it sits under their total.
    line("cables in all", [f"{c['cables']['copper'] + c['cables']['optical']:,}" for c in rows])
    line(
        "  of which copper / optical",
        [f"{c['cables']['copper']:,} / {c['cables']['optical']:,}" for c in rows],
    )
    line("bisection (Gb/s)", [f"{c['bisection_gbps']:,.0f}" for c in rows])
    line("  of full bisection", [f"{c['bisection_fraction']:.0%}" for c in rows])
    line(f"cost ({cur})", [f"{c['cost']:,.0f}" for c in rows])
    line(f"cost per host ({cur})", [f"{c['cost_per_host']:,.0f}" for c in rows])
    return table


def _fill(r: Mapping[str, Any]) -> tuple[list[int], str]:
    """Hosts that make each tree symmetric, and what they fill: a 3-level tree is symmetric
    with every pod full, a 2-level one with every leaf full."""
    rows = r["candidates"]
    full = [c.get("full_pod_hosts") or c["full_leaf_hosts"] for c in rows]
    kinds = {"pod" if c.get("full_pod_hosts") else "leaf" for c in rows}
    unit = "leaf" if kinds == {"leaf"} else "pod" if kinds == {"pod"} else "leaf (3 levels: pod)"
    return full, unit


def plan_notes(r: Mapping[str, Any]) -> list[str]:
    """The prices used and what the table alone does not say, one statement each."""
    rows = r["candidates"]
    cur = r["prices"]["currency"]
    p = r["prices"]
    full, unit = _fill(r)
    notes = [
        f"prices: {p['switch_port']:g} {cur} per switch port, {p['copper_cable']:g} per copper cable "
        f"({', '.join(p['copper_stages'])}), {p['optical_cable']:g} per optical cable (--prices FILE to change)"
    ]
    if r["hosts"] < max(full):
        notes.append(
            f"a partly filled {unit} breaks the symmetry that keeps shift patterns conflict-free "
            f"under D-mod-K: consider the 'hosts that fill every {unit}'"
        )
    if r["hosts"] <= r["radix"]:
        # daqnet's trees have spines: 18 hosts were priced on 1 leaf and 18 idle spines.
        one = one_switch_cost(r["hosts"], r["radix"], p)
        notes.append(
            f"{r['hosts']:,} hosts fit on one {r['radix']}-port switch, a non-blocking crossbar "
            f"with no spines: {one:,.0f} {cur} at these prices (the trees above are what daqnet "
            "builds and analyses)"
        )
    for c in rows:
        top = list(c["switches"])[-1]
        if c.get("top_ports_used", r["radix"]) < r["radix"] // 2:
            notes.append(
                f"{c['taper']}: each of the {c['switches'][top]:,} {top} switches uses "
                f"{c['top_ports_used']} of its {r['radix']} ports, and the cost counts them all: "
                "the tree daqnet analyses; fewer, fuller switches there would cost less"
            )
    return notes


def fabric_keys(candidate: Mapping[str, Any]) -> str:
    """A candidate's tree as a scenario's [fabric] keys: strings, numbers and lists of them
    read the same in TOML as in JSON."""
    return ", ".join(f"{k} = {json.dumps(v)}" for k, v in candidate["fabric"].items())


def plan_summary(r: Mapping[str, Any]) -> str:
    rows = r["candidates"]
    table = plan_table(r)
    # Columns as wide as their widest value (27,648 / 55,296 ran into the next column), and
    # labels as their widest ("... every leaf (3 levels: pod)" pushed its row's values right).
    width = max(14, 2 + max(len(v) for _, values in table for v in values))
    label = max(28, 2 + max(len(name) for name, _ in table))
    lines = [
        f"daqnet plan — {r['hosts']:,} hosts at {r['gbps']:g} Gb/s on {r['radix']}-port switches",
        "",
        *(
            f"  {name:<{label}}" + "".join(f"{v:>{width}}" for v in values)
            for name, values in table
        ),
        "",
        *(f"  {note}" for note in plan_notes(r)),
    ]
    # A scenario's taper alone keeps radix/2 hosts per leaf: the keys that build each column.
    if any("fabric" in c for c in rows):
        lines.append("  as a scenario's [fabric]:")
        for c in rows:
            lines.append(f"    {c['taper']:<6} {fabric_keys(c)}")
    return "\n".join(lines)


def _stage_order(stage: str) -> int:
    return (
        ["host->leaf", "leaf->spine", "spine->core"].index(stage)
        if stage
        in (
            "host->leaf",
            "leaf->spine",
            "spine->core",
        )
        else 9
    )


def _level_order(level: str) -> int:
    return {"leaf": 0, "spine": 1, "core": 2}.get(level, 9)
