"""``daqnet emulate``: the scenario's fabric in network namespaces, the real event builder
over it (TCP, one rank group per emulated host), and the protocol simulation beside it.

Rates scale: every link runs at its rate divided by ``emulate.scale``, message sizes stay,
and measured rates are multiplied back (times divided) to be read in the fabric's own
units. What does not scale (per-message CPU cost, kernel and loopback latencies) is in
docs/emulate.md.
"""

from __future__ import annotations

import copy
import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import bench
from ..bench import window
from ..errors import DaqnetError
from ..io.bench_tables import write_tables
from ..io.previous import discard_previous, set_aside
from ..provenance import provenance
from ..scenario import Scenario
from ..simulate.protocol import check_protocol, simulate_protocol
from ..stops import Stops
from . import netns
from .steps import check_steps, measure_steps
from .topology import Topology, plan

__all__ = ["emulate", "farthest_link", "paths_match", "short_window"]

#: A link's measured bytes may differ from the bytes routed onto it by this much
#: (relative) before the paths are said not to match: TCP/IP headers and acknowledgements,
#: commands and heartbeats travel too.
SHARE_TOLERANCE = 0.05


def _scale(scenario: Scenario, topo: Topology) -> float:
    given = scenario["emulate"]["scale"]
    fastest = max(lk.gbps for lk in topo.links)
    return float(given) if given else max(1.0, fastest / 0.1)  # fastest link at 100 Mbit/s


