"""The study grids: points built like a scan's (every point's scenario loaded and checked
before anything runs), run as a scan's are (in worker processes, one per core), rows kept
when Ctrl-C stops the study."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import DaqnetError
from ..io.previous import keep_if_interrupted
from ..plan import DEFAULT_PRICES, candidate, hosts_per_leaf
from ..provenance import provenance
from ..scan.collector import default_out
from ..scan.local import LocalRunner, check_main_guard, point_errors
from ..scan.plan import Point, make_plan
from ..scenario import Scenario
from ..scenario.overrides import parse_set, shown
from ..simulate import simulate_steps
from ..stops import writing
from ..threads import available_cores
from .result import StudyResult

__all__ = ["mapping_study", "taper_study"]

MiB = 1 << 20
#: pattern → (workload keys): the SC'11 grid's patterns and message sizes.
#: Study times this close (relative) are one result: the best mapping is named only apart.
TIED = 1e-3
MAPPING_PATTERNS: dict[str, list[str]] = {
    "stencil2d": ["workload.kind=stencil2d", f"workload.message_bytes={2 * MiB}"],
    "stencil4d": ["workload.kind=stencil4d", f"workload.message_bytes={2 * MiB}"],
    "multicast": [
        "workload.kind=multicast",
        "workload.targets=14",
        f"workload.message_bytes={MiB}",
    ],
}
MAPPING_VARY = [
    "routing.engine=direct,indirect",
    "placement.order=default,blocked-node,blocked-drawer,blocked-supernode,random-node,random-drawer",
]
TAPER_PATTERNS: dict[str, list[str]] = {
    "stencil2d": ["workload.kind=stencil2d", "placement.order=default"],
    "bisection": ["workload.kind=bisection", "workload.rounds=4", "placement.order=default"],
    "all-to-all": ["workload.kind=all-to-all", "placement.order=default"],
}

Progress = Callable[[int, int], object] | None


def _refuse_set(overrides: list[str], keys: dict[str, str]) -> None:
    """A --set of a key the study sets itself (key → why) is refused: it was overridden
    silently, and study.json recorded the user's value as the one that ran."""
    for item in overrides:
        section, key, _ = parse_set(item)
        why = keys.get(f"{section}.{key}")
        if why:
            raise DaqnetError(f"set {shown(item)}: {why}")


def _points(
    path: str, overrides: list[str], groups: dict[str, list[str]], vary: list[str]
) -> list[tuple[str, Point]]:
    out = []
    for label, sets in groups.items():
        # The pattern's keys first: the user's --set (a message size, the multicast's
        # targets) goes over them, and is what runs.
        try:
            plan = make_plan(path, vary, [*sets, *overrides], "total_seconds")
        except DaqnetError as err:
            keys = ", ".join(s for s in sets if not s.startswith("workload.kind="))
            raise DaqnetError(f"pattern {label} ({keys}; --set goes over these): {err}") from None
        out += [(label, p) for p in plan.points]
    return out


def _row(point: Point, threads: int, key: str, labels: tuple[str, ...]) -> dict[str, Any]:
    """A point's row (also run in pool workers, one thread each)."""
    with point_errors(point):
        r = simulate_steps(point.scenario, threads=threads)
    if r.interrupted:
        raise KeyboardInterrupt
    row: dict[str, Any] = {key: labels[point.index]}
    row.update(
        {a.split("=")[0]: v for a, v in zip(point.label.split(", "), point.values, strict=True)}
    )
    row.update(
        total_seconds=r.total_seconds,
        ideal_seconds=r.ideal_seconds,
        slowdown=r.slowdown,
        gbps_per_host=r.gbps_per_host,
    )
    # Classes whose busiest links take as long (within TIED) are named together: LR at
    # 5 GB/s and D at 10 GB/s tie exactly on some PERCS mappings, and max() named one.
    top = max((c["max_busy_seconds"] for c in r.link_loads), default=None)
    row["bottleneck_class"] = (
        "/".join(c["class"] for c in r.link_loads if c["max_busy_seconds"] >= top * (1 - TIED))
        if top
        else None
    )
    for c in r.link_loads:
        row[f"{c['class']}:max_bytes"] = c["max_bytes"]
        row[f"{c['class']}:mean_bytes"] = c["mean_bytes"]
    if r.effective_bisection:
        row["ebb_fraction"] = r.effective_bisection["fraction"]
    return row


