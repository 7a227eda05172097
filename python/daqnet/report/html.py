"""``daqnet report``: one self-contained HTML page from any mix of results.

The page holds, per result, the scenario it ran, where it was made (daqnet version, commit,
machine, date: the document's ``provenance``), its key numbers, tables and figures; and,
for every ``daqnet bench`` result whose scenario a ``daqnet simulate`` protocol-mode result
shares (:mod:`.pairing`), the measurement beside the prediction with their ratio.

This module turns documents into plain values for the template
(``templates/report.html.j2``, Jinja2, autoescaped); the figures are SVG images inside the
page (:mod:`.html_figures`), so it needs no network and no other file to be viewed. Every
number that comes straight from a document carries the document's path and its JSON key
(``data-source``, ``data-json``, ``data-scale``), which the tests use to check the page
against the files.
"""

from __future__ import annotations

import contextlib
import datetime
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from ..errors import DaqnetError
from ..io.files import write_text_atomic
from ..io.result_files import KINDS, ResultFile
from . import html_figures as figs
from .bench import baseline_name, per_receiving_node
from .format import count, in_flight
from .pairing import Pair, find_pairs, nodes_of_bench
from .repair import bound_phrase, candidate_label
from .simulate import protocol_extent

__all__ = ["Number", "build_page", "render_page", "write_report"]

_SCAN_ROWS = 200  # rows of a scan table on the page; the files have them all


@dataclass
class Number:
    """A number as shown: its text, unit, and (when it is a document's own value) where in
    the document it comes from, as a dotted key scaled by `scale` (1000 for ms)."""

    text: str
    unit: str = ""
    key: str | None = None
    scale: float = 1.0
    source: str | None = None  #: the document's path (set by the section or the comparison)


Cell = Number | str


@dataclass
class Table:
    title: str
    head: list[str]
    rows: list[list[Cell]]
    note: str = ""


@dataclass
class FigureView:
    name: str  #: what it shows, for tests and anchors
    title: str
    uri: str  #: SVG data URI
    caption: str = ""


@dataclass
class Section:
    id: str
    title: str
    kind: str
    path: str
    scenario: dict[str, Any]
    provenance: list[tuple[str, str]]
    summary: list[tuple[str, Cell]] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[FigureView] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  #: warnings: interrupted, incomplete, ...
    findings: list[str] = field(default_factory=list)  #: conclusions, as the command prints them


@dataclass
class Comparison:
    id: str
    title: str
    measured: str  #: path of the bench result
    predicted: str  #: path of the simulate result
    keys: list[tuple[str, str]]  #: compared scenario keys and their (common) values
    rows: list[tuple[str, Cell, Cell, str]]  #: label, measured, predicted, ratio text
    figures: list[FigureView] = field(default_factory=list)


# -- numbers -----------------------------------------------------------------------------


def _get(doc: Mapping[str, Any], key: str) -> Any:
    value: Any = doc
    for part in key.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def _series(label: str, d: Mapping[str, Any]) -> tuple[str, list[Mapping[str, Any]], float | None]:
    """A run's throughput line: (label, time-series rows, warm-up seconds). A run interrupted
    before its window opened is warm-up throughout: shaded so, and labelled so (its line read
    "measured" with nothing measured)."""
    rows = list(d.get("timeseries") or [])
    warmup = d.get("warmup_seconds")
    if warmup is None and d.get("interrupted"):
        ends = [r["time_seconds"] for r in rows if _is_num(r.get("time_seconds"))]
        warmup = max(ends, default=None)
        label += ": warm-up only, interrupted before the window opened"
    return label, rows, warmup


