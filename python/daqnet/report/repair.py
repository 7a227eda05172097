"""The terminal summary of ``daqnet repair``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .format import count

__all__ = ["bound_phrase", "candidate_label", "repair_summary"]


def _hosts(names: list[str], n: int = 8) -> str:
    return " ".join(names[:n]) + (f" ... ({len(names)} in all)" if len(names) > n else "")


def bound_phrase(r: Mapping[str, Any], named: bool = True) -> str | None:
    """What the lower bound says of the repaired order ("cannot go below 0" says nothing);
    None without a bound. `named`: the phrase gives the bound's value itself."""
    bound = r.get("lower_bound")
    if bound is None:
        return None
    if r["conflicts_after"] <= bound:
        return "the fewest any order of these hosts can have"
    if bound == 0:
        return "the bound from links' flow totals is 0 here: how far from the best is not known"
    return (
        f"no order of these hosts can go below {bound:,}"
        if named
        else "no order of these hosts can do better"
    )


def candidate_label(c: Mapping[str, Any]) -> str:
    """A candidate the repair weighed: its order, method or node count."""
    return str(c.get("order") or c.get("method") or f"{c.get('ranks')} ranks")


def _bound(r: Mapping[str, Any]) -> str:
    phrase = bound_phrase(r)
    return f"  ({phrase})" if phrase else ""


def repair_summary(r: Mapping[str, Any]) -> str:
    lines = [
        f"daqnet repair {r['what']} — {r['scenario']}",
        f"  fabric     {r['fabric']}",
        f"  routing    {r['routing']}",
        f"  workload   {r['workload']}, {r['message_bytes']:,.0f} bytes per flow",
        f"  method     {r['method']}",
        "",
        f"  conflicts  {r['conflicts_before']:,} -> {r['conflicts_after']:,}{_bound(r)}",
        f"  time       {r['seconds_before'] * 1e3:,.3f} ms -> {r['seconds_after'] * 1e3:,.3f} ms "
        f"(max-min step simulation): x{r['speedup']:.3f}",
    ]
    if "steps_after" in r:
        added = r["steps_after"] - r["steps_before"]
        lines.append(f"  steps      {r['steps_before']:,} -> {r['steps_after']:,} ({added:+,})")
    if r.get("search"):
        s = r["search"]
        lines.append(
            f"  search     {s['moves']:,} swaps tried, {s['accepted']:,} kept: "
            f"{s['conflicts_start']:,} -> {count(s['conflicts'], 'conflict')}"
            + (" (interrupted)" if s["interrupted"] else "")
        )
    for c in r.get("candidates") or []:
        label = candidate_label(c)
        more = f", {count(c['steps'], 'step')}" if "steps" in c else ""
        more += f", {c['seconds'] * 1e3:,.3f} ms" if "seconds" in c else ""
        lines.append(f"    {label:<14} {count(c['conflicts'], 'conflict')}{more}")
    if r.get("no_nearest"):
        lines.append(f"  nearest    none: {r['no_nearest']}")
    if r.get("nearest"):
        n = r["nearest"]
        lines.append(
            f"  nearest    {n['ranks']} hosts (whole leaves) run without conflicts: "
            f"{n['seconds'] * 1e3:,.3f} ms; {_hosts(n['hosts'])}"
        )
    if r.get("hosts"):
        lines.append(f"  rank order {_hosts(r['hosts'])}")
    if r.get("files"):
        lines.append("")
        lines += [f"  wrote      {path}" for path in r["files"].values()]
    if r.get("launch"):
        lines.append("  run it with, e.g.:")
        lines += [
            f"    {cmd}"
            for key, cmd in r["launch"].items()
            if key in ("prepare", "srun", "mpiexec")
        ]
    return "\n".join(lines)