def _run(
    study: str,
    path: str,
    overrides: list[str],
    labelled: list[tuple[str, Point]],
    key: str,
    progress: Progress,
    jobs: int | None,
    extra: Callable[[dict[str, Any]], None] = lambda row: None,
) -> tuple[StudyResult, list[dict[str, Any]]]:
    base = Scenario.load(path, overrides)
    # Numbered across the groups (each group's plan numbers its own from 0), for the order
    # of the rows whatever order the workers finish in.
    points = [replace(p, index=i) for i, (_, p) in enumerate(labelled)]
    labels = tuple(label for label, _ in labelled)
    jobs = jobs or available_cores()
    if jobs > 1 and len(points) > 1:
        check_main_guard(f"{study}_study")
    runner: LocalRunner | None = None
    done: dict[int, dict[str, Any]] = {}
    interrupted = False

    def completed(row: dict[str, Any]) -> dict[str, Any]:
        row = dict(row)  # the runner's stays as it came, should salvage() give it again
        extra(row)
        return row

    try:
        if progress:
            progress(0, len(points))
        runner = LocalRunner(points, jobs, partial(_row, key=key, labels=labels))
        while not runner.done:
            for index, row in runner.poll(0.5):
                done[index] = completed(row)
                if progress:
                    progress(len(done), len(points))
    except KeyboardInterrupt:
        # None: interrupted as its pool started (LocalRunner closed it)
        salvaged = runner.salvage() if runner is not None else []
        if runner is not None:
            runner.close()  # first: a second Ctrl-C below must not leave the pool running
        for index, row in salvaged:
            if index not in done:  # a row stored as the Ctrl-C came is given again
                done[index] = completed(row)
        interrupted = True
    except BaseException:
        if runner is not None:
            runner.close()
        raise
    # A Ctrl-C from here on (the pool closing, provenance() running `uname -p`) lost the rows.
    with writing():
        if not interrupted:
            assert runner is not None
            runner.close(kill=False)
        rows = [done[i] for i in sorted(done)]
        columns: list[str] = []
        for row in rows:
            columns += [c for c in row if c not in columns]
        doc = StudyResult(
            study=study,
            scenario=path,
            name=base.name,
            config=base.effective(),
            points_total=len(points),
            points_done=len(rows),
            interrupted=interrupted,
            columns=columns,
            rows=rows,
            provenance=provenance(),
        )
    return doc, rows


def _steps_only(scenario: Scenario, path: str) -> None:
    """Studies compare step times: a scenario in protocol mode is refused by name (it failed
    on "metric total_seconds: not a metric of simulate.mode = 'protocol'")."""
    if scenario["simulate"]["mode"] != "steps":
        raise DaqnetError(
            f"{path}: daqnet study simulates steps (simulate.mode = 'steps'), and "
            f"simulate.mode is '{scenario['simulate']['mode']}' here"
        )


