"""A scan spread over MPI ranks, when ``daqnet scan`` itself is started by mpiexec or srun.

Every rank plans the whole scan (the same checks, the same point order); rank r runs points
r, r+N, r+2N, ... with its own local process pool, and sends each row to rank 0 as it
finishes. Rank 0 writes the files, shows progress and prints the summary; the other ranks
print nothing. Waiting is done by probing non-blocking calls and sleeping, because MPICH's
blocking calls spin on a core that a neighbouring rank's simulation needs.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Container
from pathlib import Path
from typing import Any

from ..errors import USER_ERRORS, DaqnetError
from ..report.scan import check_plot
from ..stops import noted, writing
from .collector import Collector, prepare_out
from .local import LocalRunner, available_cores
from .plan import ScanRequest, make_plan
from .result import ScanResult

__all__ = ["launched_ranks", "scan_mpi"]

# The first of these set by the launcher gives the number of ranks: MPICH/Intel MPI (hydra,
# and srun --mpi=pmi2), Open MPI, MVAPICH, and srun itself (a job step; a batch script has
# SLURM_NTASKS but no SLURM_STEP_NUM_TASKS, and is no launch of many ranks).
_SIZE = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS")
_RANK = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID")

_READY, _GO, _ROW, _FAIL, _STOP, _LAST = range(1, 7)
_POLL = 0.02  # seconds between probes while waiting for other ranks
# How long rank 0 waits, after an interrupt, for the other ranks' last rows.
_LAST_WAIT = 10.0


def _first(names: tuple[str, ...]) -> tuple[str, int] | None:
    for name in names:
        try:
            return name, int(os.environ[name])
        except (KeyError, ValueError):
            continue
    return None


def launched_ranks() -> int:
    """Ranks of the launch this process belongs to, from the launcher's environment (1 if none)."""
    found = _first(_SIZE)
    return found[1] if found else 1


def _env_rank() -> int:
    found = _first(_RANK)
    return found[1] if found else 0


class _Quiet(Exception):
    """A rank other than 0 stops; rank 0 says why."""

    def __init__(self, code: int):
        self.code = code


def _mpi() -> Any:
    name, n = _first(_SIZE) or ("?", 0)
    try:
        import mpi4py
    except ImportError:
        raise DaqnetError(
            f"daqnet scan runs as one of {n} MPI ranks ({name}={n}) but mpi4py is not installed: "
            "pip install 'daqnet[mpi]' (or mpi4py) into this environment, or run daqnet scan without mpiexec/srun"
        ) from None
    mpi4py.rc.thread_level = "funneled"  # only the main thread calls MPI
    from mpi4py import MPI

    size = MPI.COMM_WORLD.Get_size()
    if size != n:
        library = " ".join(MPI.Get_library_version().split()[:3])
        if name == "SLURM_STEP_NUM_TASKS":
            # srun started the tasks but gave MPI no process manager interface it speaks.
            mpi = os.environ.get("SLURM_MPI_TYPE", "Slurm's MpiDefault")
            raise DaqnetError(
                f"srun started {n} tasks but MPI ({library}) sees {size} in each: srun's MPI "
                f"plugin ({mpi}) is not one this MPI speaks; the mpich wheel speaks PMI-2: "
                f"run srun --mpi=pmi2 ... daqnet scan (srun --mpi=list shows what this Slurm offers)"
            )
        raise DaqnetError(
            f"the launcher started {n} ranks ({name}={n}) but MPI reports {size}: mpi4py is using another "
            f"MPI library than the launcher ({library})"
        )
    return MPI


def _local_jobs(MPI: Any) -> int:
    """Cores per rank on this node: the ranks here share the union of their affinity masks
    (all cores under mpiexec without binding; disjoint sets under srun --cpus-per-task)."""
    local = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        mine = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        union = set().union(*(set(s) for s in local.allgather(mine)))
        share = len(union) // local.Get_size() if union else available_cores()
        return max(1, min(share, available_cores()))
    finally:
        local.Free()


def _wait(comm: Any, MPI: Any, source: int, tag: int) -> Any:
    status = MPI.Status()
    while not comm.iprobe(source=source, tag=tag, status=status):
        time.sleep(_POLL)
    return comm.recv(source=status.Get_source(), tag=tag)


def _inbox(comm: Any, MPI: Any) -> list[tuple[int, int, Any]]:
    """(tag, source, payload) of every message that has arrived."""
    status = MPI.Status()
    got = []
    while comm.iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status):
        src, tag = status.Get_source(), status.Get_tag()
        got.append((tag, src, comm.recv(source=src, tag=tag)))
    return got


