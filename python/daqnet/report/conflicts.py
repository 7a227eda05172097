"""Readable terminal summaries."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..analysis import ConflictReport
from .format import count, table

__all__ = ["conflict_summary"]


def conflict_summary(report: ConflictReport, source: str = "", details: int = 3) -> str:
    f = report.fabric
    lines = [f"daqnet conflicts — {source}" if source else "daqnet conflicts"]
    partial = f.partial_subtrees()

    def subtree(p: dict[str, Any]) -> str:
        sw = p["switches"]
        where = sw[0] if len(sw) == 1 else f"the pod of {sw[0]}..{sw[-1]}"
        return f"{where} holds {p['hosts']}/{p['capacity']} hosts"

    if f.units:  # a direct network: its builder's description says it all
        leaf_note = ", ".join(
            f"{n} host{'s' if n != 1 else ''} per {u}" for u, n in f.units.items()
        )
    elif f.xgft is None:  # imported or hand-built: how the hosts spread over the leaves
        # Hosts on switches above the leaves (a management node on a spine) apart.
        level = dict(zip(f.node_names, f.nodes()["level"].tolist(), strict=True))
        counts = f.hosts_per_switch()
        per_leaf = [n for s, n in counts.items() if level[s] <= 1]
        upper = [s for s in counts if level[s] > 1]
        lo, hi = min(per_leaf, default=0), max(per_leaf, default=0)
        hosts = f"{lo if lo == hi else f'{lo}-{hi}'} host{'s' if hi != 1 else ''}"
        leaf_note = (
            f"1 leaf with {hosts}"
            if len(per_leaf) == 1
            else f"{len(per_leaf)} leaves with {hosts} each"
        )
        if upper:
            n = sum(counts[s] for s in upper)
            leaf_note += f", {n} host{'s' if n != 1 else ''} on {', '.join(upper)} above the leaves"
    elif not partial:
        leaf_note = "all leaves and pods full"
    else:
        leaf_note = "partial: " + "; ".join(map(subtree, partial))
    lines += [
        f"  fabric     {f.describe()} ({leaf_note})",
        f"  routing    {report.routing.engine}, routes of up to {report.routing.max_hops} links",
        f"  placement  {report.placement.describe()}",
        f"  workload   {report.workload.describe()}",
        "",
    ]
    done = report.steps_done
    on_hosts = report.host_link_conflicts
    lines.append(
        f"  {count(report.total_flows, 'flow')}"
        # A stencil's neighbours on one node: flows that enter no network (16 tasks per node
        # read "128 flows" where 64 crossed it).
        + (f" ({report.local_flows:,} within a host, on no link)" if report.local_flows else "")
        + f", {count(report.total_conflicts, 'conflict')}"
        + (f" ({on_hosts:,} on hosts' own links)" if on_hosts else "")
        + f" in {report.steps_with_conflicts:,} of {done:,} steps, max link load {report.max_link_load}"
    )
    busy = int(np.count_nonzero(report.steps()["max_link_load"]))
    if busy and report.times_note:
        # Flows per link are not times when links differ in rate or flows are split.
        lines.append(
            f"  flow counts do not give step times here ({report.times_note}): "
            "`daqnet simulate` times the steps"
        )
    elif busy:
        total, bound = report.sum_max_link_load, report.sum_max_host_link_load
        if bound == busy:  # one flow per host link in every step: a permutation's steps
            lines.append(
                f"  Σ over steps of the max link load {total:,} against {busy:,} without conflicts: "
                f"steps of equal flows take ×{total / busy:.3f} as long"
            )
        else:
            # Hosts that send or receive several flows at once share their own links in any
            # fabric: that is the step's floor, not a conflict the fabric adds (all at once).
            lines.append(
                f"  Σ over steps of the max link load {total:,} against {bound:,} on the hosts' own "
                f"links (what they send or receive at once, in any fabric): steps of equal flows "
                f"take ×{total / bound:.3f} as long as the hosts' links allow"
            )
    if report.interrupted:
        lines.append(
            f"  INTERRUPTED after {done:,} of {report.steps_total:,} steps: totals cover those steps"
        )
    worst = report.worst_steps(5)
    if worst:
        s = report.steps()
        parts = []
        for step in worst:
            i = step - int(s["step"][0])
            parts.append(
                f"{step} ({int(s['conflicts'][i])}, max load {int(s['max_link_load'][i])})"
            )
        lines.append("  worst steps: " + ", ".join(parts))
    lines += [
        "",
    ]
    head = [
        "link class",
        "links",
        "busy",
        "mean load",
        "max load",
        "conflicts",
        "flows/link min-mean-max",
    ]
    rows = [
        [
            lv["class"],
            f"{lv['links']:,}",
            f"{100 * lv['busy_fraction']:.1f}%",
            f"{lv['mean_load']:.3f}",
            str(lv["max_load"]),
            f"{lv['conflicts']:,}",
            f"{lv['flows_per_link_min']}-{lv['flows_per_link_mean']:.1f}-{lv['flows_per_link_max']}",
        ]
        for lv in report.levels()
    ]
    lines += table(head, rows, [False, True, True, True, True, True, False])
    top = report.worst_links(5)
    if top:
        lines += ["", "  most conflicting links (conflicts, steps with conflicts, max load):"]
        for row in top:
            lines.append(
                f"    {row['from']}:{row['from_port']} -> {row['to']}:{row['to_port']}  ({row['class']})  "
                f"{row['conflicts']:,}, {row['conflict_steps']:,}, {row['max_load']}"
            )
    s = report.steps()
    for step in worst[:details]:
        n_links = int(s["conflicting_links"][step - int(s["step"][0])])
        det = report.step_details(step, max_links=4, max_flows_per_link=4)
        lines += [
            "",
            f"  step {step}: {n_links:,} link(s) with more than one flow, most loaded first",
        ]
        for c in det:
            flows = ", ".join(f"{fl['src_host']}->{fl['dst_host']}" for fl in c["flows"])
            more = f" (+{c['load'] - len(c['flows'])})" if c["load"] > len(c["flows"]) else ""
            lines.append(
                f"    {c['from']}:{c['from_port']} -> {c['to']}:{c['to_port']}  load {c['load']}: {flows}{more}"
            )
        if n_links > len(det):
            lines.append(f"    ... {n_links - len(det):,} more")
    return "\n".join(lines)
