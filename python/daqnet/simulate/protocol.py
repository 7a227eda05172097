"""Protocol mode: the event builder of ``[bench]`` (event-manager mode) over the fabric, over
time, with the benchmark's keys and result shape (docs/simulate.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _core
from ..bench.config import run_config, run_config_text, size_warning
from ..bench.window import pacing, rate_halves
from ..errors import DaqnetError
from ..fabric import Fabric
from ..placement import Placement
from ..routing import Routing
from ..scenario import Scenario
from .model import Progress, Stages, context, network_model, report
from .results import ProtocolResult, SolverStats

__all__ = [
    "STEADY_ROUNDS",
    "STEADY_TOLERANCE",
    "check_protocol",
    "protocol_run_length",
    "protocol_warnings",
    "simulate_protocol",
]

# A run is too short for steady state when its window holds fewer events than a round of
# every builder's credits (some builders then built nothing in it), or when the payload rate
# of the window's two halves differs by more than STEADY_TOLERANCE. The default window is
# STEADY_ROUNDS rounds, after a warm-up of one.
STEADY_ROUNDS = 2
STEADY_TOLERANCE = 0.10
# Below this relative spread of the window's latencies (p99 over p50) the builders' barrels
# are in step: 1.0002-1.0006 in step, 1.11-1.14 out of step on 18 and 72 nodes.
IN_STEP = 0.01
# Events under way at the window's edges count in part: a window this many event latencies
# long or more keeps that within a few percent (4 nodes, 1 credit: 4 latencies read 127.1
# or 133.3 Gb/s per node by where the window fell, against 133.0 in steady state). Only for
# the benchmark's run length, whose warm-up is in seconds: a window in events opens and
# closes as events are built, in the same phase of the pipeline.
WINDOW_LATENCIES = 10


def protocol_run_length(scenario: Scenario, nodes: int, as_bench: bool = False) -> dict[str, Any]:
    """How long the protocol simulation runs and when its measurement window opens.

    As the benchmark when the scenario gives ``bench.events`` or ``bench.seconds`` (warm-up
    ``bench.warmup_seconds``, in simulated time); otherwise ``simulate.events`` built after
    ``simulate.warmup_events`` (defaults: 2 rounds and 1 round of every builder's credits).
    `as_bench`: the command set the benchmark's run length itself (``daqnet emulate``
    predicts the run it measures), so the file's ``simulate.events`` and
    ``simulate.warmup_events``, meant for ``daqnet simulate``, are not this run's.
    """
    b, s = scenario["bench"], scenario["simulate"]
    src = scenario.source
    if b["events"] and b["seconds"]:
        raise DaqnetError(
            f"{src}: give bench.events or bench.seconds, not both (set the other to 0)"
        )
    if b["events"] or b["seconds"]:
        given = set() if as_bench else scenario.given
        clash = sorted({"simulate.events", "simulate.warmup_events"} & given)
        if clash:
            which = "bench.events" if b["events"] else "bench.seconds"
            raise DaqnetError(
                f"{src}: {which} and {' and '.join(clash)} both set the run length of the "
                "protocol simulation: keep one (docs/simulate.md)"
            )
        return {
            "from": "bench",
            "events": b["events"],
            "seconds": b["seconds"] if not b["events"] else 0.0,
            "warmup_events": 0,
            "warmup_seconds": b["warmup_seconds"],
        }
    # Both 0 with simulate.events given is a choice: a file's bench.seconds set to 0 with
    # --set hands the run length to simulate.events (it was refused, "leave both out").
    length = {"simulate.events", "simulate.warmup_events"} & scenario.given
    if {"bench.events", "bench.seconds"} & scenario.given and not length:
        raise DaqnetError(
            f"{src}: bench.events and bench.seconds are both 0: give one of them > 0 for the "
            "run length, or simulate.events"
        )
    rounds = nodes * b["credits"]
    return {
        "from": "simulate",
        "events": s["events"] if s["events"] is not None else STEADY_ROUNDS * rounds,
        "seconds": 0.0,
        "warmup_events": s["warmup_events"] if s["warmup_events"] is not None else rounds,
        "warmup_seconds": -1.0,
    }


def check_protocol(
    scenario: Scenario, placed: int, as_bench: bool = False
) -> tuple[int, dict[str, Any]]:
    """Every check of the protocol simulation that needs no run: (nodes, run description).

    Nodes are bench.ranks / processes_per_node if given, else every placed rank. The run
    description is daqnet bench's (same checks, bar whether the buffers fit this machine).
    `as_bench`: as for :func:`protocol_run_length`.
    """
    b = scenario["bench"]
    if b["mode"] != "event-manager":
        raise DaqnetError(
            f"{scenario.source}: bench.mode = {b['mode']!r}: the protocol simulation covers 'event-manager' mode"
        )
    tasks = scenario.tasks_per_node()
    if tasks > 1:  # the core said only "two nodes on host 0"
        raise DaqnetError(
            f"{scenario.source}: workload.tasks_per_node = {tasks}: the protocol simulation runs "
            "one event-builder node per host; set workload.tasks_per_node = 1 (bench.processes_per_node "
            "sets RU and BU processes per node)"
        )
    ppn = b["processes_per_node"]
    if b["ranks"] and b["ranks"] % ppn:  # as daqnet bench says it (this said "1 node(s)")
        raise DaqnetError(
            f"{scenario.source}: bench.ranks = {b['ranks']}: cannot be split into nodes of "
            f"{ppn} processes (one RU and one BU per node)"
        )
    nodes = b["ranks"] // ppn if b["ranks"] and ppn in (1, 2) else placed
    if nodes < 2:
        given = f"bench.ranks = {b['ranks']}" if b["ranks"] else f"{placed} placed rank(s)"
        raise DaqnetError(
            f"{scenario.source}: {given}: {nodes} node(s), and the protocol simulation needs at least 2"
        )
    if nodes > placed:
        raise DaqnetError(
            f"{scenario.source}: bench.ranks = {b['ranks']} needs {nodes} hosts but only {placed} are placed"
        )
    protocol_run_length(scenario, nodes, as_bench)
    return nodes, run_config(
        scenario, check_memory=False, ranks=b["ranks"] or nodes * ppn, run_length=False
    )


def simulate_protocol(
    scenario: Scenario,
    progress: Progress = None,
    full_recompute: bool = False,
    stages: Stages | None = None,
    as_bench: bool = False,
    per_ru_assignments: bool = False,
) -> ProtocolResult:
    """The event builder of ``[bench]`` (event-manager mode) over the fabric, over time.

    `full_recompute` re-solves every rate at every change instead of only what the change
    touches: the same result, slowly. `per_ru_assignments` queues the event manager's PUSH
    assignments as one message per readout unit, not one per class of RUs at equal delay: the
    same result, with credits × nodes² messages held at the start (what an RU holds stays a
    range of events, as with the classes). Both are baselines for
    tests and benchmarks. `as_bench`: the run length is the benchmark's, set by the calling
    command (:func:`protocol_run_length`).
    """
    fabric, routing, placement, _ = stages or scenario.build()
    nodes, cfg = check_protocol(scenario, placement.ranks, as_bench)
    run = protocol_run_length(scenario, nodes, as_bench)
    s = scenario["simulate"]
    model = network_model(scenario, routing)
    hosts = np.ascontiguousarray(placement.hosts[:nodes], dtype=np.int32)
    try:
        core = _core.simulate.simulate_protocol(
            model,
            hosts,
            run_config_text(cfg, scenario.source),
            scenario.source,
            run["events"],
            run["seconds"],
            run["warmup_events"],
            run["warmup_seconds"],
            s["local_gbps"],
            report(progress),
            full_recompute=full_recompute,
            per_ru_assignments=per_ru_assignments,
        )
    except ValueError as err:
        raise DaqnetError(f"{scenario.source}: {err}") from None
    # Every array once (each property access copies it out of the core).
    r = {name: getattr(core, name) for name in _CORE_FIELDS}
    return _protocol_document(scenario, fabric, routing, placement, nodes, run, r)


_CORE_FIELDS = [
    "event",
    "builder",
    "built_at",
    "latency",
    "bytes",
    "payload_at",
    "end_seconds",
    "window_start_seconds",
    "window_end_seconds",
    "first_in_window",
    "window_events",
    "window_payload_bytes",
    "window_network_payload_bytes",
    "partial_fragments",
    "partial_bytes",
    "ru_bytes_out",
    "bu_bytes_in",
    "ru_window_bytes_out",
    "bu_window_bytes_in",
    "ru_fragments_out",
    "bu_fragments_in",
    "link_bytes",
    "control_messages",
    "network_flows",
    "local_flows",
    "max_busy_slots",
    "max_gather_in_flight",
    "max_process_in_flight",
    "interrupted",
    "solver",
]


def _percentiles(values: np.ndarray) -> dict[str, Any]:
    if len(values) == 0:
        return {"p50": None, "p99": None, "max": None}
    return {
        "p50": float(np.percentile(values, 50)),
        "p99": float(np.percentile(values, 99)),
        "max": float(values.max()),
    }


def _steadiness(r: dict[str, Any]) -> float | None:
    """Relative difference of the network payload rate between the window's two halves.

    The payload delivered over the network is known at every event built in the window
    (parts of fragments still moving included), so the rate at the middle is interpolated
    between them. Builders' own fragments count as their events are built, in steps, and
    are left out: they move no link, and the network part is what settles or not.
    """
    t0, t1 = float(r["window_start_seconds"]), float(r["window_end_seconds"])
    if not 0 <= t0 < t1:
        return None
    first, count = int(r["first_in_window"]), int(r["window_events"])
    at, payload = r["built_at"][first : first + count], r["payload_at"][first : first + count]
    known = payload >= 0  # not known for events built at the instant a window edge was taken
    times = np.concatenate(([t0], at[known], [t1]))
    done = np.concatenate(([0.0], payload[known], [r["window_network_payload_bytes"]]))
    return rate_halves(times, done, t0, t1)


def _above(value: float, limit: float) -> str:
    """`value` as a percentage with the digits that show it above `limit` (10.4 % is not "10%")."""
    digits = 0
    while digits < 6 and float(f"{value * 100:.{digits}f}") <= limit * 100:
        digits += 1
    return f"{value:.{digits}%}"


def protocol_warnings(doc: Mapping[str, Any], run: dict[str, Any]) -> list[str]:
    """Why a result may not be the steady state (empty when it is)."""
    out = []
    rounds = doc["nodes"] * doc["credits"]
    keys = "bench.events or bench.seconds" if run["from"] == "bench" else "simulate.events"
    if doc["window_seconds"] <= 0 or doc["events_built"] == 0:
        return [f"no event was built in the measurement window: raise {keys}"]
    rate_hz = float(doc["config"]["values"]["bench"].get("rate_hz") or 0)
    behind, paced = pacing(
        rate_hz, doc["events_built"], doc["window_seconds"], doc["latency_seconds"]["p50"]
    )
    if behind:
        out.append(behind)
    short = doc["events_built"] < rounds and not paced
    if short:
        out.append(
            f"the measurement window holds {doc['events_built']:,} events, fewer than one round "
            f"of every builder's credits ({doc['nodes']} nodes × {doc['credits']} credits = "
            f"{rounds:,}): too short for steady state; raise {keys}"
        )
    if run["warmup_events"] == 0 and run["warmup_seconds"] <= 0:
        # Seen: 133.54 Gb/s per node on 4 nodes, above the 133.3 a node can build, against
        # 131.9 after a warm-up (while own fragments counted as copied, at the assignment).
        warmup = (
            "bench.warmup_seconds"
            if run["from"] == "bench"
            else f"simulate.warmup_events (default one round: {rounds:,})"
        )
        out.append(
            "no warm-up: the window opens as the run starts, so it holds the pipeline filling "
            f"and not the steady state alone; give {warmup}"
        )
    # Barrels still in step (docs/simulate.md): every event takes the same time. Gathers of
    # more than one step only; all-at-once ones (and barrels of nodes - 1 <= in_flight)
    # stay in step for good, at the same throughput.
    lat = doc["latency_seconds"]
    steps = doc["nodes"] - 1 > doc["in_flight"]
    if doc["schedule"] == "barrel" and steps and not short and lat["p50"] and lat["p99"]:
        spread = lat["p99"] / lat["p50"]
        if spread < 1 + IN_STEP:
            warmup = "bench.warmup_seconds" if run["from"] == "bench" else "simulate.warmup_events"
            out.append(
                f"every event of the window took the same time (p99 = {spread:.4f} × p50): the "
                "builders' barrels are still in step, as the simulation starts them together "
                "and no real event builder keeps them; out of step they share links, and the "
                "long run may read well below this window (18 nodes of examples/lhcb-540.toml: "
                "78.1 Gb/s per node over the network after 3,000 events, 99.0 in step): give a "
                f"longer {warmup} until this warning goes"
            )
    p50 = doc["latency_seconds"]["p50"]
    timed = run["from"] == "bench"
    if (
        timed
        and p50
        and not short
        and not behind
        and doc["window_seconds"] < WINDOW_LATENCIES * p50
    ):
        x = doc["window_seconds"] / p50
        out.append(
            f"the measurement window is {x:.1f} event latencies long (p50 {p50 * 1e3:.3f} ms): "
            f"events under way at its edges count in part, which can move the figures by up to "
            f"about {1 / x:.0%} with where the window falls; make it at least "
            f"{WINDOW_LATENCIES} latencies long ({keys})"
        )
    drift = doc["halves_difference"]
    if drift is not None and drift > STEADY_TOLERANCE and not short and not paced:
        out.append(
            f"the payload throughput of the window's two halves differs by {_above(drift, STEADY_TOLERANCE)} "
            f"(over {STEADY_TOLERANCE:.0%}): not yet steady; raise {keys}"
        )
    return out


def _protocol_document(
    scenario: Scenario,
    fabric: Fabric,
    routing: Routing,
    placement: Placement,
    nodes: int,
    run: dict[str, Any],
    r: dict[str, Any],
) -> ProtocolResult:
    b = scenario["bench"]
    t0, t1 = float(r["window_start_seconds"]), float(r["window_end_seconds"])
    window = t1 - t0 if t0 >= 0 and t1 >= t0 else 0.0
    first, count = int(r["first_in_window"]), int(r["window_events"])
    in_window = slice(first, first + count)
    payload = float(r["window_payload_bytes"])
    mean_event = float(r["bytes"][in_window].mean()) if count else 0.0
    end = float(r["end_seconds"])
    names = placement.host_names()

    # As daqnet bench's units.csv: counters over the whole run, rates and latency over the
    # measurement window (warm-up excluded, as in the totals).
    # Stopped in the warm-up: no rate was measured, in the totals as per unit (null in JSON,
    # empty in CSV; 0 would read as a measured rate, and NaN made result.json invalid JSON).
    def rate(x: float) -> float | None:
        return float(x) / window if window > 0 else None

    def gbps(x: float, per: int = 1) -> float | None:
        return float(x) / window * 8 / 1e9 / per if window > 0 else None

    bps = rate(payload)

    built_in_window = np.zeros(len(r["builder"]), dtype=bool)
    built_in_window[in_window] = True
    interrupted = bool(r["interrupted"])
    units = []
    for k in range(nodes):
        host = names[k]
        units.append(
            {
                "host": host,
                "unit": "ru",
                "index": k,
                "gbps_out": rate(r["ru_window_bytes_out"][k] * 8 / 1e9),
                "bytes_out": float(r["ru_bytes_out"][k]),
                "fragments_out": int(r["ru_fragments_out"][k]),
            }
        )
        mine = r["builder"] == k
        measured = mine & built_in_window
        units.append(
            {
                "host": host,
                "unit": "bu",
                "index": k,
                "gbps_in": rate(r["bu_window_bytes_in"][k] * 8 / 1e9),
                "bytes_in": float(r["bu_bytes_in"][k]),
                "fragments_in": int(r["bu_fragments_in"][k]),
                "events_built": int(mine.sum()),
                "built_bytes": float(r["bytes"][mine].sum()),
                "events_per_second": rate(measured.sum()),
                "latency_p50_seconds": _percentiles(r["latency"][measured])["p50"],
            }
        )
    where = context(scenario, fabric, routing, placement)
    if nodes < placement.ranks:  # bench.ranks runs the event builder on fewer hosts: say which
        where["placement"] += f"; the event builder's {nodes} nodes on the first {nodes}"
    doc = {
        **where,
        "mode": "protocol",
        "protocol": b["protocol"],
        "schedule": scenario["workload"]["schedule"],
        "nodes": nodes,
        "credits": b["credits"],
        "in_flight": b["in_flight"],
        "max_in_flight": b["max_in_flight"],
        "fragment_bytes": b["fragment_bytes"],
        "run_length_from": run["from"],
        "status": "interrupted" if interrupted else "finished",
        "interrupted": interrupted,
        "errors": [],
        "events_built": count,
        "events_total": len(r["built_at"]),
        # Under way when the window closed (the simulation stops there): for conservation.
        "partial_fragments": int(r["partial_fragments"]),
        "partial_bytes": float(r["partial_bytes"]),
        "warmup_seconds": t0 if t0 >= 0 else None,  # null: the window never opened
        "window_seconds": window,
        "measured_seconds": window,
        "total_seconds": end,
        "throughput_gbps": gbps(payload),
        "bytes_per_second": bps,
        "window_payload_bytes": payload,
        "gbps_per_host": gbps(payload, nodes),
        # The part that crossed the fabric: each node's own fragment stays in its host, so
        # gbps_per_host can exceed the link rate by a factor nodes / (nodes - 1).
        "network_gbps_per_host": gbps(r["window_network_payload_bytes"], nodes),
        "events_per_second": None if bps is None else (bps / mean_event if mean_event > 0 else 0.0),
        "latency_seconds": _percentiles(r["latency"][in_window]),
        "halves_difference": _steadiness(r),
        "lost_fragments": 0,
        "duplicate_fragments": 0,
        "corrupt_fragments": 0,
        "limits": {
            "max_busy_slots": int(r["max_busy_slots"]),
            "max_gather_in_flight": int(r["max_gather_in_flight"]),
            "max_process_in_flight": int(r["max_process_in_flight"]),
        },
        "flows": {
            "network": int(r["network_flows"]),
            "local": int(r["local_flows"]),
            "control_messages": int(r["control_messages"]),
        },
        "solver": SolverStats.of(r["solver"]),
        "units": units,
        "timeseries": _timeseries(r, scenario["simulate"]["timeseries_bins"], nodes),
        "links": _links(fabric, r["link_bytes"], end),
    }
    result = ProtocolResult(**doc)
    # An interrupted run's figures carry the same caveats (barrels in step, a short window);
    # one that built nothing says so by its interruption alone.
    sizes = size_warning(scenario)
    result.warnings = [
        *([sizes] if sizes else []),
        *([] if interrupted and not result.events_built else protocol_warnings(result, run)),
    ]
    return result


def _timeseries(r: dict[str, Any], bins: int, nodes: int) -> list[dict[str, Any]]:
    """Built-event Gb/s (in all and per node) and events/s per period, as daqnet bench's."""
    end = float(r["end_seconds"])
    if end <= 0:
        return []
    width = end / bins
    which = np.minimum((r["built_at"] / width).astype(np.int64), bins - 1)
    nbytes = np.bincount(which, weights=r["bytes"], minlength=bins)
    count = np.bincount(which, minlength=bins)
    return [
        {
            "period": i,
            "time_seconds": (i + 1) * width,
            "seconds": width,
            "throughput_gbps": float(nbytes[i]) * 8 / width / 1e9,
            "gbps_per_host": float(nbytes[i]) * 8 / width / 1e9 / nodes,
            "events_per_second": float(count[i]) / width,
            "built_bytes": float(nbytes[i]),
            "events": int(count[i]),
            "partial": False,
        }
        for i in range(bins)
    ]


def _links(fabric: Fabric, link_bytes: np.ndarray, seconds: float) -> list[dict[str, Any]]:
    """Mean utilization of every directed link over the run."""
    lt = fabric.links()
    names = fabric.node_names
    classes = fabric.link_class_names()
    klass = lt["class"]
    cap = lt["gbps"] * 1e9 / 8
    util = link_bytes / (cap * seconds) if seconds > 0 else np.zeros_like(link_bytes)
    return [
        {
            "link": i,
            "from": names[lt["src"][i]],
            "to": names[lt["dst"][i]],
            "class": classes[klass[i]],
            "bytes": float(link_bytes[i]),
            "utilization": float(util[i]),
        }
        for i in range(len(link_bytes))
    ]
