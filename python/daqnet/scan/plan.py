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
from .metrics import METRICS

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


@dataclass(frozen=True)
class Point:
    index: int
    values: tuple[Any, ...]
    label: str  # "key=value, key=value", for messages
    scenario: Scenario


@dataclass
class Plan:
    source: str
    name: str
    mode: str
    metric: str
    overrides: list[str]
    axes: list[Axis]
    points: list[Point]
    #: The base scenario's effective configuration (before the varied keys).
    config: dict[str, Any] = field(default_factory=dict)
    #: --set keys the scan ignores (key_use.unused), said before it runs.
    warnings: list[str] = field(default_factory=list)


def _label(axes: list[Axis], texts: tuple[str, ...]) -> str:
    return ", ".join(f"{a.key}={t}" for a, t in zip(axes, texts, strict=True))


def make_plan(
    path: str, vary: list[str], overrides: list[str], metric: str = "gbps_per_host"
) -> Plan:
    """Parse and check everything; every point's scenario loaded and built. DaqnetError if not."""
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
    mode = base["simulate"]["mode"]
    if metric not in METRICS[mode]:
        raise DaqnetError(
            f"metric {metric}: not a metric of simulate.mode = '{mode}' (choose from {', '.join(METRICS[mode])})"
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
        points.append(Point(index, values, label, scenario))
    _preflight(points)
    warnings = _ignored_keys(axes, base, points)
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
    )


def _ignored_keys(axes: list[Axis], base: Scenario, points: list[Point]) -> list[str]:
    """Refuse a --vary key that no point reads (identical rows, a meaningless "best");
    return warnings for --set keys the scan ignores."""
    from ..scenario.key_use import unused

    warnings = []
    for a in axes:
        reasons = [unused(p.scenario, "scan", a.key) for p in points]
        if all(reasons):
            if len(a.values) > 1:
                raise DaqnetError(
                    f"vary {a.key}: {reasons[0]}; every point would give the same row"
                )
            warnings.append(f"vary {a.key}: {reasons[0]}")
    return warnings + [
        f"set {key}: {why}" for key in sorted(base.overridden) if (why := unused(base, "scan", key))
    ]


def _preflight(points: list[Point]) -> None:
    """Build each distinct fabric/routing/placement/workload once, and make the checks the
    protocol simulation makes before it runs (simulate.py), so that e.g. an odd fabric.radix
    or too many bench.ranks stop the scan before it starts."""
    from ..simulate import check_protocol

    placed: dict[str, int] = {}  # ranks placed, per distinct set of stages
    for p in points:
        s = p.scenario
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
