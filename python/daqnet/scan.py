"""``daqnet scan``: ``daqnet simulate`` over every combination of chosen scenario values.

A scan is planned in full before anything runs: every ``--vary`` key is checked against the
scenario schema and every point is loaded with :meth:`Scenario.load` and built, so a bad
value stops the scan with one line naming the point and the key. Points run in a process
pool on this machine (``--jobs``), or spread over MPI ranks when the command itself was
started by ``mpiexec``/``srun`` (:mod:`daqnet.scan_mpi`). Each finished point is one row of a
tidy table (:mod:`daqnet.scan_output`); ``scan.csv`` and ``scan.json`` are rewritten as rows
arrive, so a long scan never loses finished rows. See docs/scan.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import queue
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import USER_ERRORS, DaqnetError
from .scan_output import METRICS, Collector, check_plot, finish, prepare_out
from .scenario import SCHEMA, Scenario, parse_set

__all__ = [
    "Axis",
    "LocalRunner",
    "Plan",
    "Point",
    "available_cores",
    "make_plan",
    "parse_vary",
    "run_local",
    "run_point",
    "run_scan",
    "scan_command",
]


def available_cores() -> int:
    """Cores this process may run on (its affinity mask, e.g. under srun or taskset)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# -- what to vary -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Axis:
    """One ``--vary`` key: its values as parsed (TOML) and as typed (for ``--set``)."""

    key: str
    values: tuple[Any, ...]
    texts: tuple[str, ...]


def _split_values(text: str) -> list[str]:
    """Split at commas outside brackets, braces and quotes: ``[1,2],[3]`` is two values."""
    items, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1  # skip the escaped character
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unmatched '{c}'")
        elif c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
        i += 1
    if quote:
        raise ValueError(f"unclosed {quote}")
    if depth:
        raise ValueError("unclosed '[' or '{'")
    items.append(text[start:])
    return [item.strip() for item in items]


def parse_vary(item: str) -> Axis:
    """``section.key=v1,v2,...``: values read like ``--set`` values (TOML, else a bare word)."""
    where = f"--vary {item}"
    if "=" not in item:
        raise DaqnetError(f"{where}: expected section.key=value1,value2,...")
    path, text = item.split("=", 1)
    key = path.strip()
    parts = key.split(".")
    if len(parts) != 2 or not all(parts):
        raise DaqnetError(
            f"{where}: expected section.key=value1,value2,... (e.g. fabric.taper=1:1,2:1)"
        )
    section, name = parts
    if section not in SCHEMA:
        raise DaqnetError(f"{where}: unknown section '{section}' (known: {', '.join(SCHEMA)})")
    if name not in SCHEMA[section]:
        raise DaqnetError(f"{where}: unknown key '{key}' (known: {', '.join(SCHEMA[section])})")
    if key == "simulate.mode":
        raise DaqnetError(
            f"{where}: the two modes give different metrics; run one scan per mode (--set simulate.mode=...)"
        )
    if not text.strip():
        raise DaqnetError(f"{where}: no values (give value1,value2,...)")
    try:
        texts = _split_values(text)
    except ValueError as err:
        raise DaqnetError(f"{where}: {err}") from None
    values: list[Any] = []
    for n, t in enumerate(texts, 1):
        if not t:
            raise DaqnetError(f"{where}: value {n} is empty")
        value = parse_set(f"{key}={t}")[2]
        if value in values:
            raise DaqnetError(f"{where}: value {t} is given twice")
        values.append(value)
    return Axis(key, tuple(values), tuple(texts))


# -- the plan ---------------------------------------------------------------------------------
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
    config: dict = field(default_factory=dict)
    #: --set keys the scan ignores (key_use.unused), said before it runs.
    warnings: list[str] = field(default_factory=list)


def _label(axes: list[Axis], texts: tuple[str, ...]) -> str:
    return ", ".join(f"{a.key}={t}" for a, t in zip(axes, texts, strict=True))


