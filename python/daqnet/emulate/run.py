"""``daqnet emulate``: the scenario's fabric in network namespaces, the real event builder
over it (TCP, one rank group per emulated host), and the protocol simulation beside it.

Rates scale: every link runs at its rate divided by ``emulate.scale``, message sizes stay,
and measured rates are multiplied back (times divided) to be read in the fabric's own
units. What does not scale (per-message CPU cost, kernel and loopback latencies) is in
docs/emulate.md.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import bench
from ..errors import DaqnetError
from ..scenario import Scenario
from ..simulate.protocol import simulate_protocol
from . import netns
from .topology import Topology, plan

__all__ = ["emulate", "paths_match"]

#: A link's measured bytes may differ from the bytes routed onto it by this much
#: (relative) before the paths are said not to match: TCP/IP headers and acknowledgements,
#: commands and heartbeats travel too.
SHARE_TOLERANCE = 0.05


def _scale(scenario: Scenario, topo: Topology) -> float:
    given = scenario["emulate"]["scale"]
    fastest = max(lk.gbps for lk in topo.links)
    return float(given) if given else max(1.0, fastest / 0.1)  # fastest link at 100 Mbit/s


@contextmanager
def _signals_end_the_run() -> Iterator[None]:
    """SIGTERM and SIGHUP end the run like Ctrl-C, so that teardown runs."""

    def stop(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    old = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def emulate(
    scenario: Scenario,
    out_dir: str | Path,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Build, run, compare, tear down; the result document (also out_dir/emulate.json)."""
    say = progress or (lambda _text: None)
    out = Path(out_dir)
    stages = scenario.build()
    fabric, routing, placement, _ = stages
    prefix = netns.new_prefix()
    topo = plan(fabric, routing, prefix)
    netns.check_privileges()
    netns.check_congestion_control(scenario["emulate"]["congestion_control"])
    b = scenario["bench"]
    ppn = b["processes_per_node"]
    nodes = (b["ranks"] // ppn) if b["ranks"] else placement.ranks
    if nodes > placement.ranks:
        raise DaqnetError(
            f"{scenario.source}: bench.ranks = {b['ranks']} needs {nodes} hosts but only "
            f"{placement.ranks} are placed"
        )
    hosts = [int(h) for h in placement.hosts[:nodes]]
    scale = _scale(scenario, topo)
    e = scenario["emulate"]
    out.mkdir(parents=True, exist_ok=True)
    # Rank r runs in the namespace of the host its node is placed on (nodes of ppn ranks).
    table = out / "namespaces.txt"
    table.write_text("".join(f"{topo.namespace(hosts[r // ppn])}\n" for r in range(nodes * ppn)))
    wrapper = [
        "/bin/sh",
        "-c",
        'exec ip netns exec "$(sed -n "$((PMI_RANK + 1))p" "$0")" "$@"',
        str(table),
    ]
    with _signals_end_the_run():
        try:
            lane = e["priority"] and b["tcp_control_connection"]
            dscp = b["tcp_control_dscp"] if lane else 0
            cc = e["congestion_control"]
            netns.create(topo, scale, e["queue"], e["mtu"], say, dscp, cc)
            before = netns.counters(topo)
            measured = bench.run(scenario, out / "bench", progress=say, wrapper=wrapper)
            after = netns.counters(topo)
        finally:
            say("tearing down")
            netns.teardown(prefix)
    if measured["interrupted"]:  # Ctrl-C: what was measured is in out/bench; no prediction
        predicted = None
    else:
        say("the protocol simulation")
        predicted = simulate_protocol(scenario, stages=stages)
    pairs = _pair_bytes(measured, hosts, b["processes_per_node"])
    routed = _routed(routing, pairs, len(topo.links))
    doc = _document(scenario, topo, scale, measured, predicted, before, after, hosts, routed)
    (out / "emulate.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    return doc


def _document(
    scenario: Scenario,
    topo: Topology,
    scale: float,
    measured: bench.BenchResult,
    predicted: Any,
    before: dict[tuple[int, str], int],
    after: dict[tuple[int, str], int],
    hosts: list[int],
    routed: list[float],
) -> dict[str, Any]:
    m = measured.to_dict()
    p = predicted.to_dict() if predicted is not None else None
    # Back to real units: rates times scale, times divided by it.
    real = {
        "throughput_gbps": m["throughput_gbps"] * scale if m.get("throughput_gbps") else None,
        "events_per_second": m["events_per_second"] * scale if m.get("events_per_second") else None,
        "latency_seconds": {
            k: (v / scale if isinstance(v, (int, float)) else v)
            for k, v in m["latency_seconds"].items()
        },
    }
    measured_doc = {
        **{k: m[k] for k in ("status", "events_built", "lost_fragments", "duplicate_fragments")},
        "corrupt_fragments": m["corrupt_fragments"],
        **real,
        "emulated_throughput_gbps": m.get("throughput_gbps"),
        "errors": m["errors"],
    }
    predicted_doc = (
        {k: p[k] for k in ("throughput_gbps", "events_per_second", "latency_seconds", "status")}
        if p
        else None
    )
    ratio = (
        real["throughput_gbps"] / predicted_doc["throughput_gbps"]
        if predicted_doc and real["throughput_gbps"] and predicted_doc["throughput_gbps"]
        else None
    )
    sent = {
        lk.link: after[(lk.node, lk.ifname)] - before[(lk.node, lk.ifname)] for lk in topo.links
    }
    links = [
        {
            "link": f"{topo.node_names[lk.node]}->{topo.node_names[lk.peer]}",
            "measured_bytes": sent[lk.link],
            "predicted_bytes": routed[lk.link],
        }
        for lk in topo.links
    ]
    return {
        "scenario": scenario.name,
        "scale": scale,
        "queue": scenario["emulate"]["queue"],
        "congestion_control": scenario["emulate"]["congestion_control"],
        "hosts": [topo.node_names[h] for h in hosts],
        "measured": measured_doc,
        "predicted": predicted_doc,
        "ratio": ratio,
        "links": links,
        "paths_match": paths_match(links),
        "bench_dir": m.get("out_dir"),
    }


def _pair_bytes(
    measured: bench.BenchResult, hosts: list[int], ppn: int
) -> dict[tuple[int, int], float]:
    """Payload bytes from host to host, as measured: each readout unit's bytes out shared
    among the builders in proportion to what each received (every event's fragments go to
    its one builder); pairs within a host cross no cable and are left out."""
    units = measured["units"]
    rus = [(hosts[u["rank"] // ppn], u["bytes_out"]) for u in units if u["unit"] == "ru"]
    bus = [(hosts[u["rank"] // ppn], u["bytes_in"]) for u in units if u["unit"] == "bu"]
    received = sum(b for _, b in bus)
    pairs: dict[tuple[int, int], float] = {}
    for src, sent in rus:
        for dst, got in bus:
            if src != dst and received > 0:
                pairs[(src, dst)] = pairs.get((src, dst), 0.0) + sent * got / received
    return pairs


def _routed(routing: Any, pairs: dict[tuple[int, int], float], links: int) -> list[float]:
    """The bytes every directed link carries if each pair's bytes take the routing's path."""
    out = [0.0] * links
    for (src, dst), nbytes in pairs.items():
        for link in routing.path(src, dst):
            out[int(link)] += nbytes
    return out


def paths_match(links: list[dict[str, Any]]) -> bool:
    """Whether every link carried its predicted share of the bytes (within the tolerance,
    and a link predicted idle next to nothing)."""
    total = sum(r["measured_bytes"] for r in links)
    if total <= 0:
        return False
    floor = total / max(1, len(links)) * SHARE_TOLERANCE
    return all(
        abs(r["measured_bytes"] - r["predicted_bytes"])
        <= max(floor, SHARE_TOLERANCE * r["predicted_bytes"])
        for r in links
    )