def mapping_study(
    path: str,
    overrides: list[str] = (),  # type: ignore[assignment]
    progress: Progress = None,
    jobs: int | None = None,
) -> StudyResult:
    """Every mapping × {direct, indirect} × {2-D stencil, 4-D stencil, multicast}; points
    run `jobs` at once in worker processes (None: every core)."""
    overrides = list(overrides)
    scenario = Scenario.load(path, overrides)
    kind = scenario["fabric"]["kind"]
    _steps_only(scenario, path)
    if kind not in ("percs", "dragonfly"):
        raise DaqnetError(
            f"{path}: study mapping needs a direct network (fabric.kind = percs or dragonfly), not {kind!r}"
        )
    varied = "the mapping study varies it"
    _refuse_set(
        overrides,
        {
            "workload.kind": "the mapping study runs each of its patterns",
            "placement.order": varied,
            "routing.engine": varied,
        },
    )
    # Half its points route through a third group: with fewer groups the study stopped at
    # its first indirect point, minutes in, with nothing written.
    groups = scenario.build_fabric()._core.num_groups
    if groups < 3:
        raise DaqnetError(
            f"{path}: study mapping compares direct with indirect (Valiant) routing, which goes "
            f"through a group other than the source's and the destination's, and this network "
            f"has {groups} group{'s' if groups != 1 else ''}: give 3 or more "
            f"({'fabric.supernodes' if kind == 'percs' else 'fabric.g'})"
        )
    points = _points(path, overrides, MAPPING_PATTERNS, MAPPING_VARY)
    doc, rows = _run("mapping", path, overrides, points, "pattern", progress, jobs)
    for pattern in MAPPING_PATTERNS:
        mine = [r for r in rows if r["pattern"] == pattern]
        if not mine:
            continue
        best = min(mine, key=lambda r: r["total_seconds"])
        worst = max(mine, key=lambda r: r["total_seconds"])
        default = next(
            (
                r
                for r in mine
                if r["placement.order"] == "default" and r["routing.engine"] == "direct"
            ),
            None,
        )
        # Mappings within TIED of the best are the best too: 13.4221728 against 13.4222728 ms
        # was "best blocked-drawer", default 1.0x the best.
        tied = [r for r in mine if r["total_seconds"] <= best["total_seconds"] * (1 + TIED)]
        names = ", ".join(f"{r['placement.order']} with {r['routing.engine']}" for r in tied)
        lead = (
            f"best {best['placement.order']} with {best['routing.engine']} routing"
            if len(tied) == 1
            else f"best, within {TIED:.1%} of each other: {names} routing"
        )
        text = (
            f"{pattern}: {lead} "
            f"({best['total_seconds'] * 1e3:.2f} ms, bottleneck {best['bottleneck_class']}); worst "
            f"{worst['placement.order']} with {worst['routing.engine']} "
            f"({worst['total_seconds'] * 1e3:.2f} ms, bottleneck {worst['bottleneck_class']})"
        )
        if default:
            text += (
                f"; default+direct {default['total_seconds'] / best['total_seconds']:.1f}× the best"
            )
        doc.findings.append(text)
    return doc