def make_plan(
    path: str, vary: list[str], overrides: list[str], metric: str = "gbps_per_host"
) -> Plan:
    """Parse and check everything; every point's scenario loaded and built. DaqnetError if not."""
    if not vary:
        raise DaqnetError("give at least one --vary section.key=value1,value2,...")
    axes = [parse_vary(item) for item in vary]
    seen: set[str] = set()
    for a in axes:
        if a.key in seen:
            raise DaqnetError(f"--vary {a.key} is given twice; list all its values in one --vary")
        seen.add(a.key)
    for item in overrides:
        section, key, _ = parse_set(item)
        if f"{section}.{key}" in seen:
            raise DaqnetError(f"--set {item}: {section}.{key} is also varied by --vary")
    base = Scenario.load(path, overrides)
    mode = base["simulate"]["mode"]
    if metric not in METRICS[mode]:
        raise DaqnetError(
            f"--metric {metric}: not a metric of simulate.mode = '{mode}' (choose from {', '.join(METRICS[mode])})"
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
    from .key_use import unused

    warnings = []
    for a in axes:
        reasons = [unused(p.scenario, "scan", a.key) for p in points]
        if all(reasons):
            if len(a.values) > 1:
                raise DaqnetError(
                    f"--vary {a.key}: {reasons[0]}; every point would give the same row"
                )
            warnings.append(f"--vary {a.key}: {reasons[0]}")
    return warnings + [
        f"--set {key}: {why}"
        for key in sorted(base.overridden)
        if (why := unused(base, "scan", key))
    ]


def _preflight(points: list[Point]) -> None:
    """Build each distinct fabric/routing/placement/workload once, and make the checks the
    protocol simulation makes before it runs (simulate.py), so that e.g. an odd fabric.radix
    or too many bench.ranks stop the scan before it starts."""
    from .simulate import check_protocol

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


# -- running points ---------------------------------------------------------------------------
def run_point(point: Point) -> dict:
    """One point's row: the varied values and the mode's metrics (also run in pool workers)."""
    from .simulate import simulate

    try:
        r = simulate(point.scenario)
    except USER_ERRORS as err:
        # A plain DaqnetError pickles back from a worker; the core's errors may not.
        raise DaqnetError(f"point {point.index} ({point.label}): {err}") from None
    if r["interrupted"]:  # Ctrl-C inside the core: the point did not finish
        raise KeyboardInterrupt
    if r["mode"] == "protocol":
        lat = r["latency_seconds"]
        r = {**r, **{f"latency_{k}_seconds": lat[k] for k in ("p50", "p99", "max")}}
        r["warning"] = "; ".join(r["warnings"])
    return {m: r[m] for m in METRICS[r["mode"]]}


def _worker_init() -> None:
    # Ctrl-C reaches the whole terminal process group; the parent alone decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Children started in here inherit SIGINT ignored, even before they run any Python."""
    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to protect
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


class LocalRunner:
    """Runs points in this process (one job) or in a pool of worker processes."""

    def __init__(self, points: list[Point], jobs: int):
        self.todo = deque(points)
        self.pending: dict[Future, Point] = {}
        # Futures land here as they finish: O(1) per point, however many are pending.
        self.finished: queue.SimpleQueue[Future] = queue.SimpleQueue()
        self.pool: ProcessPoolExecutor | None = None
        if jobs > 1 and len(points) > 1:
            # spawn: workers do not inherit MPI state, threads or locks of this process.
            ctx = multiprocessing.get_context("spawn")
            with _sigint_ignored():
                self.pool = ProcessPoolExecutor(
                    min(jobs, len(points)), mp_context=ctx, initializer=_worker_init
                )
                for p in points:
                    f = self.pool.submit(run_point, p)
                    self.pending[f] = p
                    f.add_done_callback(self.finished.put)
            self.todo.clear()

    @property
    def done(self) -> bool:
        return not self.todo and not self.pending

    def poll(self, timeout: float) -> list[tuple[int, dict]]:
        """Rows finished since the last call (waits up to `timeout` in pool mode)."""
        if self.pool is None:
            if not self.todo:
                return []
            p = self.todo.popleft()
            return [(p.index, run_point(p))]
        if not self.pending:
            return []
        rows = []
        try:
            f = self.finished.get(timeout=timeout)
            while True:
                p = self.pending.pop(f)
                try:
                    rows.append((p.index, f.result()))
                except BrokenProcessPool as err:
                    raise DaqnetError(
                        f"a worker process died (killed, or out of memory?) while point {p.index} ({p.label}) was running or waiting: {err}"
                    ) from None
                f = self.finished.get_nowait()
        except queue.Empty:
            pass
        return rows

    def close(self, kill: bool = True) -> None:
        """Stop the pool; `kill`: at once, cancelling what has not started, workers mid-point."""
        if self.pool is None:
            return
        if not kill:
            self.pool.shutdown(wait=True)
            self.pool = None
            return
        terminate = getattr(self.pool, "terminate_workers", None)  # Python 3.14+
        if terminate is not None:
            terminate()
        else:
            workers = list((getattr(self.pool, "_processes", None) or {}).values())
            self.pool.shutdown(wait=False, cancel_futures=True)
            for proc in workers:
                if proc.is_alive():
                    proc.terminate()
        self.pool.shutdown(wait=True)
        self.pool = None


def run_local(plan: Plan, collector: Collector, jobs: int) -> dict:
    """Every point on this machine; the final document (status finished or interrupted).

    A failing point raises DaqnetError after the rows so far are written (status failed).
    """
    runner = LocalRunner(plan.points, jobs)
    try:
        while not runner.done:
            for index, metrics in runner.poll(0.5):
                collector.add(index, metrics)
    except KeyboardInterrupt:
        runner.close()
        return collector.flush("interrupted")
    except BaseException as err:
        runner.close()
        collector.flush("failed", str(err) or type(err).__name__)
        raise
    runner.close(kill=False)
    return collector.flush("finished")


# -- the command ------------------------------------------------------------------------------
def run_scan(
    path: str,
    vary: list[str],
    overrides: tuple[str, ...] | list[str] = (),
    *,
    out: str | None = None,
    jobs: int | None = None,
    metric: str = "gbps_per_host",
    progress: Callable[[int, int], object] | None = None,
) -> dict:
    """The Python API of a local scan: plan, run, write DIR/scan.csv and scan.json; the document."""
    plan = make_plan(path, list(vary), list(overrides), metric)
    jobs = jobs or available_cores()
    if jobs > 1 and len(plan.points) > 1:
        _check_main_guard()
    collector = Collector(plan, prepare_out(out, plan), jobs, 1, progress)
    return run_local(plan, collector, jobs)


def _unguarded_line(script: str, lineno: int) -> bool:
    """Whether line `lineno` of `script` lies outside every ``if __name__ == "__main__":``."""
    import ast

    try:
        tree = ast.parse(Path(script).read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return False
    return not any(
        isinstance(node, ast.If)
        and "__main__" in ast.unparse(node.test)
        and node.lineno <= lineno <= (node.end_lineno or node.lineno)
        for node in ast.walk(tree)
    )


def _check_main_guard() -> None:
    """Worker processes start by re-importing the main script (multiprocessing's spawn). A
    script that calls run_scan at its top level, unguarded, would start a scan in every
    worker, which Python stops with a crash of the pool: say so before starting it."""
    import inspect

    main = sys.modules.get("__main__")
    script = getattr(main, "__file__", None)
    if not script or getattr(main, "__spec__", None) is not None:
        return  # python -m, the REPL, a notebook: nothing is re-imported
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "__main__":
            if _unguarded_line(script, frame.f_lineno):
                raise DaqnetError(
                    f"{script}:{frame.f_lineno}: run_scan with jobs > 1 starts worker processes "
                    "that re-import this script; put the call under "
                    "'if __name__ == \"__main__\":' (or pass jobs=1)"
                )
            return
        frame = frame.f_back


def scan_command(args: argparse.Namespace, make_progress: Callable[[], Any]) -> int:
    """``daqnet scan``: locally, or as one rank of an MPI launch."""
    from .scan_mpi import launched_ranks

    if launched_ranks() > 1:
        from .scan_mpi import scan_mpi

        return scan_mpi(args, make_progress)
    plan = make_plan(args.scenario, args.vary, args.overrides, args.metric)
    check_plot(plan, args.plot)
    for warning in plan.warnings:
        print(f"daqnet: warning: {warning}", file=sys.stderr)
    jobs = args.jobs or available_cores()
    out = prepare_out(args.out, plan)
    progress = make_progress()
    try:
        doc = run_local(plan, Collector(plan, out, jobs, 1, progress), jobs)
    finally:
        progress.close()
    return finish(doc, out, args.plot, args.json)
