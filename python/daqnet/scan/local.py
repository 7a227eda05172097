"""Running a scan's points on this machine: in this process, or in a pool of worker processes."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import USER_ERRORS, DaqnetError
from ..stops import writing
from ..threads import available_cores
from .collector import Collector, prepare_out
from .metrics import METRICS
from .plan import Plan, Point, make_plan
from .result import ScanResult

__all__ = [
    "LocalRunner",
    "RunPoint",
    "available_cores",
    "check_main_guard",
    "point_errors",
    "run_local",
    "run_point",
    "run_scan",
]


@contextmanager
def point_errors(point: Point) -> Iterator[None]:
    """A user error of a point's run as a plain DaqnetError naming the point: it pickles back
    from a worker process (the core's errors may not)."""
    try:
        yield
    except USER_ERRORS as err:
        raise DaqnetError(f"point {point.index} ({point.label}): {err}") from None


def run_point(point: Point, threads: int = 0) -> dict[str, Any]:
    """One point's row: the varied values and the mode's metrics (also run in pool workers,
    one thread each; in this process, on every core)."""
    from ..simulate import simulate

    with point_errors(point):
        r = simulate(point.scenario, threads=threads)
    if r["interrupted"]:  # Ctrl-C inside the core: the point did not finish
        raise KeyboardInterrupt
    doc = r.to_dict()
    if r["mode"] == "protocol":
        lat = doc["latency_seconds"]
        doc.update({f"latency_{k}_seconds": lat[k] for k in ("p50", "p99", "max")})
        doc["warning"] = "; ".join(doc["warnings"])
    return {m: doc[m] for m in METRICS[doc["mode"]]}


# Ctrl-C reaches the whole terminal process group, scancel every process of the job step:
# the parent alone decides what stops (and kills its workers, keeping their finished rows).
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _worker_init(parent: int) -> None:
    for s in _STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)  # one pending since the start goes too
    # Started with them blocked (_stops_blocked): ignored now, they may be unblocked.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    # Deaf to those, a worker must still not outlive a scan killed outright (kill -9, the
    # OOM killer): Linux kills it with its parent.
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the parent's close() alone stops it
        return
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)


@contextmanager
def _stops_blocked() -> Iterator[None]:
    """Children started in here start with Ctrl-C, SIGTERM and SIGHUP blocked, even before
    they run any Python (their initializer then ignores and unblocks them). A signal that
    comes meanwhile is noted and raised again once the block is over, so that it stops the
    run at a point where the pool is whole. (Ignored here instead, as the children must, such
    a signal was lost, and a scan interrupted as its pool started ran to its end; blocked
    alone, it could still reach this process through another thread, numpy's or the core's,
    and stop it mid-spawn, leaving a worker half started.)"""
    # multiprocessing starts its resource tracker with the first pool, and unblocks SIGINT
    # and SIGTERM after (no restore): started before the block, it leaves the block whole.
    with contextlib.suppress(ImportError, AttributeError, OSError):
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    noted: list[int] = []
    old: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():  # handlers are the main thread's
        old = {s: signal.signal(s, lambda sig, _frame: noted.append(sig)) for s in _STOP_SIGNALS}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # held ones reach the recorder now
        for s, h in old.items():
            signal.signal(s, h)
        for s in dict.fromkeys(noted):  # each kind once, to the handlers of the run
            signal.raise_signal(s)


#: A point's row from the point and a thread count (1 in pool workers, 0 = every core here);
#: picklable (a module's function, or a partial of one) to run in a worker.
RunPoint = Callable[[Point, int], dict[str, Any]]