def taper_study(
    path: str,
    overrides: list[str] = (),  # type: ignore[assignment]
    tapers: list[str] | None = None,
    progress: Progress = None,
    jobs: int | None = None,
) -> StudyResult:
    """Full and tapered trees × {stencil, random bisections, all-to-all}: slowdown against
    the first taper, per-stage loads, switches and cables from the planner; points run
    `jobs` at once in worker processes (None: every core)."""
    overrides = list(overrides)
    base = Scenario.load(path, overrides)
    f = base["fabric"]
    _steps_only(base, path)
    if f["kind"] != "fat-tree":
        raise DaqnetError(f"{path}: study taper needs fabric.kind = fat-tree, not {f['kind']!r}")
    given = "the taper study sets it for each taper (give them with --taper)"
    _refuse_set(
        overrides,
        {
            "workload.kind": "the taper study runs each of its patterns",
            "fabric.taper": given,
            "fabric.hosts_per_leaf": given,
        },
    )
    defaults = not tapers
    tapers = tapers or ["1:1", "2:1"]
    twice = sorted({t for t in tapers if tapers.count(t) > 1})
    if twice:  # "1:1 against 1:1 ... 0% fewer switches" compared a tree with itself
        raise DaqnetError(f"--taper {twice[0]} is given twice: give each ratio once")
    radix, hosts = f["radix"], f["hosts"]
    groups: dict[str, list[str]] = {}
    for t in tapers:
        try:
            per_leaf = hosts_per_leaf(radix, t)
        except DaqnetError as err:
            if not defaults:
                raise
            raise DaqnetError(
                f"{err}; {t} is one of the study's default tapers (1:1 and 2:1): "
                "give the ratios to compare with --taper"
            ) from None
        taper_list = f'["{t}"]' if f["levels"] == 2 else f'["{t}","1:1"]'
        tree = [f"fabric.taper={taper_list}", f"fabric.hosts_per_leaf={per_leaf}"]
        # This taper's tree, built now: its errors and the scenario's (fabric.hosts = -5 was
        # reported as the next taper's) before a taper the radix cannot split.
        try:
            Scenario.load(path, [*tree, *overrides]).build_fabric()
        except DaqnetError as err:
            # The study's own --set items are the user's --taper, not a --set they gave.
            raise DaqnetError(
                re.sub(r"^set fabric\.(taper|hosts_per_leaf)=\S+: ", f"--taper {t}: ", str(err))
            ) from None
        for pattern, sets in TAPER_PATTERNS.items():
            groups[f"{t}|{pattern}"] = [*sets, *tree]
    points = [(label, p) for label, sets in groups.items() for p in _single(path, overrides, sets)]
    # The trees simulated: as many levels as the scenario's (a 3-level tree was costed as
    # the 2-level one the planner would choose for as many hosts), and its spine radix.
    costs = {
        t: candidate(
            hosts, f["link_gbps"], radix, t, dict(DEFAULT_PRICES), f["levels"], f["spine_radix"]
        )
        for t in tapers
    }

    def extra(row: dict[str, Any]) -> None:
        taper, _, pattern = row.pop("taper").partition("|")
        row["taper"], row["pattern"] = taper, pattern
        c = costs[taper]
        row["switches"] = c["switches_total"]
        row["switch_cables"] = c["cables"]["optical"]
        row["cost"] = c["cost"]

    doc, rows = _run("taper", path, overrides, points, "taper", progress, jobs, extra)
    first = tapers[0]
    for row in rows:
        ref = next(
            (r for r in rows if r["taper"] == first and r["pattern"] == row["pattern"]), None
        )
        row[f"slowdown_vs_{first}"] = row["total_seconds"] / ref["total_seconds"] if ref else None
    head = ["taper", "pattern", f"slowdown_vs_{first}"]
    doc.columns = head + [c for c in doc.columns if c not in head and c != "workload.kind"]
    for row in rows:
        row.pop("workload.kind", None)
    ebb = {r["taper"]: r["ebb_fraction"] for r in rows if r.get("ebb_fraction") is not None}
    if ebb:
        doc.findings.append(
            "effective bisection bandwidth (mean max-min rate of random bisections, as a share "
            "of a flow's rate on a contention-free fabric): "
            + ", ".join(f"{t} {v:.0%}" for t, v in ebb.items())
        )
    for t in tapers[1:]:
        c0, c1 = costs[first], costs[t]
        parts = [
            f"{r['pattern']} ×{r[f'slowdown_vs_{first}']:.2f}"
            for r in rows
            if r["taper"] == t and r[f"slowdown_vs_{first}"] is not None
        ]
        # An interrupted study may hold no pattern run on both trees.
        times = f"{', '.join(parts)} as long" if parts else "no pattern simulated on both"
        doc.findings.append(
            f"{t} against {first}: {times}; "
            f"{1 - c1['switches_total'] / c0['switches_total']:.0%} fewer switches, "
            f"{1 - c1['cables']['optical'] / max(1, c0['cables']['optical']):.0%} fewer switch-to-switch cables, "
            f"bisection {c1['bisection_fraction']:.0%} of full"
        )
    return doc


def _single(path: str, overrides: list[str], sets: list[str]) -> list[Point]:
    # A scan plan needs one --vary: vary the workload kind over its one value. The user's
    # --set goes over the pattern's keys (see _points).
    kind = next(s for s in sets if s.startswith("workload.kind="))
    rest = [s for s in sets if s != kind]
    return make_plan(path, [kind], [*rest, *overrides], "total_seconds").points


#: What a study writes: an earlier study's are removed first, so that a figure the new one
#: could not draw (Ctrl-C while drawing) is not left beside its tables.
FILES = ("study.csv", "study.json", "study.parquet", "study.png")


def out_dir(study: str, name: str, out: str | None, interrupted: bool = False) -> Path:
    """--out, or study-KIND-NAME, numbered -2, -3, ... as scan's: a rerun without --out
    replaced the earlier study's results without a word. An `interrupted` study keeps a
    complete earlier one in OUT/previous/ (io.previous)."""
    if out is not None and not out:
        raise DaqnetError("output directory: empty directory name")
    d = Path(out) if out else default_out(name, f"study-{study}")
    try:
        d.mkdir(parents=True, exist_ok=True)
        keep_if_interrupted(d, "study", interrupted, FILES, result_name="study.json")
        for file in FILES:
            (d / file).unlink(missing_ok=True)
    except OSError as err:
        raise DaqnetError(f"{d}: cannot create the output directory: {err.strerror}") from None
    return d