def _stop_all(comm: Any, code: int, gone: Container[int] = ()) -> None:
    """Tell every other rank to stop (with `code`), bar those `gone` (their last message came:
    they are finishing MPI and would never take it)."""
    for r in range(1, comm.Get_size()):
        if r not in gone:
            comm.isend(code, dest=r, tag=_STOP)


class _Interrupted(Exception):
    """Rank 0 heard that another rank was interrupted: so is the scan."""


def _store(
    collector: Collector, messages: list[tuple[int, int, Any]], heard: set[int]
) -> str | None:
    """Every row of a batch of messages (a rank's last message holds its last rows; its rank
    goes into `heard`); the first failure reported, if any. The whole batch first: what
    comes after a last message or a failure in it is not thrown away."""
    failure = None
    for tag, src, payload in messages:
        if tag == _ROW:
            collector.add(*payload)
        elif tag == _LAST:
            for row in payload:
                collector.add(*row)
            heard.add(src)
        elif tag == _FAIL and failure is None:
            failure = f"rank {src}: {payload}"
    return failure


def _last_rows(comm: Any, MPI: Any, collector: Collector, heard: set[int]) -> list[int]:
    """After an interrupt, on rank 0: every row the other ranks finished, up to their last
    message (`heard`: ranks whose last message came already); the ranks that stayed silent.
    A second Ctrl-C stops the wait (noted, under daqnet.cli.main; raised, from the API)."""
    deadline = time.monotonic() + _LAST_WAIT
    waited = noted()
    try:
        while (
            len(heard) < comm.Get_size() - 1 and time.monotonic() < deadline and noted() == waited
        ):
            _store(collector, _inbox(comm, MPI), heard)
            time.sleep(_POLL)
    except KeyboardInterrupt:
        pass
    return sorted(set(range(1, comm.Get_size())) - heard)


def scan_mpi(
    request: ScanRequest, make_progress: Callable[[], Any]
) -> tuple[ScanResult | None, Path | None, int]:
    """This rank's part of a scan over the ranks of the launch: on rank 0 the final document
    and the output directory, elsewhere (None, None, exit status)."""
    quiet = _env_rank() != 0
    try:
        MPI = _mpi()
    except DaqnetError:
        if quiet:
            return None, None, 2
        raise
    comm = MPI.COMM_WORLD
    jobs = request.jobs or _local_jobs(MPI)
    if comm.Get_rank() == 0:
        doc, out = _root(comm, MPI, request, jobs, make_progress)
        return doc, out, 0
    try:
        return None, None, _other(comm, MPI, request, jobs)
    except _Quiet as q:
        return None, None, q.code
    except USER_ERRORS:
        return None, None, 2
    except KeyboardInterrupt:
        return None, None, 130


def _root(
    comm: Any, MPI: Any, request: ScanRequest, jobs: int, make_progress: Callable[[], Any]
) -> tuple[ScanResult, Path]:
    size = comm.Get_size()
    verdict: str | int | None = None
    try:
        try:
            plan = make_plan(request.scenario, request.vary, request.overrides, request.metric)
            check_plot(plan, request.plot)
            out = prepare_out(request.out, plan)
            for warning in plan.warnings:
                print(f"daqnet: warning: {warning}", file=sys.stderr)
        except DaqnetError as err:
            verdict = str(err)
        # Every rank planned the same scan; go only if all could (files may differ between nodes).
        for r in range(1, size):
            theirs = _wait(comm, MPI, r, _READY)
            if theirs and verdict is None:
                verdict = f"rank {r}: {theirs}"
    except KeyboardInterrupt:
        verdict = 130  # interrupted before the scan began: every rank stops, as interrupted
        raise
    except BaseException as err:
        verdict = f"rank 0: {str(err) or type(err).__name__}"
        raise
    finally:
        for r in range(1, size):
            comm.send(verdict, dest=r, tag=_GO)
    if verdict is not None:
        raise DaqnetError(str(verdict))

    try:
        progress = make_progress()
        collector = Collector(plan, out, jobs, size, progress, request.table_format)
    except BaseException as err:  # the others are under way: stop them
        _stop_all(comm, 130 if isinstance(err, KeyboardInterrupt) else 2)
        raise
    runner: LocalRunner | None = None
    heard: set[int] = set()  # ranks whose last message came
    batch: list[tuple[int, int, Any]] = []  # messages received, maybe not stored yet
    try:
        runner = LocalRunner(plan.points[0::size], jobs)
        while len(collector.rows) < len(plan.points):
            if runner.done:
                time.sleep(_POLL)
            for index, metrics in runner.poll(_POLL):
                collector.add(index, metrics)
            batch = _inbox(comm, MPI)
            failure = _store(collector, batch, heard)
            batch = []
            if failure:
                raise DaqnetError(failure)
            if heard and len(collector.rows) < len(plan.points):
                raise _Interrupted  # a rank alone was interrupted (its last rows are in)
    except (KeyboardInterrupt, _Interrupted):
        # Rows this rank's workers finished meanwhile (no runner: interrupted as its pool
        # started, which LocalRunner closed).
        salvaged = runner.salvage() if runner is not None else []
        if runner is not None:
            runner.close()
        for index, metrics in salvaged:
            collector.add(index, metrics)
        _store(collector, batch, heard)  # a batch a Ctrl-C cut short (storing twice is harmless)
        _stop_all(comm, 130, heard)
        silent = _last_rows(comm, MPI, collector, heard)
        if silent:
            print(
                f"daqnet: warning: rank(s) {', '.join(map(str, silent))} sent no last rows "
                f"within {_LAST_WAIT:.0f} s of the interrupt: points they finished since their "
                "last row are not in the results",
                file=sys.stderr,
            )
        doc = collector.flush("interrupted")
    except BaseException as err:
        if runner is not None:
            runner.close()
        _stop_all(comm, 2, heard)
        collector.flush("failed", str(err) or type(err).__name__)
        raise
    else:
        assert runner is not None
        with writing():  # a Ctrl-C as the scan ends must not cut its last write short
            runner.close(kill=False)
            doc = collector.flush("finished")
            _stop_all(comm, 0, heard)
    finally:
        progress.close()
    return doc, out