def _is_num(v: Any) -> TypeGuard[float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _fmt(value: Any, digits: int) -> str:
    if not _is_num(value) or value != value or value in (float("inf"), float("-inf")):
        return "n/a"
    return f"{value:,.{digits}f}"


def _num(
    doc: Mapping[str, Any], key: str, unit: str = "", digits: int = 2, scale: float = 1.0
) -> Number:
    """A document's own value at `key`, shown with `digits` decimals after `scale`."""
    value = _get(doc, key)
    text = _fmt(value * scale if _is_num(value) else value, digits)
    return Number(text, unit, key if text != "n/a" else None, scale)


def _calc(value: Any, unit: str = "", digits: int = 2) -> Number:
    """A value the page computes (not checked against a document key)."""
    return Number(_fmt(value, digits), unit)


def _ratio(measured: Any, predicted: Any) -> str:
    if _is_num(measured) and _is_num(predicted) and predicted:
        return f"{measured / predicted:.3f}×"
    return "n/a"


# -- scenario and provenance ---------------------------------------------------------------


def _toml(values: Mapping[str, Any]) -> str:
    """The effective scenario as TOML (keys without a value left out: TOML has no null)."""
    import tomli_w

    def strip(v: Any) -> Any:
        if isinstance(v, Mapping):
            return {k: strip(x) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [strip(x) for x in v if x is not None]
        return v

    try:
        return tomli_w.dumps(strip(values))
    except (TypeError, ValueError) as err:  # not TOML-able: show what it is
        return f"# cannot be written as TOML: {err}\n{values!r}"


def _read(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values without the keys their other values leave unread (a fat tree's PERCS link
    rates, listed as defaults beside no dragonfly key)."""
    from ..scenario import read_with

    return {
        section: {k: v for k, v in keys.items() if read_with(values, section, k)}
        if isinstance(keys, Mapping)
        else keys
        for section, keys in values.items()
    }


def _scenario(r: ResultFile) -> dict[str, Any]:
    doc = r.doc
    config = doc.get("config")
    if isinstance(config, Mapping) and isinstance(config.get("values"), Mapping):
        values = config["values"]
        out = {
            "name": values.get("name") or doc.get("name") or "",
            "file": config.get("file", ""),
            "set": list(config.get("set") or []),
            "description": str(values.get("description") or "").strip(),
            "toml": _toml(_read(values)),
            "what": "effective scenario (defaults filled in; keys only another fabric kind, "
            "engine or order reads left out)",
            "effective": "",
        }
        given = config.get("given")
        if isinstance(given, list):
            # What was given runs as a scenario; every default written out would not
            # (bench.events = 0 with bench.seconds = 0 is an error when given).
            kept = {
                k: {key: v for key, v in section.items() if f"{k}.{key}" in given}
                if isinstance(section, Mapping)
                else section
                for k, section in values.items()
                if not isinstance(section, Mapping) or any(g.startswith(f"{k}.") for g in given)
            }
            out.update(
                toml=_toml(kept),
                what="the scenario as given (its file and --set; runs as it is)",
                effective=out["toml"],
            )
        return out
    if r.kind == "bench":  # daqnet collect: the run description only
        return {
            "name": "",
            "file": "",
            "set": [],
            "description": "no scenario recorded (collected from a directory without scenario.json)",
            "toml": _toml(doc.get("run_config") or {}),
            "what": "run description daqnet-evb ran (run.cfg)",
            "effective": "",
        }
    # A result recording no scenario (an emulate.json older than its config): the template
    # reads every key.
    return {
        "name": "",
        "file": "",
        "set": [],
        "description": "",
        "toml": "",
        "what": "",
        "effective": "",
    }


def _provenance(r: ResultFile) -> list[tuple[str, str]]:
    p = r.doc.get("provenance")
    out: list[tuple[str, str]] = []
    if isinstance(p, Mapping):
        commit = str(p.get("commit", "unknown"))
        if p.get("commit_dirty"):
            commit += " (with uncommitted changes)"
        out += [
            ("date", str(p.get("date", "unknown"))),
            ("daqnet", str(p.get("daqnet_version", "unknown"))),
            ("commit", commit),
            (
                "machine",
                f"{p.get('host', 'unknown')}: {p.get('cpu', '?')}, {p.get('cores', '?')} cores",
            ),
            ("platform", f"{p.get('platform', '?')}, Python {p.get('python', '?')}"),
        ]
    else:
        when = datetime.datetime.fromtimestamp(r.path.stat().st_mtime, datetime.timezone.utc)
        out += [
            ("date", f"not recorded; file modified {when.isoformat(timespec='seconds')}"),
            ("daqnet", "not recorded (a result written before daqnet recorded its provenance)"),
        ]
    if r.kind == "bench":
        hosts = list(dict.fromkeys(str(u.get("host")) for u in r.doc.get("units", [])))
        if hosts:
            more = f" and {len(hosts) - 8} more" if len(hosts) > 8 else ""
            out.append(("ranks ran on", ", ".join(hosts[:8]) + more))
        if r.doc.get("mpi_library"):
            out.append(("MPI", " ".join(str(r.doc["mpi_library"]).split())))
    return out


# -- one section per kind -----------------------------------------------------------------


def _stages(doc: Mapping[str, Any]) -> list[tuple[str, Cell]]:
    return [(k, str(doc[k])) for k in ("fabric", "routing", "placement", "workload") if k in doc]


def _conflicts(s: Section, d: Mapping[str, Any]) -> None:
    # Each step against what its hosts' own links carry anyway (older documents: 1 per step).
    bound = d.get("sum_max_host_link_load", d["steps_done"])
    # As the terminal says: conflicts on the hosts' own links are no fault of the fabric
    # (taper-648: 5,400 conflicts, 3,888 of them there, at a slowdown of 1.000).
    on_hosts = d.get("host_link_conflicts") or 0
    s.summary += _stages(d)
    s.summary += [
        ("hosts", _num(d, "hosts", digits=0)),
        ("flows", _num(d, "total_flows", digits=0)),
        *(
            [("of which within a host", _num(d, "local_flows", "on no link", 0))]
            if d.get("local_flows")
            else []
        ),
        (
            "conflicts",
            _num(
                d, "total_conflicts", f"({on_hosts:,} on hosts' own links)" if on_hosts else "", 0
            ),
        ),
        ("steps with conflicts", _num(d, "steps_with_conflicts", f"of {d['steps_done']:,}", 0)),
        ("max link load", _num(d, "max_link_load", "flows", 0)),
        ("Σ max link load", _num(d, "sum_max_link_load", f"against {bound:,}", 0)),
    ]
    # Flow counts are times only with one link rate and one path per flow.
    if d.get("times_note"):
        s.notes.append(
            f"flow counts do not give step times here ({d['times_note']}): "
            "daqnet simulate times the steps"
        )
    else:
        s.summary.append(
            (
                "slowdown of equal-flow steps"
                + (", against the hosts' own links" if bound != d["steps_done"] else ""),
                _calc(d["sum_max_link_load"] / bound if bound else None, "×", 3),
            )
        )
    if d.get("interrupted"):
        s.notes.append(f"interrupted: {d['steps_done']:,} of {d['steps_total']:,} steps done")
    s.tables.append(
        Table(
            "load per link class",
            ["class", "links", "busy", "mean load", "max load", "conflicts"],
            [
                [
                    str(lv["class"]),
                    _num(d, f"levels.{i}.links", digits=0),
                    _num(d, f"levels.{i}.busy_fraction", "%", 1, 100),
                    _num(d, f"levels.{i}.mean_load", digits=3),
                    _num(d, f"levels.{i}.max_load", digits=0),
                    _num(d, f"levels.{i}.conflicts", digits=0),
                ]
                for i, lv in enumerate(d["levels"])
            ],
        )
    )
    if d["worst_links"]:
        s.tables.append(
            Table(
                "most conflicting links",
                ["link", "class", "flows", "conflicts", "in steps", "max load"],
                [
                    [
                        f"{w['from']}:{w['from_port']} → {w['to']}:{w['to_port']}",
                        str(w["class"]),
                        _num(d, f"worst_links.{i}.flows", digits=0),
                        _num(d, f"worst_links.{i}.conflicts", digits=0),
                        _num(d, f"worst_links.{i}.conflict_steps", digits=0),
                        _num(d, f"worst_links.{i}.max_load", digits=0),
                    ]
                    for i, w in enumerate(d["worst_links"])
                ],
            )
        )
    from .conflicts_plot import conflicts_figure

    steps = d["steps"]
    fig = conflicts_figure(
        [r["step"] for r in steps],
        [r["conflicts"] for r in steps],
        [r["max_link_load"] for r in steps],
        d["levels"],
        f"{d.get('workload', '')} — {d['total_conflicts']:,} conflicts",
        (d["steps_done"], d["steps_total"]) if d.get("interrupted") else None,
    )
    s.figures.append(
        FigureView(
            "conflicts",
            "conflicts per step and link-load distribution per class",
            figs.svg_data_uri(fig),
            "Top: conflicts (Σ over links of flows − 1) and the most flows on one link, per "
            "step. Bottom: how often a link of each class carried k flows in one step.",
        )
    )


def _simulate_steps(s: Section, d: Mapping[str, Any]) -> None:
    s.summary += _stages(d)
    s.summary.append(("message", _num(d, "message_bytes", "bytes", 0)))
    if d["steps_done"] == 0:  # stopped inside the first step: no figure to show
        s.notes.append("no step finished before the interrupt")
        s.summary.append(("steps", _num(d, "steps_done", f"of {d['steps_total']:,}", 0)))
        return
    s.summary.append(("total time", _num(d, "total_seconds", "ms", 3, 1e3)))
    if d.get("ideal_seconds") is not None:
        s.summary += [
            ("contention-free", _num(d, "ideal_seconds", "ms", 3, 1e3)),
            ("slowdown", _num(d, "slowdown", "×", 3)),
        ]
    s.summary.append(("per host", _num(d, "gbps_per_host", "Gb/s")))
    if d.get("ideal_gbps_per_host") is not None:
        s.summary.append(("per host, contention-free", _num(d, "ideal_gbps_per_host", "Gb/s")))
    s.summary.append(("steps", _num(d, "steps_done", f"of {d['steps_total']:,}", 0)))
    ebb = d.get("effective_bisection") or {}
    if ebb.get("gbps") is not None:  # a bisection workload: the ORCS / Netgauge figure
        s.summary += [
            (
                "effective bisection bandwidth",
                _num(d, "effective_bisection.gbps", "Gb/s per flow"),
            ),
            (
                "… of the rate on a contention-free fabric",
                _num(d, "effective_bisection.fraction", "%", 1, 100),
            ),
            ("… over random bisections", _num(d, "effective_bisection.rounds", "", 0)),
            ("slowest flow", _num(d, "effective_bisection.min_flow_gbps", "Gb/s")),
        ]
    if d.get("interrupted"):
        s.notes.append(f"interrupted: {d['steps_done']:,} of {d['steps_total']:,} steps done")
    rows = d.get("link_loads") or []
    if rows:
        s.tables.append(
            Table(
                "bytes per link, per link class",
                ["class", "links", "used", "mean", "median", "p99", "max", "busiest for"],
                [
                    [
                        str(r["class"]),
                        _num(d, f"link_loads.{i}.links", digits=0),
                        _num(d, f"link_loads.{i}.used", "%", 1, 100),
                        _num(d, f"link_loads.{i}.mean_bytes", "MB", 1, 1e-6),
                        _num(d, f"link_loads.{i}.median_bytes", "MB", 1, 1e-6),
                        _num(d, f"link_loads.{i}.p99_bytes", "MB", 1, 1e-6),
                        _num(d, f"link_loads.{i}.max_bytes", "MB", 1, 1e-6),
                        _num(d, f"link_loads.{i}.max_busy_seconds", "ms", 3, 1e3),
                    ]
                    for i, r in enumerate(rows)
                ],
            )
        )
    if d["steps"]:
        s.figures.append(
            FigureView(
                "step-times",
                "time of every step",
                figs.svg_data_uri(figs.step_times_figure(d["steps"])),
                "Each step's duration with max-min fair sharing of the links, and the same "
                "flows on a fabric without contention.",
            )
        )
    if rows:
        s.figures.append(
            FigureView(
                "link-loads",
                "link-load distribution per class",
                figs.svg_data_uri(figs.link_bytes_figure(rows)),
                "Bytes each directed link carried over all steps: median, mean, p99 and max "
                "over the links of each class.",
            )
        )


def _latency_numbers(d: Mapping[str, Any]) -> list[tuple[str, Cell]]:
    return [
        (f"latency {p}", _num(d, f"latency_seconds.{p}", "ms", 3, 1e3))
        for p in ("p50", "p99", "max")
    ]


def _simulate_protocol(s: Section, d: Mapping[str, Any]) -> None:
    s.summary += [(k, str(d[k])) for k in ("fabric", "routing", "placement") if k in d]
    s.summary += [
        (
            "protocol",
            f"{str(d['protocol']).upper()}, {d['schedule']} gathers, {d['nodes']} nodes, "
            f"{count(d['credits'], 'credit')}, {in_flight(d['schedule'], d['in_flight'])}",
        ),
        ("fragment", _num(d, "fragment_bytes", "bytes", 0)),
    ]
    # Stopped before the window opened: no rate was measured, and 0 Gb/s would read as one.
    if d["window_seconds"] > 0:
        s.summary += [
            ("throughput", _num(d, "throughput_gbps", "Gb/s")),
            ("per node", _num(d, "gbps_per_host", "Gb/s")),
            ("per node, over the network", _num(d, "network_gbps_per_host", "Gb/s")),
            ("events per second", _num(d, "events_per_second", "", 0)),
            *_latency_numbers(d),
        ]
    s.summary += [
        ("events measured", _num(d, "events_built", "", 0)),
        # Simulated windows are often a few ms: in s, a 0.252 ms warm-up read "0.000 s".
        ("window", _num(d, "window_seconds", "ms (simulated)", 3, scale=1e3)),
        ("warm-up", _num(d, "warmup_seconds", "ms", 3, scale=1e3)),
    ]
    if d.get("interrupted"):
        s.notes.append(f"interrupted: {protocol_extent(d)}")
    s.notes += [f"warning: {w}" for w in d.get("warnings", [])]
    s.notes += [f"error: {e}" for e in d.get("errors", [])]
    s.figures += [
        FigureView(
            "throughput",
            "throughput over time",
            figs.svg_data_uri(figs.throughput_figure([_series("predicted", d)])),
            # Not the payload as it arrives: 4 hosts gathering all at once read 8,782 Gb/s in
            # a 15 us bin, on a fabric of 527 Gb/s in all, under "payload delivered".
            "Bytes of the events built in each time bin of the simulation, as daqnet bench "
            "counts them: an event counts whole when its last fragment arrives, so bins "
            "holding few events read in bursts (simulate.timeseries_bins sets how many).",
        ),
    ]
    _add_latency(s, d, "predicted")
    if d["links"]:
        s.figures.append(
            FigureView(
                "link-loads",
                "link-load distribution per class",
                figs.svg_data_uri(figs.link_utilization_figure(d["links"])),
                "Mean utilization of every directed link over the run, by link class.",
            )
        )


def _rate_hz(d: Mapping[str, Any]) -> float:
    """bench.rate_hz of a result's scenario (0: no rate), where latency counts from an
    event's data rather than its assignment."""
    bench = ((d.get("config") or {}).get("values") or {}).get("bench") or {}
    # A run collected from a hand-written run.cfg has no scenario: its run description.
    return float(bench.get("rate_hz") or (d.get("run_config") or {}).get("rate_hz") or 0)


def _add_latency(s: Section, d: Mapping[str, Any], label: str) -> None:
    """The latency percentiles' figure, unless the run measured none (stopped in its
    warm-up: bars of 0 ms would read as a latency)."""
    if any(v is not None for v in d["latency_seconds"].values()):
        s.figures.append(
            FigureView(
                "latency",
                "event latency percentiles",
                figs.svg_data_uri(figs.latency_figure([(label, d["latency_seconds"])])),
                "From an event's assignment"
                + (" (under bench.rate_hz, from its data)" if _rate_hz(d) else "")
                + " to its last fragment at the builder, events of the measurement window.",
            )
        )


def _bench(s: Section, d: Mapping[str, Any]) -> None:
    nodes = nodes_of_bench(d)
    rc = d.get("run_config") or {}
    frames = d.get("mode") == "time-frames"
    # Per node is per builder, as scan's gbps_per_host: time-frames' receivers (it read
    # 3.15 Gb/s "(4 nodes)" of a run that scan put at 12.60 per host).
    builders = nodes
    if frames:
        with contextlib.suppress(TypeError, ValueError):
            builders = int(str(rc.get("receivers")))
    tp = d.get("throughput_gbps")
    s.summary += [
        ("status", str(d["status"])),
        ("ranks", _num(d, "ranks", f"transport {d.get('transport')}", 0)),
    ]
    if frames:
        # Senders push whole frames to receivers in turn: no event manager, no PUSH/PULL
        # choice, no gather order (it read "PUSH, barrel gathers, 2 credits, 8 in flight").
        senders, receivers = rc.get("senders", "?"), rc.get("receivers", "?")
        barrier = str(rc.get("barrier", "")).lower() in ("1", "true")
        s.summary.append(
            (
                "mode",
                f"time frames: {senders} sender{'s' if str(senders) != '1' else ''} → "
                f"{receivers} receiver{'s' if str(receivers) != '1' else ''} in turn, "
                + ("a barrier between frames" if barrier else "no barrier between frames"),
            )
        )
    elif "protocol" in d:
        s.summary.append(
            (
                "protocol",
                f"{str(d['protocol']).upper()}, {d.get('schedule')} gathers, "
                f"{d.get('credits')} credit{'s' if d.get('credits') != 1 else ''}, "
                f"{in_flight(d.get('schedule'), d.get('in_flight'))}",
            )
        )
    if "fragment_bytes" in d:
        s.summary.append(("fragment", _num(d, "fragment_bytes", "bytes", 0)))
    s.summary += [
        ("throughput", _num(d, "throughput_gbps", "Gb/s")),
        (
            "per node",
            _calc(
                tp / builders if _is_num(tp) and builders else None,
                f"Gb/s ({builders} receiving node{'s' if builders != 1 else ''})"
                if frames
                # against a link's rate: a node's own fragment never crosses it (N/(N-1) high)
                else f"Gb/s ({nodes} nodes; each node's own fragment included, not over the network)",
            ),
        ),
    ]
    if "events_per_second" in d:
        s.summary.append(("events per second", _num(d, "events_per_second", "", 0)))
    s.summary += _latency_numbers(d)
    s.summary.append(("events built", _num(d, "events_built", "", 0)))
    if "measured_seconds" in d:
        s.summary += [
            ("measured", _num(d, "measured_seconds", "s", 3)),
            ("warm-up", _num(d, "warmup_seconds", "s", 3)),
        ]
    s.summary.append(
        (
            "integrity",
            f"lost {d['lost_fragments']}, duplicate {d['duplicate_fragments']}, "
            f"corrupt {d['corrupt_fragments']}",
        )
    )
    if "baseline" in d:
        s.summary += [
            (
                f"baseline {baseline_name(d['baseline'])}",
                _num(d, "baseline.throughput_gbps", "Gb/s"),
            ),
            (
                "event builder / baseline" + per_receiving_node(d["baseline"]),
                _num(d, "baseline.ratio", "×", 3),
            ),
        ]
    emulated = d.get("emulated")
    if isinstance(emulated, Mapping):
        s.notes.append(
            f"measured over an emulated fabric, link rates ÷ {emulated.get('scale', '?'):g}: "
            "the rates and times here are the emulated ones (not the fabric's); "
            f"{emulated.get('result', 'emulate.json')} has them in the fabric's units, "
            "beside the prediction"
        )
    s.notes += [f"warning: {w}" for w in d.get("warnings", [])]
    s.notes += [f"error: {e}" for e in d.get("errors", [])]
    if d.get("timeseries"):
        s.figures.append(
            FigureView(
                "throughput",
                "throughput over time",
                figs.svg_data_uri(figs.throughput_figure([_series("measured", d)])),
                "Built-event payload per report period (bench.report_seconds), from the "
                "builders' rank-N.csv rows; partial periods (the ranks' last reports) are left "
                "out.",
            )
        )
    _add_latency(s, d, "measured")
    if any(u.get("unit") in ("ru", "bu") for u in d["units"]):
        s.figures.append(
            FigureView(
                "units",
                "Gb/s per unit",
                figs.svg_data_uri(figs.bench_units_figure(d["units"])),
                "What each readout unit sent and each builder unit received over the window.",
            )
        )


def _scan(s: Section, d: Mapping[str, Any]) -> None:
    from .format import cell
    from .scan_plot import layout_problem, scan_figure

    s.summary += [
        ("mode", str(d["mode"])),
        ("varied", " × ".join(f"{v['key']} ({len(v['values'])})" for v in d["vary"])),
        ("points", _num(d, "points_done", f"of {d['points_total']:,}", 0)),
        ("metric", f"{d['metric']} ({'higher' if d['higher_is_better'] else 'lower'} is better)"),
    ]
    if d.get("repeat"):  # a measured scan: daqnet bench runs per point, in runs.csv
        s.summary.append(("runs per point", f"{d['repeat']} (min, median, max in the table)"))
    best = d.get("best")
    if best:
        where = ", ".join(f"{v['key']}={cell(best[v['key']])}" for v in d["vary"])
        s.summary += [
            ("best", _num(d, f"best.{d['metric']}", f"at {where} (point {best['point']})", 4)),
        ]
        from .scan_caveats import ranking_note

        caveat = ranking_note(d)
        if caveat:
            s.notes.append(caveat)
    s.summary.append(("elapsed", _num(d, "elapsed_seconds", "s", 1)))
    if d.get("interrupted") or d.get("error"):
        s.notes.append(f"{d['status']}: {d.get('error') or ''}".rstrip(": "))
    s.tables.append(_points_table(d, {v["key"] for v in d["vary"]}, "scan"))
    problem = layout_problem([len(v["values"]) for v in d["vary"]])
    if problem is not None:
        s.notes.append(f"no figure: {problem}")
    elif d["rows"]:
        shape = "heat map" if len(d["vary"]) > 1 else "line"
        s.figures.append(
            FigureView(
                "scan",
                f"{d['metric']} over the scan ({shape})",
                figs.svg_data_uri(scan_figure(d)),
                "As daqnet scan draws it; the best point is marked.",
            )
        )


def _digits(v: float) -> int:
    """Decimals for a table cell: four significant digits below 1 (0.0001 s said little of
    107 µs), two above, none from 10,000 on or for whole thousands (bytes and prices in float
    columns read "4,000,000.00")."""
    if isinstance(v, int):
        return 0
    if v == 0 or not math.isfinite(v):  # 0 and NaN
        return 4
    if abs(v) >= 1e4 or (abs(v) >= 1e3 and v == int(v)):
        return 0
    if abs(v) >= 1:
        return 2
    return min(12, max(4, 3 - math.floor(math.log10(abs(v)))))


def _points_table(d: Mapping[str, Any], verbatim: set[str], name: str) -> Table:
    """The rows of a scan or study (the first _SCAN_ROWS), numbers from the document."""
    from .format import cell

    cols = list(d["columns"])
    rows: list[list[Cell]] = []
    for i, r in enumerate(d["rows"][:_SCAN_ROWS]):
        row: list[Cell] = []
        for c in cols:
            v = r.get(c)
            if c in verbatim or c == "point" or not _is_num(v):
                row.append(cell(v))
            else:
                row.append(_num(d, f"rows.{i}.{c}", digits=_digits(v)))
        rows.append(row)
    more = len(d["rows"]) - _SCAN_ROWS
    return Table(
        "points", cols, rows, f"{more:,} more rows in {name}.csv / {name}.json" if more > 0 else ""
    )


def _study(s: Section, d: Mapping[str, Any]) -> None:
    from .study import study_figure

    s.summary += [
        ("study", str(d["study"])),
        ("points", _num(d, "points_done", f"of {d['points_total']:,}", 0)),
    ]
    if d.get("interrupted"):
        s.notes.append("interrupted: the rows are the points that finished")
    s.findings += [str(f) for f in d["findings"]]
    # Varied scenario keys (routing.engine, ...) are shown as they are: dots split JSON keys.
    s.tables.append(_points_table(d, {c for c in d["columns"] if "." in c}, "study"))
    if d["rows"]:
        s.figures.append(
            FigureView(
                "study",
                "mapping against iteration time"
                if d["study"] == "mapping"
                else "slowdown against the full tree, and bytes per stage",
                figs.svg_data_uri(study_figure(d)),
                "As daqnet study draws it.",
            )
        )


def _repair(s: Section, d: Mapping[str, Any]) -> None:
    s.summary += [
        ("repair", str(d["what"])),
        ("method", str(d["method"])),
        ("fabric", str(d["fabric"])),
        ("routing", str(d["routing"])),
        ("workload", f"{d['workload']}, {d['message_bytes']:,.0f} bytes per flow"),
        ("conflicts before", _num(d, "conflicts_before", digits=0)),
        ("conflicts after", _num(d, "conflicts_after", digits=0)),
    ]
    if (phrase := bound_phrase(d, named=False)) is not None:
        s.summary.append(("lower bound", _num(d, "lower_bound", f"conflicts: {phrase}", 0)))
    s.summary += [
        ("time before", _num(d, "seconds_before", "ms", 3, 1e3)),
        ("time after", _num(d, "seconds_after", "ms", 3, 1e3)),
        ("speed-up", _num(d, "speedup", "×", 3)),
    ]
    if "steps_after" in d:
        s.summary += [
            ("steps before", _num(d, "steps_before", digits=0)),
            ("steps after", _num(d, "steps_after", digits=0)),
        ]
    if d.get("search"):
        s.summary += [
            ("swaps tried", _num(d, "search.moves", digits=0)),
            ("swaps kept", _num(d, "search.accepted", digits=0)),
        ]
    if d.get("nearest"):
        n = d["nearest"]
        s.summary.append(
            (
                "nearest without conflicts",
                _num(d, "nearest.seconds", f"ms on {n['ranks']:,} hosts (whole leaves)", 3, 1e3),
            )
        )
    if d.get("interrupted"):
        s.notes.append("interrupted: the best repair found so far")
    candidates = d.get("candidates") or []
    if candidates:
        # Schedules all have steps and times; orders have times only where one was
        # simulated (those with fewer conflicts than the given one).
        steps = any("steps" in c for c in candidates)
        timed = any("seconds" in c for c in candidates)
        head = [
            "candidate",
            "conflicts",
            *(["steps"] if steps else []),
            *(["time (ms)"] if timed else []),
        ]
        rows: list[list[Cell]] = []
        for i, c in enumerate(candidates):
            row: list[Cell] = [candidate_label(c), _num(d, f"candidates.{i}.conflicts", digits=0)]
            if steps:
                row.append(_num(d, f"candidates.{i}.steps", digits=0) if "steps" in c else "")
            if timed:
                row.append(
                    _num(d, f"candidates.{i}.seconds", digits=3, scale=1e3)
                    if "seconds" in c
                    else ""
                )
            rows.append(row)
        s.tables.append(Table("candidates", head, rows))
    if d.get("hosts"):
        hosts = d["hosts"]
        more = f" … ({len(hosts):,} in all)" if len(hosts) > 16 else ""
        s.summary.append(("rank order", " ".join(hosts[:16]) + more))
    launch = d.get("launch") or {}
    if launch:
        s.tables.append(
            Table("run it with", ["with", "command"], [[k, v] for k, v in launch.items()])
        )


def _maybe(
    doc: Mapping[str, Any], key: str, unit: str = "", digits: int = 2, scale: float = 1.0
) -> Number:
    """As _num, "n/a" where the document has no such value (no prediction after Ctrl-C)."""
    try:
        return _num(doc, key, unit, digits, scale)
    except (KeyError, TypeError, IndexError):
        return Number("n/a", unit)


def _emulate(s: Section, d: Mapping[str, Any]) -> None:
    """daqnet emulate: its measurement and prediction, both in the fabric's own units."""
    steps = d["traffic"] == "steps"
    s.summary += [
        ("traffic", "plain TCP steps" if steps else "the event builder over TCP"),
        (
            "emulated",
            f"{d.get('fabric') or str(len(d['hosts'])) + ' hosts'}, link rates ÷ {d['scale']:g}, "
            f"{d['queue']} queues, {d.get('congestion_control', '?')}; "
            f"{'the streams' if steps else 'the event builder'} on {len(d['hosts'])} hosts",
        ),
        ("measured", str(d["measured"]["status"])),
        ("measured / predicted", _maybe(d, "ratio", "× (throughput)", 3)),
    ]
    match = d["paths_match"]
    far = d.get("farthest_link") or {}
    links = (
        "not compared (interrupted)"
        if match is None
        else "took the predicted links"
        if match
        else "did NOT take the predicted links"
        + (
            ""
            if not far
            else f"; farthest: {far['link']}, routed none"
            if far.get("off") is None
            else f"; farthest: {far['link']}, {abs(far['off']):.0%} "
            f"{'below' if far['off'] < 0 else 'above'} its routed bytes"
        )
    )
    s.summary.append(("traffic on the links", links))
    if steps:
        rows: list[list[Cell]] = [
            [
                str(r["step"]),
                _num(d, f"steps.{i}.flows", digits=0),
                _maybe(d, f"steps.{i}.measured_gbps", digits=1),
                _maybe(d, f"steps.{i}.predicted_gbps", digits=1),
                _maybe(d, f"steps.{i}.ratio", digits=3),
            ]
            for i, r in enumerate(d["steps"])
        ]
        head = ["step", "flows", "measured Gb/s", "max-min Gb/s", "ratio"]
        s.tables.append(Table("steps", head, rows))
    else:
        m, p = d["measured"], d.get("predicted") or {}

        def row(label: str, key: str, unit: str, digits: int, scale: float = 1.0) -> list[Cell]:
            a = _maybe(d, f"measured.{key}", unit, digits, scale)
            b = _maybe(d, f"predicted.{key}", unit, digits, scale)
            try:
                ratio = _ratio(_get(m, key), _get(p, key))
            except (KeyError, TypeError, IndexError):
                ratio = "n/a"
            return [label, a, b, ratio]

        s.tables.append(
            Table(
                "measured and predicted, in the fabric's units",
                ["", "measured", "predicted", "measured / predicted"],
                [
                    row("throughput", "throughput_gbps", "Gb/s", 2),
                    row("events per second", "events_per_second", "", 0),
                    *(
                        row(f"latency {q}", f"latency_seconds.{q}", "ms", 3, 1e3)
                        for q in ("p50", "p99", "max")
                    ),
                ],
                "Built-event payload of all builders; the measurement's rates times "
                f"{d['scale']:g}, its times divided by it. The benchmark run itself, in "
                "the emulated units, is in bench_dir.",
            )
        )
        s.summary += [
            ("window", _maybe(d, "window_latencies", "predicted event latencies", 1)),
            (
                "integrity",
                f"lost {m['lost_fragments']}, duplicate {m['duplicate_fragments']}, "
                f"corrupt {m['corrupt_fragments']}",
            ),
        ]
        s.notes += [f"error: {e}" for e in m.get("errors", [])]
    s.tables.append(
        Table(
            "bytes per directed link",
            ["link", "measured", "routed", "measured / routed"],
            [
                [
                    str(r["link"]),
                    _num(d, f"links.{i}.measured_bytes", "bytes", 0),
                    _num(d, f"links.{i}.predicted_bytes", "bytes", 0),
                    _ratio(r["measured_bytes"], r["predicted_bytes"]),
                ]
                for i, r in enumerate(d["links"])
            ],
            "Counted by each link's interface, against the measured host-to-host bytes "
            "routed over the routing's paths.",
        )
    )
    s.notes += [f"warning: {w}" for w in d.get("warnings", [])]


def _plan(s: Section, d: Mapping[str, Any]) -> None:
    from .plan import fabric_keys, plan_notes, plan_table

    s.summary += [
        ("hosts", _num(d, "hosts", digits=0)),
        ("link rate", _num(d, "gbps", "Gb/s", 0)),
        ("switch radix", _num(d, "radix", "ports", 0)),
    ]
    (_, tapers), *rows = plan_table(d)
    s.tables.append(
        Table(
            "one fat tree per taper",
            ["", *tapers],
            [[label.strip(), *values] for label, values in rows],
        )
    )
    s.findings += plan_notes(d)
    s.findings += [
        f"{c['taper']} as a scenario's [fabric]: {fabric_keys(c)}"
        for c in d["candidates"]
        if "fabric" in c
    ]


_SECTIONS: dict[str, Callable[[Section, Mapping[str, Any]], None]] = {
    "conflicts": _conflicts,
    "simulate-steps": _simulate_steps,
    "simulate-protocol": _simulate_protocol,
    "bench": _bench,
    "scan": _scan,
    "study": _study,
    "repair": _repair,
    "emulate": _emulate,
    "plan": _plan,
}

_BAD_CONTENT = (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError)


def _section(index: int, r: ResultFile) -> Section:
    s = Section(
        id=f"result-{index}",
        title=r.title,
        kind=KINDS[r.kind],
        path=str(r.path),
        scenario=_scenario(r),
        provenance=_provenance(r),
    )
    try:
        _SECTIONS[r.kind](s, r.doc)
    except _BAD_CONTENT as err:
        raise DaqnetError(
            f"{r.path}: not a complete {KINDS[r.kind]} result ({type(err).__name__}: {err})"
        ) from None
    for value in _cells(s):
        value.source = str(r.path)
    return s


def _cells(s: Section) -> list[Number]:
    out = [c for _, c in s.summary if isinstance(c, Number)]
    out += [c for t in s.tables for row in t.rows for c in row if isinstance(c, Number)]
    return out


# -- prediction beside measurement ------------------------------------------------------------


def _where(path: str) -> str:
    """A result's directory, or its file name when it lies in the current directory (a
    --json saved as pulltcp.json read "( beside predicted)")."""
    p = Path(path)
    return p.parent.name if p.parent.name else p.name


def _comparison(index: int, pair: Pair) -> Comparison:
    m, p = pair.measured.doc, pair.predicted.doc
    nodes = nodes_of_bench(m)
    mp, pp = str(pair.measured.path), str(pair.predicted.path)

    def row(label: str, unit: str, key: str, digits: int = 2, scale: float = 1.0) -> Any:
        a, b = _num(m, key, unit, digits, scale), _num(p, key, unit, digits, scale)
        a.source, b.source = mp, pp
        return (label, a, b, _ratio(_get(m, key), _get(p, key)))

    tp = m.get("throughput_gbps")
    per_node = Number(_fmt(tp / nodes if _is_num(tp) and nodes else None, 2), "Gb/s")
    predicted_node = _num(p, "gbps_per_host", "Gb/s")
    predicted_node.source = pp
    rows = [
        row("throughput", "Gb/s", "throughput_gbps"),
        (
            f"per node ({nodes} nodes)",
            per_node,
            predicted_node,
            _ratio(tp / nodes if _is_num(tp) and nodes else None, p.get("gbps_per_host")),
        ),
        row("events per second", "", "events_per_second", 0),
        *(row(f"latency {q}", "ms", f"latency_seconds.{q}", 3, 1e3) for q in ("p50", "p99", "max")),
    ]
    values = p["config"]["values"]
    keys = [(k, repr(values[k.split(".")[0]][k.split(".")[1]])) for k in pair.keys]
    figures = [
        FigureView(
            "throughput",
            "Gb/s per node over time, measured and predicted",
            figs.svg_data_uri(
                figs.throughput_figure(
                    [
                        _series("measured (daqnet bench)", m),
                        _series("predicted (daqnet simulate)", p),
                    ],
                    per_node=nodes,
                )
            ),
            "Throughput per node: the benchmark's report periods, the simulation's time bins.",
        ),
        FigureView(
            "latency",
            "event latency, measured and predicted",
            figs.svg_data_uri(
                figs.latency_figure(
                    [("measured", m["latency_seconds"]), ("predicted", p["latency_seconds"])]
                )
            ),
        ),
    ]
    name = values.get("name") or pair.predicted.path.parent.name
    return Comparison(f"pair-{index}", str(name), mp, pp, keys, rows, figures)


# -- the page ---------------------------------------------------------------------------------


def _shown(value: Any) -> str:
    """A scenario value as the page names it ("not set" for a key left to its default)."""
    return "not set" if value is None else repr(value)


def build_page(results: list[ResultFile]) -> dict[str, Any]:
    """Everything the template shows, as plain values."""
    from .. import __version__
    from ..provenance import provenance

    pairs, near = find_pairs(results)
    comparisons = []
    for i, pair in enumerate(pairs):
        try:
            comparisons.append(_comparison(i, pair))
        except _BAD_CONTENT as err:
            raise DaqnetError(
                f"{pair.measured.path} beside {pair.predicted.path}: incomplete results "
                f"({type(err).__name__}: {err})"
            ) from None
    near_misses = [
        {
            "measured": str(n.measured.path),
            "predicted": str(n.predicted.path),
            "differences": [(k, _shown(a), _shown(b)) for k, a, b in n.differences],
        }
        for n in near
    ]
    # Two pairs of one scenario name were two entries "bench-local" in the contents.
    named: dict[str, int] = {}
    for c in comparisons:
        named[c.title] = named.get(c.title, 0) + 1
    for c in comparisons:
        if named[c.title] > 1:
            c.title = f"{c.title} ({_where(c.measured)} beside {_where(c.predicted)})"
    sections = [_section(i, r) for i, r in enumerate(results)]
    made = provenance()
    return {
        "title": "daqnet report",
        "version": __version__,
        "made": made,
        "sections": sections,
        "comparisons": comparisons,
        "near_misses": near_misses,
        # Measurements without a prediction of the same scenario among the inputs.
        "unpaired": [
            str(r.path)
            for r in results
            if r.kind == "bench"
            and not r.doc.get("emulated")  # compared in its emulate.json
            and all(p.measured is not r for p in pairs)
        ],
    }


def render_page(page: Mapping[str, Any]) -> str:
    """The HTML text of the page (Jinja2, every value escaped)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("daqnet.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.tests["number"] = lambda v: isinstance(v, Number)
    return env.get_template("report.html.j2").render(**page)


def write_report(results: list[ResultFile], out: str | Path) -> Path:
    """Render the page of `results` into `out` (atomically)."""
    out = Path(out)
    if not out.name:
        raise DaqnetError(f"-o {out}: give a file name, e.g. report.html")
    if not out.parent.is_dir():
        raise DaqnetError(f"-o {out}: directory {out.parent} does not exist")
    text = render_page(build_page(results))
    try:
        write_text_atomic(out, text)
    except OSError as err:
        raise DaqnetError(f"-o {out}: cannot write: {err.strerror}") from None
    return out