def emulate(
    scenario: Scenario,
    out_dir: str | Path | None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Build, run, compare, tear down; the result document (also out_dir/emulate.json; a
    new temporary directory, once the scenario passed its checks, when out_dir is None)."""
    say = progress or (lambda _text: None)
    stages = scenario.build()
    fabric, routing, placement, _ = stages
    prefix = netns.new_prefix()
    topo = plan(fabric, routing, prefix)
    netns.check_privileges()
    netns.check_congestion_control(scenario["emulate"]["congestion_control"])
    if scenario["emulate"]["traffic"] == "steps":
        check_steps(scenario["emulate"], str(scenario.source))
    else:  # what would stop the prediction stops the run before anything is measured
        check_protocol(scenario, placement.ranks, as_bench=True)
        if scenario["bench"]["baseline"] in ("alltoall", "isend"):
            # MPI's collectives go through /dev/shm between the namespaces, not the fabric.
            raise DaqnetError(
                f"{scenario.source}: bench.baseline = {scenario['bench']['baseline']!r}: "
                "MPI moves its data through shared memory, around the emulated fabric; "
                "only 'p2p' (over the event builder's TCP transport) crosses it"
            )
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
    out = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="daqnet-emulate-"))
    out.mkdir(parents=True, exist_ok=True)
    # A complete earlier emulation is kept, its benchmark with it, until this one is complete.
    set_aside(out, "emulate", ["bench", "namespaces.txt"], result_name="emulate.json")
    # Rank r runs in the namespace of the host its node is placed on (nodes of ppn ranks).
    table = out / "namespaces.txt"
    table.write_text("".join(f"{topo.namespace(hosts[r // ppn])}\n" for r in range(nodes * ppn)))
    wrapper = [
        "/bin/sh",
        "-c",
        'exec ip netns exec "$(sed -n "$((PMI_RANK + 1))p" "$0")" "$@"',
        str(table),
    ]
    with Stops() as stops:
        try:
            lane = e["priority"] and b["tcp_control_connection"]
            dscp = b["tcp_control_dscp"] if lane else 0
            cc = e["congestion_control"]
            acks = e["acks_first"]
            netns.create(topo, scale, e["queue"], e["mtu"], say, dscp, cc, acks)
            before = netns.counters(topo)
            if e["traffic"] == "steps":
                rows, pairs, stopped = measure_steps(scenario, stages, topo, scale, say)
            else:
                cpu_before = _cpu_times()
                measured = bench.run(
                    scenario,
                    out / "bench",
                    progress=lambda text: say(f"{text} (emulated, rates ÷ {scale:g})"),
                    wrapper=wrapper,
                    on_segments=lambda paths: netns.record_segments(topo, paths),
                    stops=stops,  # held there once the ranks are done, and on to the end
                    keep_earlier=False,  # kept with the emulation's own, above
                )
                # Its figures are the emulated fabric's: said in its own result, which
                # daqnet report reads (it showed 0.50 Gb/s beside a prediction of 509).
                busy = _busy_share(cpu_before, _cpu_times())
                measured.emulated = {"scale": scale, "result": str(out / "emulate.json")}
                write_tables(measured, out / "bench")
            stops.hold()
            after = netns.counters(topo)
        finally:
            stops.hold()
            say("tearing down")
            netns.teardown(prefix)
        if e["traffic"] == "steps":
            got = _routed(routing, {k: v[0] for k, v in pairs.items()}, len(topo.links))
            sent = _routed(routing, {k: v[1] for k, v in pairs.items()}, len(topo.links))
            links = _links(topo, before, after, got, sent)
            used = sorted({int(h) for h in placement.hosts[: stages[3].ranks]})
            doc = _steps_document(scenario, topo, scale, rows, stopped, links, used)
            stopped = stopped or stops.seen > 0
        else:
            # Ctrl-C in the measurement or after it: what was measured, with no prediction.
            predicted = None
            if not (measured["interrupted"] or stops.seen):  # none noted
                say("the protocol simulation")
                predicted = simulate_protocol(
                    _fabric_time(scenario, scale), stops.progress, stages=stages, as_bench=True
                )
                if predicted["interrupted"]:
                    predicted = None
            moved = _pair_bytes(measured, hosts, b["processes_per_node"])
            routed = _routed(routing, moved, len(topo.links))
            links = _links(topo, before, after, routed)
            doc = _document(scenario, topo, scale, measured, predicted, hosts, links)
            doc["machine_busy"] = busy
            stopped = measured["interrupted"] or stops.seen > 0
            doc["warnings"] = _warnings(measured, predicted, doc)
        doc["interrupted"] = stopped
        doc["fabric"] = fabric.describe()  # its hosts may be more than those used
        doc["config"] = scenario.effective()
        doc["out_dir"] = str(out)
        doc["provenance"] = provenance()
        (out / "emulate.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
        if not stopped and doc["measured"].get("status") in ("finished", "degraded"):
            discard_previous(out)
    return doc


def _fabric_time(scenario: Scenario, scale: float) -> Scenario:
    """The scenario whose prediction is the run measured: its `emulate.seconds` and warm-up
    at rates ÷ scale are that many seconds ÷ scale of the fabric's own time, and its
    bench.rate_hz events per emulated second as many times that per fabric second (it simulated
    emulate.seconds of fabric time: a thousand times the events, 11 s of CPU for 2 M)."""
    # A copy with its own values (not loaded again: a scenario made in Python has no file).
    out = copy.copy(scenario)
    out.values = copy.deepcopy(scenario.values)
    b = out.values["bench"]
    b["seconds"] /= scale
    b["warmup_seconds"] /= scale
    b["rate_hz"] *= scale  # paced in emulated seconds: scale times as many per fabric second
    return out


#: The share of this machine's CPU time in use during the run above which the measurement
#: is said to be perhaps the machine's limit rather than the fabric's.
BUSY_SHARE = 0.9
#: ... when the measurement reads below this share of the prediction.
LOW_RATIO = 0.8


def _warnings(measured: bench.BenchResult, predicted: Any, doc: dict[str, Any]) -> list[str]:
    """Why the comparison may mislead: the benchmark's and the prediction's own warnings
    (a short window, barrels in step), an interrupted run, and a machine that may not have
    kept up with the emulated rates (its CPUs busy all along)."""
    # The window's length is judged by short_window() against the predicted latency when
    # there is a prediction; the benchmark's keys are emulate's here.
    own = ("measurement window held only", "two halves differs")
    out = [
        f"measured: {_emulate_keys(w)}"
        for w in measured.warnings
        if predicted is None or not any(o in w for o in own)
    ]
    # The prediction's warm-up is the measured one ÷ scale: too short to end the barrels'
    # artificial lock-step, which `daqnet simulate` with a longer warm-up does.
    out += [
        "predicted: "
        + re.sub(
            r"give a longer \S+ until this warning goes",
            "daqnet simulate of this scenario with a longer bench.warmup_seconds predicts "
            "the long run",
            w,
        )
        for w in (predicted.warnings if predicted is not None else [])
    ]
    if measured.interrupted:
        out.append(
            "interrupted: the window ended early and the prediction was not made; a short "
            "window reads high or low by where it falls"
        )
    elif predicted is None:
        out.append("interrupted after the measurement: the prediction was not made")
    elif why := short_window(doc):
        out.append(why)
    # Ranks that poll keep their cores busy whatever the links do: a busy machine is only
    # a suspect beside a measurement well below the prediction (0.11 at emulate.scale = 20).
    busy, ratio = doc.get("machine_busy"), doc.get("ratio")
    if busy is not None and busy > BUSY_SHARE and ratio is not None and ratio < LOW_RATIO:
        out.append(
            f"the measurement reached {ratio:.2f} of the prediction while this machine's "
            f"{os.cpu_count() or 1} cores were {busy:.0%} busy (ranks, the kernel's shaping "
            "and anything else): it may not have kept up with the emulated links, the "
            "measurement then being its limit rather than the fabric's; a larger "
            f"emulate.scale (now {doc['scale']:g}) slows the links"
        )
    return out


def _emulate_keys(text: str) -> str:
    """A warning of daqnet bench or simulate, naming the keys that set this run's length."""
    return text.replace("bench.seconds", "emulate.seconds").replace(
        "bench.warmup_seconds", "emulate.warmup_seconds"
    )


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat; None where unreadable."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = sum(fields[3:5])  # idle, iowait
    return sum(fields) - idle, sum(fields)


def _busy_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def _settings(scenario: Scenario, scale: float) -> dict[str, Any]:
    e = scenario["emulate"]
    return {
        "scenario": scenario.name,
        "traffic": e["traffic"],
        "scale": scale,
        "queue": e["queue"],
        "congestion_control": e["congestion_control"],
        "acks_first": e["acks_first"],
    }


def _links(
    topo: Topology,
    before: dict[tuple[int, str], int],
    after: dict[tuple[int, str], int],
    routed: list[float],
    routed_max: list[float] | None = None,
) -> list[dict[str, Any]]:
    """Every directed link's bytes, counted by its interface, beside the routed bytes (and,
    when the flows' bytes are known only between two bounds, the upper one)."""
    rows = []
    for lk in topo.links:
        row = {
            "link": f"{topo.node_names[lk.node]}->{topo.node_names[lk.peer]}",
            "measured_bytes": after[(lk.node, lk.ifname)] - before[(lk.node, lk.ifname)],
            "predicted_bytes": routed[lk.link],
        }
        if routed_max is not None:
            row["predicted_max_bytes"] = routed_max[lk.link]
        rows.append(row)
    return rows


def _steps_document(
    scenario: Scenario,
    topo: Topology,
    scale: float,
    rows: list[dict[str, Any]],
    stopped: bool,
    links: list[dict[str, Any]],
    hosts: list[int],
) -> dict[str, Any]:
    """Plain TCP steps: per step the streams' total rate measured and max-min predicted;
    in total the mean over the steps (each step ran equally long)."""
    n = len(rows)
    measured = sum(r["measured_gbps"] for r in rows) / n if n else None
    predicted = sum(r["predicted_gbps"] for r in rows) / n if n else None
    flow_ratios = [r["min_flow_ratio"] for r in rows if r["min_flow_ratio"] is not None]
    return {
        **_settings(scenario, scale),
        "hosts": [topo.node_names[h] for h in hosts],
        "measured": {
            "status": "interrupted" if stopped else "finished",
            "throughput_gbps": measured,
            "steps": n,
        },
        "predicted": {"throughput_gbps": predicted, "model": "max-min fair rates"},
        "ratio": measured / predicted if measured and predicted else None,
        "min_step_ratio": min((r["ratio"] for r in rows if r["ratio"]), default=None),
        "min_flow_ratio": min(flow_ratios, default=None),
        # A dropped packet's bytes count on the links before the drop, its resent copy on
        # all of its path: many retransmits put links over their routed bytes.
        "retransmitted_segments": sum(r["retransmitted_segments"] for r in rows),
        "steps": rows,
        "links": links,
        # Ctrl-C mid-step: that step's bytes are on the links but were never counted.
        "paths_match": None if stopped else paths_match(links),
        "farthest_link": None if stopped else farthest_link(links),
    }


def _document(
    scenario: Scenario,
    topo: Topology,
    scale: float,
    measured: bench.BenchResult,
    predicted: Any,
    hosts: list[int],
    links: list[dict[str, Any]],
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
    # The benchmark counts the events built in its window, so a window of few event
    # latencies is off by where it falls; the simulation counts bytes as they arrive.
    latency = (predicted_doc or {}).get("latency_seconds", {}).get("p50")
    seconds = m.get("measured_seconds")
    window_latencies = seconds / (latency * scale) if latency and seconds else None
    # Stopped by a signal: the units counted bytes still queued when the fabric went.
    shares = bool(m["interrupted"])
    halves = window.halves_difference(
        m.get("timeseries") or [], m.get("warmup_seconds") or 0, seconds or 0
    )
    return {
        **_settings(scenario, scale),
        "hosts": [topo.node_names[h] for h in hosts],
        "measured": measured_doc,
        "predicted": predicted_doc,
        "ratio": ratio,
        "window_latencies": window_latencies,
        "halves_difference": halves,
        "links": links,
        # A run stopped with ranks killed before their last counters (a second and third
        # Ctrl-C) compares their earlier counters with the interfaces' final ones: no finding.
        "paths_match": None if m["interrupted"] and m["errors"] else paths_match(links, shares),
        "farthest_link": farthest_link(links, shares),
        "bench_dir": m.get("out_dir"),
    }


def short_window(doc: dict[str, Any]) -> str | None:
    """Why the measured throughput of this run is uncertain: its window held fewer than
    WINDOW_LATENCIES predicted event latencies, or its halves differ (bench/window.py);
    None otherwise."""
    n = doc.get("window_latencies")
    if n is None:
        return None
    latency = doc["predicted"]["latency_seconds"]["p50"] * doc["scale"]  # emulated seconds
    if why := window.short_window(n, latency, "emulate.seconds"):
        return f"{why} (emulated time)"
    return window.unsteady_window(doc.get("halves_difference"), "emulate.warmup_seconds")


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


def _bounds(links: list[dict[str, Any]], shares: bool) -> list[tuple[float, float]]:
    """Each link's (low, high) routed bytes; with `shares`, scaled to the measured total."""
    factor = 1.0
    if shares:
        routed = sum(r["predicted_bytes"] for r in links)
        factor = sum(r["measured_bytes"] for r in links) / routed if routed > 0 else 1.0
    out = []
    for r in links:
        low = r["predicted_bytes"] * factor
        out.append((low, max(low, r.get("predicted_max_bytes", r["predicted_bytes"]) * factor)))
    return out


def farthest_link(links: list[dict[str, Any]], shares: bool = False) -> dict[str, Any] | None:
    """Of the links outside :func:`paths_match`'s band, the one farthest beyond it (a
    lightly routed link's few acknowledgements, within the band, are no finding):
    {link, measured_bytes, routed_bytes, off}, `off` relative to the routed bytes (None for
    a link routed none), negative below; None when every link is within its band."""
    best: dict[str, Any] | None = None
    worst = 0.0
    for r, (low, high, lo, hi) in zip(links, _bands(links, shares), strict=True):
        m = r["measured_bytes"]
        if lo <= m <= hi:
            continue
        ref = low if m < low else high
        beyond = (lo - m if m < lo else m - hi) / max(hi - lo, 1.0)
        if best is None or beyond > worst:
            worst = beyond
            off = (m - ref) / ref if ref > 0 else None
            best = {"link": r["link"], "measured_bytes": m, "routed_bytes": ref, "off": off}
    return best


def _bands(links: list[dict[str, Any]], shares: bool) -> list[tuple[float, float, float, float]]:
    """Each link's routed bounds (low, high) and allowed (lowest, highest) measured bytes:
    the bounds widened by SHARE_TOLERANCE of them, or of a fair share of all bytes,
    whichever is more."""
    total = sum(r["measured_bytes"] for r in links)
    floor = total / max(1, len(links)) * SHARE_TOLERANCE
    return [
        (
            low,
            high,
            low - max(floor, SHARE_TOLERANCE * low),
            high + max(floor, SHARE_TOLERANCE * high),
        )
        for low, high in _bounds(links, shares)
    ]


def paths_match(links: list[dict[str, Any]], shares: bool = False) -> bool:
    """Whether every link carried its predicted share of the bytes (within the tolerance,
    and a link predicted idle next to nothing; between the two bounds when a link has
    ``predicted_max_bytes``). `shares`: the routed bytes scaled to the measured total first,
    for a run stopped with data still queued in its sockets (every link then reads a few %
    below its routed bytes: the units counted bytes the torn-down fabric never carried)."""
    if sum(r["measured_bytes"] for r in links) <= 0:
        return False
    return all(
        lo <= r["measured_bytes"] <= hi
        for r, (_, _, lo, hi) in zip(links, _bands(links, shares), strict=True)
    )
