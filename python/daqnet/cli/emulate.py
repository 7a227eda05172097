"""``daqnet emulate``: measurement over an emulated fabric beside the prediction."""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from typing import Any

from ..errors import DaqnetError
from ..io.previous import kept
from ..report.format import quantity, table
from ..scenario import Scenario
from .common import EXIT_INTERRUPTED, Progress, emit, load, note, warn

__all__ = ["run_emulate"]


def run_emulate(args: argparse.Namespace) -> int:
    from ..emulate import netns

    if args.cleanup:
        netns.check_privileges()
        removed = netns.cleanup()
        note(
            f"removed {len(removed)} namespace(s) left by killed runs"
            if removed
            else "nothing to remove"
        )
        return 0
    if not args.scenario:
        raise DaqnetError("daqnet emulate: give a scenario file (or --cleanup)")
    from ..emulate import emulate

    if Scenario.load(args.scenario, args.overrides)["emulate"]["traffic"] == "steps":
        scenario = load(args.scenario, args.overrides, "emulate")  # plain TCP streams
    else:
        scenario = _event_builder_scenario(args)
    progress = Progress("emulate", args.progress)
    try:  # a temporary directory once the scenario passed its checks
        doc = emulate(scenario, args.out, progress.text)
    except KeyboardInterrupt:
        progress.close()
        note("interrupted; the emulated fabric is removed")
        return EXIT_INTERRUPTED
    finally:
        progress.close()
    emit(doc, args.json, _steps_summary if doc["traffic"] == "steps" else _summary)
    m = doc["measured"]
    for why in doc.get("warnings", []):
        warn(why)
    if doc["interrupted"]:
        note(
            "interrupted; the emulated fabric is removed, what was measured is in "
            f"{doc['out_dir']}{kept(doc['out_dir'])}"
        )
        return EXIT_INTERRUPTED
    if doc["traffic"] == "steps":
        return 0
    bad = m["lost_fragments"] + m["duplicate_fragments"] + m["corrupt_fragments"]
    return 0 if m["status"] == "finished" and not bad else 1


# [bench] keys daqnet emulate sets itself: a --set of one was silently replaced.
_FIXED = {
    "bench.transport": "runs the event builder over TCP, each rank on its host's eth0",
    "bench.tcp_interface": "runs each rank on its host's eth0",
    "bench.launcher": "starts the ranks with mpiexec, each in its host's namespace",
    "bench.events": "runs for emulate.seconds: set that",
    "bench.seconds": "runs for emulate.seconds: set that",
    "bench.warmup_seconds": "warms up for emulate.warmup_seconds: set that",
}


def _event_builder_scenario(args: argparse.Namespace) -> Scenario:
    """The event builder runs over TCP, each rank on its host's eth0, for [emulate]'s time
    (transport=tcp first: the user's TCP keys are not ignored keys of an MPI run)."""
    for item in args.overrides:
        key = item.split("=", 1)[0].strip()
        if why := _FIXED.get(key):
            raise DaqnetError(f"set {key}: daqnet emulate {why} (docs/emulate.md)")
    base = load(args.scenario, ["bench.transport=tcp", *args.overrides], "emulate")
    e = base["emulate"]
    # The file serves daqnet bench too: its run length is not this run's (it was replaced
    # without a word: a file's seconds = 3 measured 1 s).
    for key, instead in (
        ("bench.seconds", "emulate.seconds"),
        ("bench.events", "emulate.seconds"),
        ("bench.warmup_seconds", "emulate.warmup_seconds"),
    ):
        section, name = key.split(".")
        if key in base.given:
            note(
                f"{args.scenario}: {key} = {base[section][name]!r} is daqnet bench's; this run "
                f"takes {instead} = {e[instead.split('.')[1]]!r}"
            )
    extra = [
        "bench.transport=tcp",
        "bench.tcp_interface=eth0",
        "bench.launcher=mpiexec",
        "bench.events=0",
        f"bench.seconds={e['seconds']}",
        f"bench.warmup_seconds={e['warmup_seconds']}",
        "simulate.mode=protocol",
    ]
    b = base["bench"]
    if e["priority"] and b["tcp_control_connection"] and not b["tcp_control_dscp"]:
        extra.append("bench.tcp_control_dscp=46")  # EF: what the priority queues look for
    if not base["bench"]["ranks"]:  # every placed host runs a node of the event builder
        placed = base.build_placement(base.build_fabric()).ranks
        extra.append(f"bench.ranks={placed * base['bench']['processes_per_node']}")
    return Scenario.load(args.scenario, [*args.overrides, *extra])