def _other(comm: Any, MPI: Any, request: ScanRequest, jobs: int) -> int:
    rank, size = comm.Get_rank(), comm.Get_size()
    ready = False  # rank 0 waits for this rank's word on the plan before anything else
    runner: LocalRunner | None = None
    sends = []

    def stopped() -> int | None:
        if comm.iprobe(source=0, tag=_STOP):
            return int(comm.recv(source=0, tag=_STOP))
        return None

    try:
        try:
            try:
                plan = make_plan(request.scenario, request.vary, request.overrides, request.metric)
                verdict = None
            except DaqnetError as err:
                plan, verdict = None, str(err)
            comm.send(verdict, dest=0, tag=_READY)
            ready = True
            go = _wait(comm, MPI, 0, _GO)
            if go is not None:
                raise _Quiet(130 if go == 130 else 2)
            assert plan is not None  # rank 0 said go: every rank planned
            runner = LocalRunner(plan.points[rank::size], jobs)
            while not runner.done:
                for index, metrics in runner.poll(0.2):
                    sends.append(comm.isend((index, metrics), dest=0, tag=_ROW))
                code = stopped()
                if code is not None:
                    raise _Quiet(code)
        except (_Quiet, KeyboardInterrupt):
            raise
        except BaseException as err:
            if not ready:  # rank 0 waits for the plan's verdict: this is it; it stops every rank
                comm.send(str(err) or type(err).__name__, dest=0, tag=_READY)
                ready = True
                _wait(comm, MPI, 0, _GO)
                raise _Quiet(2) from None
            if runner is not None:
                runner.close()
            comm.send(str(err) or type(err).__name__, dest=0, tag=_FAIL)
        if runner is not None:
            runner.close(kill=False)
        code = int(_wait(comm, MPI, 0, _STOP))
        if code == 130:
            raise _Quiet(code)  # rank 0 was interrupted while this rank had nothing left
    except (_Quiet, KeyboardInterrupt) as stop:
        interrupted = isinstance(stop, KeyboardInterrupt) or stop.code == 130
        # Rows sent but not yet stored, and those finished but not sent: rank 0 waits for
        # this last message after an interrupt, and takes it for one if it comes first.
        # Interrupted while planning, waiting for rank 0's go or starting its pool, this rank
        # has no rows: it still says it is ready (rank 0 would wait for that for ever) and
        # then sends its last message, which ends the scan once rank 0 runs it.
        rows = runner.salvage() if interrupted and runner is not None else []
        if runner is not None:
            runner.close()
        if interrupted and not ready:
            comm.send(None, dest=0, tag=_READY)
        if interrupted:
            last = comm.isend(rows, dest=0, tag=_LAST)
            deadline = time.monotonic() + _LAST_WAIT
            while not last.Test() and time.monotonic() < deadline:
                time.sleep(_POLL)
        raise
    if code == 0:
        MPI.Request.Waitall(sends)  # long done: rank 0 stops us only after every row arrived
    return code