class LocalRunner:
    """Runs points in this process (one job) or in a pool of worker processes; `run` gives
    a point's row (a scan's by default; a study's rows are its own)."""

    def __init__(self, points: list[Point], jobs: int, run: RunPoint | None = None):
        self.run = run or run_point
        self.todo = deque(points)
        self.pending: dict[Future[dict[str, Any]], Point] = {}
        # Futures land here as they finish: O(1) per point, however many are pending.
        self.finished: queue.SimpleQueue[Future[dict[str, Any]]] = queue.SimpleQueue()
        # Rows of the last poll(), kept until the next: a Ctrl-C while the caller stores them
        # loses none, as salvage() gives them again (storing a row twice is harmless).
        self.ready: list[tuple[int, dict[str, Any]]] = []
        self.pool: ProcessPoolExecutor | None = None
        if jobs > 1 and len(points) > 1:
            # spawn: workers do not inherit MPI state, threads or locks of this process.
            ctx = multiprocessing.get_context("spawn")
            try:
                with _stops_blocked():
                    self.pool = ProcessPoolExecutor(
                        min(jobs, len(points)),
                        mp_context=ctx,
                        initializer=_worker_init,
                        initargs=(os.getpid(),),
                    )
                    for p in points:
                        f = self.pool.submit(self.run, p, 1)
                        self.pending[f] = p
                        f.add_done_callback(self.finished.put)
            except BaseException:  # a Ctrl-C held back while the pool started: no runner
                self.close()
                raise
            self.todo.clear()

    @property
    def done(self) -> bool:
        return not self.todo and not self.pending

    def poll(self, timeout: float) -> list[tuple[int, dict[str, Any]]]:
        """Rows finished since the last call (waits up to `timeout` in pool mode)."""
        self.ready = []  # the caller stored the last ones
        if self.pool is None:
            if self.todo:
                p = self.todo[0]
                self.ready.append((p.index, self.run(p, 0)))
                self.todo.popleft()
            return self.ready
        if not self.pending:
            return self.ready
        try:
            f = self.finished.get(timeout=timeout)
            while True:
                p = self.pending[f]
                try:
                    self.ready.append((p.index, f.result()))
                except BrokenProcessPool as err:
                    raise DaqnetError(
                        f"a worker process died (killed, or out of memory?) while point {p.index} ({p.label}) was running or waiting: {err}"
                    ) from None
                del self.pending[f]  # after: a signal in between leaves the row in both
                f = self.finished.get_nowait()
        except queue.Empty:
            pass
        return self.ready

    def salvage(self) -> list[tuple[int, dict[str, Any]]]:
        """At a Ctrl-C: the rows of the last poll, which the caller may not have stored yet,
        and those of points finished but not polled, which would go with the pool."""
        rows = list(self.ready)
        seen = {index for index, _ in rows}
        for f, p in list(self.pending.items()):
            if f.done() and not f.cancelled() and f.exception() is None:
                if p.index not in seen:
                    rows.append((p.index, f.result()))
                del self.pending[f]
        return rows

    def close(self, kill: bool = True) -> None:
        """Stop the pool; `kill`: at once, cancelling what has not started, workers mid-point."""
        if self.pool is None:
            return
        if not kill:
            self.pool.shutdown(wait=True)
            self.pool = None
            return
        # SIGKILL: the workers ignore SIGTERM (above).
        kill_workers = getattr(self.pool, "kill_workers", None)  # Python 3.14+
        if kill_workers is not None:
            kill_workers()
        else:
            workers = list((getattr(self.pool, "_processes", None) or {}).values())
            self.pool.shutdown(wait=False, cancel_futures=True)
            for proc in workers:
                if proc.is_alive():
                    proc.kill()
        self.pool.shutdown(wait=True)
        self.pool = None


def run_local(
    plan: Plan, collector: Collector, jobs: int, live: Callable[[str], None] | None = None
) -> ScanResult:
    """Every point on this machine; the final document (status finished or interrupted).

    A failing point raises DaqnetError after the rows so far are written (status failed).
    Measured points (plan.measured) run one at a time whatever `jobs`; `live` gets a line
    about the benchmark under way.
    """
    from .measure import BenchRunner

    runner: LocalRunner | BenchRunner | None = None
    try:
        runner = (
            BenchRunner(plan, collector.out, live, collector.table_format)
            if plan.measured
            else LocalRunner(plan.points, jobs)
        )
        while not runner.done:
            for index, metrics in runner.poll(0.5):
                runs = runner.runs.pop(index) if isinstance(runner, BenchRunner) else None
                collector.add(index, metrics, runs)
    except KeyboardInterrupt:
        # The pool is gone before anything is written: a second Ctrl-C while the rows are
        # written must not leave it running.
        salvaged = runner.salvage() if isinstance(runner, LocalRunner) else []
        if runner is not None:  # None: interrupted as its pool started (LocalRunner closed it)
            runner.close()
        with writing():
            for index, metrics in salvaged:
                collector.add(index, metrics, None)
            return collector.flush("interrupted")
    except BaseException as err:
        if runner is not None:
            runner.close()
        collector.flush("failed", str(err) or type(err).__name__)
        raise
    with writing():  # a Ctrl-C as the scan ends must not cut its last write short
        runner.close(kill=False)
        return collector.flush("finished")


def run_scan(
    path: str,
    vary: list[str],
    overrides: tuple[str, ...] | list[str] = (),
    *,
    out: str | None = None,
    jobs: int | None = None,
    metric: str = "gbps_per_host",
    progress: Callable[[int, int], object] | None = None,
    bench: bool = False,
    predict: bool = False,
    repeat: int = 1,
    table_format: str = "csv",
    live: Callable[[str], None] | None = None,
) -> ScanResult:
    """The Python API of a local scan: plan, run, write DIR/scan.csv (or scan.parquet) and
    scan.json; the document.

    `bench`: measure every point with daqnet bench, `repeat` runs each, one run at a time
    (runs.csv, runs/); `predict`: also the protocol simulation of each point, side by side.
    """
    from ..tables import check_format

    check_format(table_format)
    plan = make_plan(
        path, list(vary), list(overrides), metric, bench=bench, predict=predict, repeat=repeat
    )
    jobs = 1 if plan.measured else min(jobs or available_cores(), max(1, len(plan.points)))
    if jobs > 1:
        check_main_guard("run_scan")
    collector = Collector(plan, prepare_out(out, plan), jobs, 1, progress, table_format)
    return run_local(plan, collector, jobs, live)


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


def check_main_guard(call: str) -> None:
    """Worker processes start by re-importing the main script (multiprocessing's spawn). A
    script that calls `call` (run_scan, a study) at its top level, unguarded, would start it
    again in every worker, which Python stops with a crash of the pool: say so before
    starting it."""
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
                    f"{script}:{frame.f_lineno}: {call} with jobs > 1 starts worker processes "
                    "that re-import this script; put the call under "
                    "'if __name__ == \"__main__\":' (or pass jobs=1)"
                )
            return
        frame = frame.f_back