def _summary(doc: Mapping[str, Any]) -> str:
    m, p = doc["measured"], doc["predicted"] or {"latency_seconds": {}}
    lines = [
        f"{doc['scenario']}: emulated {_fabric(doc)}, rates ÷ {doc['scale']:g}, "
        f"{doc['queue']} queues; the event builder on {len(doc['hosts'])} hosts, "
        f"measured {m['status']}",
        f"  throughput   measured {quantity(m['throughput_gbps'], ' Gb/s')}  predicted "
        f"{quantity(p.get('throughput_gbps'), ' Gb/s')}  ratio {quantity(doc['ratio'], '', 1, 3)}"
        "  (built-event payload, all builders, in the fabric's rates)",
        f"  events/s     measured {quantity(m['events_per_second'], '', 1, 0)}  predicted "
        f"{quantity(p.get('events_per_second'), '', 1, 0)}",
        f"  latency p50  measured {quantity(m['latency_seconds'].get('p50'), ' ms', 1e3, 3)}  "
        f"predicted {quantity(p['latency_seconds'].get('p50'), ' ms', 1e3, 3)}",
        f"  window       {quantity(_tenths(doc.get('window_latencies')), '', 1, 1)} predicted event "
        "latencies long (the throughput counts events built in it)",
        f"  integrity    lost {m['lost_fragments']}, duplicate {m['duplicate_fragments']}, "
        f"corrupt {m['corrupt_fragments']}",
        f"  links        {_bench_links(doc)}",
    ]
    lines += [f"  error        {err}" for err in m["errors"]]
    return "\n".join(lines)


def _fabric(doc: Mapping[str, Any]) -> str:
    """The emulated fabric, as the other commands name it (a 12-host dragonfly read as "4
    hosts", those of the event builder)."""
    return str(doc.get("fabric") or f"{len(doc['hosts'])} hosts")


def _tenths(x: float | None) -> float | None:
    """Down to tenths, as the short-window warning says it (9.2 here beside its 9.1)."""
    return math.floor(x * 10) / 10 if x is not None else None


def _steps_summary(doc: Mapping[str, Any]) -> str:
    m, p = doc["measured"], doc["predicted"]
    rows = [
        [
            str(r["step"]),
            str(r["flows"]),
            quantity(r["measured_gbps"], "", 1, 1),
            quantity(r["predicted_gbps"], "", 1, 1),
            quantity(r["ratio"], "", 1, 3),
            f"{quantity(r['min_flow_ratio'], '', 1, 3)}–{quantity(r['max_flow_ratio'], '', 1, 3)}",
            f"{r['retransmitted_segments']:,}",
        ]
        for r in doc["steps"]
    ]
    head = ["step", "flows", "measured Gb/s", "max-min Gb/s", "ratio", "per flow", "resent"]
    return "\n".join([
        f"{doc['scenario']}: emulated {_fabric(doc)}, rates ÷ {doc['scale']:g}, "
        f"{doc['queue']} queues; plain TCP steps on {len(doc['hosts'])} hosts {m['status']}",
        *table(head, rows, [True, True, True, True, True, False, True]),
        f"  mean over steps: measured {quantity(m['throughput_gbps'], ' Gb/s')}  max-min "
        f"{quantity(p['throughput_gbps'], ' Gb/s')}  ratio {quantity(doc['ratio'], '', 1, 3)}",
        f"  links   {_steps_links(doc['paths_match'])}"
        f" ({len(doc['links'])} directed links; "
        f"{doc['retransmitted_segments']:,} segments retransmitted){_farthest(doc)}",
    ])  # fmt: skip


def _bench_links(doc: Mapping[str, Any]) -> str:
    if doc["paths_match"] is None:
        return "not compared (interrupted, and ranks stopped before their last counters)"
    took = "took" if doc["paths_match"] else "did NOT take"
    stopped = doc["measured"]["status"] == "interrupted"  # not a Ctrl-C after it
    how = "; interrupted: compared as shares of all bytes" if stopped else " compared"
    return (
        f"traffic {took} the predicted links ({len(doc['links'])} directed links{how})"
        f"{_farthest(doc)}"
    )


def _farthest(doc: Mapping[str, Any]) -> str:
    """The link farthest from its routed bytes, when the paths do not match."""
    f = doc.get("farthest_link")
    if doc["paths_match"] or not f:
        return ""
    if f["off"] is None:
        return f"; farthest: {f['link']} carried {f['measured_bytes']:,} bytes, routed none"
    return (
        f"; farthest: {f['link']} carried {f['measured_bytes']:,} bytes, "
        f"{abs(f['off']):.0%} {'below' if f['off'] < 0 else 'above'} its routed "
        f"{f['routed_bytes']:,.0f}"
    )


def _steps_links(match: bool | None) -> str:
    if match is None:
        return "not compared (interrupted within a step)"
    return (
        "traffic took the predicted links"
        if match
        else "link bytes differ from the routed bytes by over 5 %"
    )
