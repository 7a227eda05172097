"""A scan's plan: every point of the cartesian product of the varied values, each loaded and
checked before anything runs, so a bad value stops the scan with one line naming the point
and the key (see docs/scan.md)."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import USER_ERRORS, DaqnetError
from ..scenario import Axis, Scenario, parse_set, parse_vary
from ..scenario.overrides import shown
from .metrics import MEASURED_MODES, METRICS, metric_column

__all__ = ["Plan", "Point", "ScanRequest", "make_plan"]


@dataclass(frozen=True)
class ScanRequest:
    """What a scan is asked to do, however it is started (command line or Python)."""

    scenario: str
    vary: list[str]
    overrides: list[str] = field(default_factory=list)
    metric: str = "gbps_per_host"
    jobs: int | None = None  # points at once per machine (per MPI rank); None: the cores
    out: str | None = None  # output directory; None: a new scan-NAME
    plot: str | None = None  # figure path; None: OUT/scan.png
    bench: bool = False  # measure every point with daqnet bench (one after another)
    predict: bool = False  # with bench: also the protocol simulation of every point
    repeat: int = 1  # runs of daqnet bench per point
    table_format: str = "csv"  # scan.csv or scan.parquet (daqnet.tables)


@dataclass(frozen=True)
class Point:
    index: int
    values: tuple[Any, ...]
    label: str  # "key=value, key=value", for messages
    scenario: Scenario
    #: mode compare: the scenario of the point's protocol simulation (simulate.mode =
    #: protocol, bench.ranks = the ranks daqnet bench runs)
    predict: Scenario | None = None


@dataclass
class Plan:
    source: str
    name: str
    mode: str  #: steps or protocol (simulated), bench (measured), compare (both)
    metric: str  #: the column the best point is chosen by
    overrides: list[str]
    axes: list[Axis]
    points: list[Point]
    #: The base scenario's effective configuration (before the varied keys).
    config: dict[str, Any] = field(default_factory=dict)
    #: --set keys the scan ignores (key_use.unused), said before it runs.
    warnings: list[str] = field(default_factory=list)
    #: runs of daqnet bench per point (measured modes)
    repeat: int = 1

    @property
    def measured(self) -> bool:
        """Whether the points run the real event builder (one after another)."""
        return self.mode in MEASURED_MODES


def _label(axes: list[Axis], texts: tuple[str, ...]) -> str:
    return ", ".join(f"{a.key}={t}" for a, t in zip(axes, texts, strict=True))


def _scan_mode(base: Scenario, bench: bool, predict: bool, repeat: int) -> str:
    if predict and not bench:
        raise DaqnetError("predict: the prediction sits beside a measurement; give bench as well")
    if repeat < 1:
        raise DaqnetError(f"repeat {repeat}: runs per point must be at least 1")
    if repeat > 1 and not bench:
        raise DaqnetError(
            f"repeat {repeat}: simulations give the same row every time; repeat is for bench"
        )
    if not bench:
        return str(base["simulate"]["mode"])
    return "compare" if predict else "bench"


def make_plan(
    path: str,
    vary: list[str],
    overrides: list[str],
    metric: str = "gbps_per_host",
    *,
    bench: bool = False,
    predict: bool = False,
    repeat: int = 1,
) -> Plan:
    """Parse and check everything; every point's scenario loaded and built. DaqnetError if not.

    `bench`: every point is measured with daqnet bench, `repeat` times; `predict`: each also
    gets the protocol simulation of the same scenario (mode compare).
    """
    if not vary:
        raise DaqnetError("vary: give at least one section.key=value1,value2,...")
    axes = [parse_vary(item) for item in vary]
    seen: set[str] = set()
    for a in axes:
        if a.key in seen:
            raise DaqnetError(f"vary {a.key} is given twice; list all its values at once")
        seen.add(a.key)
    for item in overrides:
        section, key, _ = parse_set(item)
        if f"{section}.{key}" in seen:
            raise DaqnetError(f"set {shown(item)}: {section}.{key} is also varied")
    base = Scenario.load(path, overrides)
    mode = _scan_mode(base, bench, predict, repeat)
    metric = metric_column(mode, metric)
    if metric not in METRICS[mode] or metric == "warning":
        what = f"simulate.mode = '{mode}'" if mode in ("steps", "protocol") else f"a {mode} scan"
        choices = [m for m in METRICS[mode] if m != "warning"]
        raise DaqnetError(
            f"metric {metric}: not a metric of {what} (choose from {', '.join(choices)})"
        )
    points = []
    for index, combo in enumerate(itertools.product(*(range(len(a.values)) for a in axes))):
        texts = tuple(a.texts[i] for a, i in zip(axes, combo, strict=True))
        label = _label(axes, texts)
        sets = [f"{a.key}={t}" for a, t in zip(axes, texts, strict=True)]
        try:
            scenario = Scenario.load(path, [*overrides, *sets])
        except DaqnetError as err:
            raise DaqnetError(f"point {index} ({label}): {err}") from None
        values = tuple(a.values[i] for a, i in zip(axes, combo, strict=True))
        predicted = None
        if mode == "compare":
            predicted = _prediction(path, [*overrides, *sets], scenario, f"point {index} ({label})")
        points.append(Point(index, values, label, scenario, predicted))
    if mode in MEASURED_MODES:
        _preflight_bench(points)
        if mode == "compare":
            _preflight([p.predict or p.scenario for p in points], points)
    else:
        _preflight([p.scenario for p in points], points)
    warnings = _ignored_keys(axes, base, points, mode)
    return Plan(
        str(path),
        base.name,
        mode,
        metric,
        list(overrides),
        axes,
        points,
        config=base.effective(),
        warnings=warnings,
        repeat=repeat,
    )


def _prediction(path: str, sets: list[str], scenario: Scenario, where: str) -> Scenario:
    """The protocol simulation of a measured point: the same scenario in protocol mode, on
    the ranks daqnet bench runs (the simulation's default is every placed host)."""
    from ..bench import bench_ranks

    extra = ["simulate.mode=protocol"]
    if not scenario["bench"]["ranks"]:
        extra.append(f"bench.ranks={bench_ranks(scenario)}")
    given = {item.partition("=")[0].strip() for item in sets}
    if "simulate.mode" in given and scenario["simulate"]["mode"] != "protocol":
        raise DaqnetError(
            f"{where}: simulate.mode = '{scenario['simulate']['mode']}': the prediction beside a measurement is the protocol simulation"
        )
    try:
        return Scenario.load(path, [*sets, *extra])
    except DaqnetError as err:
        raise DaqnetError(f"{where}: {err}") from None


def _ignored_keys(axes: list[Axis], base: Scenario, points: list[Point], mode: str) -> list[str]:
    """Refuse a --vary key that no point reads (identical rows, a meaningless "best");
    return warnings for --set keys the scan ignores."""
    from ..scenario.key_use import unused

    def why(s: Scenario, key: str, p: Point | None = None) -> str | None:
        if mode not in MEASURED_MODES:
            return unused(s, "scan", key)
        measured = unused(s, "bench", key)
        if mode == "bench" or measured is None:
            return measured
        predicted = unused(p.predict if p and p.predict else s, "scan", key)
        return None if predicted is None else measured

    warnings = []
    for a in axes:
        reasons = [why(p.scenario, a.key, p) for p in points]
        if all(reasons):
            if len(a.values) > 1:
                raise DaqnetError(
                    f"vary {a.key}: {reasons[0]}; every point would give the same row"
                )
            warnings.append(f"vary {a.key}: {reasons[0]}")
    return warnings + [
        f"set {key}: {reason}"
        for key in sorted(base.overridden)
        if (reason := why(base, key, points[0] if points else None))
    ]


def _preflight_bench(points: list[Point]) -> None:
    """daqnet bench's own checks of every measured point (run.cfg as it would be written,
    buffers that must fit this machine), before the first run starts."""
    from ..bench import run_config

    for p in points:
        try:
            run_config(p.scenario)
        except USER_ERRORS as err:
            raise DaqnetError(f"point {p.index} ({p.label}): {err}") from None


def _preflight(scenarios: list[Scenario], points: list[Point]) -> None:
    """Build each distinct fabric/routing/placement/workload once, and make the checks the
    protocol simulation makes before it runs (simulate.py), so that e.g. an odd fabric.radix
    or too many bench.ranks stop the scan before it starts."""
    from ..simulate import check_protocol

    placed: dict[str, int] = {}  # ranks placed, per distinct set of stages
    for s, p in zip(scenarios, points, strict=True):
        try:
            stages = json.dumps(
                [s[k] for k in ("fabric", "routing", "placement", "workload")], sort_keys=True
            )
            if stages not in placed:
                placed[stages] = s.build()[2].ranks
            if s["simulate"]["mode"] != "protocol":
                continue
            check_protocol(s, placed[stages])
        except USER_ERRORS as err:
            raise DaqnetError(f"point {p.index} ({p.label}): {err}") from None
