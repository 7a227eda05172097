"""``daqnet bench``: launch the real event builder (daqnet-evb) and gather its results.

Locally the ranks are started with ``mpiexec``: the system MPI's when daqnet-evb was built
against it, otherwise the one of the ``mpich`` wheel installed with daqnet. Inside a Slurm
job ``srun`` is used. This process supervises the run: it shows a progress line from the
ranks' snapshots, forwards Ctrl-C, stops a run whose ranks no longer report, and always
collects what was measured.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import DaqnetError
from ..io.bench_tables import write_tables
from ..io.files import write_text_atomic
from ..io.previous import discard_previous, set_aside
from ..scenario import Scenario
from ..stops import Stops, postponed
from .collect import PMI_HINT, collect, first_rank_error, read_json
from .config import bench_ranks, run_config, write_run_config, write_scenario
from .result import BenchResult
from .shm import RankSegments, rank_pids
from .warnings import run_warnings

__all__ = [
    "check_transport_built",
    "command_text",
    "executable",
    "first_error",
    "launch_command",
    "mpiexec",
    "run",
    "srun_command",
    "uses_mpich_wheel",
]


def executable() -> str:
    """daqnet-evb installed next to this Python's scripts, else the one on PATH."""
    here = Path(sysconfig.get_path("scripts")) / "daqnet-evb"
    if here.exists():
        return str(here)
    found = shutil.which("daqnet-evb")
    if not found:
        raise DaqnetError(
            "daqnet-evb is not installed (build daqnet with its event builder: pip install .)"
        )
    return found


def _build_info() -> ModuleType:
    try:
        from .. import _evb_build  # written by the build (cmake/evb_build.py.in)
    except ImportError:  # pragma: no cover - a build without the event builder
        raise DaqnetError("daqnet was built without daqnet-evb") from None
    return _evb_build


def check_transport_built(scenario: Scenario) -> None:
    """Refuse bench.transport = 'libfabric' when daqnet-evb was built without it (CMake
    found no libfabric), before anything is launched."""
    if scenario["bench"]["transport"] == "libfabric" and not getattr(
        _build_info(), "LIBFABRIC", False
    ):
        raise DaqnetError(
            f"{scenario.source}: bench.transport = 'libfabric': this daqnet-evb was built without "
            "libfabric (install libfabric-dev, or libfabric-devel, then reinstall daqnet)"
        )


def uses_mpich_wheel() -> bool:
    """Whether daqnet-evb runs on the mpich wheel's MPI (which speaks PMI-2, not PMIx)."""
    return bool(_build_info().MPI_KIND == "wheel")


def srun_command(ranks: int, extra: list[str], keep_going: bool = False) -> list[str]:
    """``srun`` for `ranks` tasks. With the mpich wheel's MPI, ``--mpi=pmi2`` unless the
    extra arguments choose a plugin: Slurm's default (MpiDefault=none, or pmix) would start
    every task as a lone rank 0 of 1. This beats SLURM_MPI_TYPE, which a site may set for
    its own MPI library. `keep_going` (bench.recover): ``--no-kill``, the step survives a
    task's death; otherwise ``--kill-on-bad-exit=1``, the step ends with it. Run from
    inside a job step (``srun --pty bash``, or ``srun daqnet bench`` in a batch script):
    ``--overlap``, else srun waits for that step's CPUs, silently ("step creation
    temporarily disabled") until killed."""
    cmd = ["srun", f"--ntasks={ranks}"]
    if keep_going:
        cmd.append("--no-kill")
    elif not any(a == "-K" or a.startswith(("--kill-on-bad-exit", "-K")) for a in extra):
        # A task that dies ends the step, as hydra ends the job: without it the others ran
        # on for 10 s, to their fragment time-out, and the dead time went into the figures.
        cmd.append("--kill-on-bad-exit=1")
    if os.environ.get("SLURM_STEP_ID") and not any(
        a in ("--overlap", "--exclusive") or a.startswith("--exclusive=") for a in extra
    ):
        cmd.append("--overlap")
    if uses_mpich_wheel() and not any(a == "--mpi" or a.startswith("--mpi=") for a in extra):
        cmd.append("--mpi=pmi2")
    return [*cmd, *extra]


def mpiexec() -> str:
    """The mpiexec that matches daqnet-evb's MPI: the system's it was built with, the wheel's, or PATH's."""
    _evb_build = _build_info()
    if _evb_build.MPI_KIND == "system" and _evb_build.MPIEXEC and Path(_evb_build.MPIEXEC).exists():
        return str(_evb_build.MPIEXEC)
    if _evb_build.MPI_KIND == "wheel":
        wheel = Path(sysconfig.get_path("scripts")) / "mpiexec"
        if wheel.exists():
            return str(wheel)
    found = shutil.which("mpiexec")
    if not found:
        raise DaqnetError("no mpiexec found (the mpich wheel installs one: pip install mpich)")
    return found


def keeps_going(scenario: Scenario) -> bool:
    """Whether a rank's death must not end the run (bench.recover, TCP transport)."""
    b = scenario["bench"]
    return bool(b["recover"]) and b["transport"] == "tcp"


def launch_command(
    launcher: str,
    ranks: int,
    extra: str,
    argv: list[str],
    keep_going: bool = False,
    check: bool = True,
) -> list[str]:
    """The command line that starts `ranks` copies of argv (`check`: srun must be on PATH). `keep_going` (bench.recover with
    the TCP transport): the launcher must not end every rank when one dies (MPICH hydra's
    ``-disable-auto-cleanup``, ``srun --no-kill``, each rank under a supervising shell)."""
    if launcher == "auto":
        launcher = "srun" if os.environ.get("SLURM_JOB_ID") and shutil.which("srun") else "mpiexec"
    if launcher == "srun":
        if check and not shutil.which("srun"):
            raise DaqnetError("bench.launcher = 'srun' but srun is not on PATH")
        if keep_going:
            argv = _supervised(argv, "SLURM_PROCID")
        return [*srun_command(ranks, shlex.split(extra), keep_going), *argv]
    mpiexec_path = mpiexec()
    cmd = [mpiexec_path, "-n", str(ranks)]
    version = _version(mpiexec_path)
    if "Open MPI" in version:
        cmd.append("--oversubscribe")  # more ranks than cores is the normal case on one machine
    elif keep_going and "HYDRA" in version:
        cmd.append("-disable-auto-cleanup")
    if keep_going:
        # The launcher's own rank variable: a PMI_RANK inherited from an outer step named
        # every task rank 0, and under Open MPI neither PMI_RANK nor SLURM_PROCID is its.
        argv = _supervised(argv, "OMPI_COMM_WORLD_RANK" if "Open MPI" in version else "PMI_RANK")
    return [*cmd, *shlex.split(extra), *argv]


#: srun's input variables that decide which host runs which rank and how MPI starts
#: (daqnet repair's rank orders are SLURM_HOSTFILE with --distribution=arbitrary):
#: command.txt keeps those set, or running it again would place the ranks otherwise.
SRUN_INPUT_ENV = ("SLURM_HOSTFILE", "SLURM_DISTRIBUTION", "SLURM_MPI_TYPE")


def command_text(cmd: list[str], environ: dict[str, str] | None = None) -> str:
    """`cmd` as a shell line for command.txt: an srun line after the srun variables set in
    `environ` (default os.environ), as assignments a shell reads before the command."""
    env = os.environ if environ is None else environ
    assign = [f"{k}={shlex.quote(env[k])}" for k in SRUN_INPUT_ENV if k in env]
    return " ".join(
        [*assign, shlex.join(cmd)] if Path(cmd[0]).name == "srun" else [shlex.join(cmd)]
    )


def _launched_by_srun(command: str) -> bool:
    """Whether a command.txt line runs srun (after any variable assignments)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    first = next((w for w in words if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", w)), "")
    return Path(first).name == "srun"


def _version(mpiexec: str) -> str:
    try:
        return subprocess.run(
            [mpiexec, "--version"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _progress_line(out_dir: Path, run_seconds: float = 0.0) -> tuple[str, float]:
    """A one-line view of the EM's latest snapshot, and the newest snapshot time of any rank.
    `run_seconds`: the run's length (warm-up and window), shown as "t=3.5 of 6.0 s" when
    known (a window of bench.events has none).

    Only file times are read for every rank; only the EM's snapshot (rank named in
    launch.json) is parsed, so the poll stays cheap with many ranks.
    """
    newest = 0.0
    for path in out_dir.glob("rank-*.json"):
        try:
            newest = max(newest, path.stat().st_mtime)
        except OSError:
            continue
    launch = read_json(out_dir / "launch.json") or {}
    doc = read_json(out_dir / f"rank-{launch.get('em_rank', 0)}.json")
    em = next((u for u in doc["units"] if u["unit"] == "em"), None) if doc else None
    if doc is None or em is None:
        return "", newest
    secs = doc["time_seconds"] - em["window_start_seconds"]
    gbps = em["window_bytes"] * 8 / secs / 1e9 if secs > 0 else 0.0
    return (
        f"t={doc['time_seconds']:6.1f}{f' of {run_seconds:.1f}' if run_seconds > 0 else ''} s  "
        f"events {em['window_events']:,}  {gbps:8.2f} Gb/s",
        newest,
    )


def run(
    scenario: Scenario,
    out_dir: str | Path | None = None,
    baseline: str | None = None,
    progress: Callable[[str], None] | None = None,
    table_format: str = "csv",
    wrapper: list[str] | None = None,
    on_segments: Callable[[set[str]], object] | None = None,
    stops: Stops | None = None,
    keep_earlier: bool = True,
) -> BenchResult:
    """Run the benchmark of a scenario; returns the result document (also written to out_dir,
    with its tables as CSV or, `table_format` "parquet", as Parquet). `wrapper` goes before
    daqnet-evb on each rank's command line (daqnet emulate: into its host's namespace).
    `keep_earlier`: a complete earlier run in out_dir is kept in OUT/previous/ until this one
    is complete (io.previous); off for a run that is part of a larger one, which keeps its own.
    `on_segments` is told the MPI segments in /dev/shm that the ranks map, once found.
    `stops`: the signals of a larger run this one is part of (daqnet emulate)."""
    cfg = run_config(scenario, baseline)
    check_transport_built(scenario)
    ranks = bench_ranks(scenario)
    b = scenario["bench"]
    out = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="daqnet-bench-"))
    if out.exists() and not out.is_dir():  # as ensure_dir says it (not "File exists")
        raise DaqnetError(f"--out {out}: is a file, not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        earlier = earlier_run_files(out)
        # A complete earlier run is kept until this one is complete too (io.previous).
        if keep_earlier:
            set_aside(out, "bench", [*earlier, *RUN_FILES])
        for old in earlier:
            old.unlink(missing_ok=True)
        write_run_config(cfg, out / "run.cfg", scenario.source)
        write_scenario(scenario, out)
    except OSError as err:
        # As every command says it (a file in the way read "output directory x: File exists").
        what = "cannot create directory" if not out.is_dir() else "cannot write into it"
        raise DaqnetError(f"--out {out}: {what}: {err.strerror}") from None
    keep_going = keeps_going(scenario)
    cmd = launch_command(
        b["launcher"],
        ranks,
        b["launcher_args"],
        [*(wrapper or []), executable(), str(out / "run.cfg"), "--out", str(out)],
        keep_going=keep_going,
    )
    write_text_atomic(out / "command.txt", command_text(cmd) + "\n")

    # Never longer than the run plus generous margins: a hung launcher cannot hang daqnet.
    quiet_limit = (
        20
        + 3 * b["report_seconds"]
        + b["stall_seconds"]
        + b["drain_timeout_seconds"]
        + 3 * b["baseline_seconds"]
    )
    interrupted = False
    baseline_due = cfg.get("baseline", "none") != "none"
    # A window of bench.events ends when it ends: no length to show.
    run_seconds = b["warmup_seconds"] + b["seconds"] if b["seconds"] and not b["events"] else 0.0
    segments = RankSegments(out, on_segments)
    why = ""  # the ranks stopped reporting
    # SIGTERM and SIGHUP stop the ranks as Ctrl-C does; once they are done, what they wrote
    # is gathered and written whatever comes (Stops).
    with stops if stops is not None else Stops() as stops:
        with open(out / "launcher.log", "w") as log:
            last_change = time.monotonic()
            last_seen = 0.0
            done_at: float | None = None
            idle = False  # the launcher outlived every rank's end, and was stopped
            # bench.recover: a rank ended before it reported (first seen then), and the
            # others still report nothing after a period and a heartbeat: they wait for it in
            # MPI's start-up (MPI_Init, the first barrier), which no heartbeat guards.
            startup_death: tuple[str, float] | None = None
            startup_grace = b["report_seconds"] + b["heartbeat_seconds"] + 2
            proc: subprocess.Popen[bytes] | None = None
            try:  # entered first: a signal as postponed() hands back the handlers is caught
                with postponed() as pending:
                    proc = subprocess.Popen(
                        cmd,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        env=_launch_environment(),
                    )
                if pending:  # now that the launcher is known, and stopped below
                    signal.raise_signal(pending[0])
                while proc.poll() is None:
                    time.sleep(0.2)
                    segments.look()
                    text, newest = _progress_line(out, run_seconds)
                    if newest != last_seen:
                        last_seen, last_change = newest, time.monotonic()
                    if progress and text:
                        progress(text)
                    dead = _only_the_dead_remain(out, ranks, baseline_due) if keep_going else None
                    if dead is not None:
                        # Every rank wrote its final snapshot (a rank declared dead may still
                        # live, hung), yet the launcher waits on: it is stopped, and the run
                        # is what the ranks wrote (a killed wrapper shell kept it 69 s more,
                        # then it was called failed). With a rank dead, 3 s on; with none,
                        # once no rank process is left here (they tear down after their last
                        # snapshot), or after 10 s, ranks still here (hung) included.
                        now = time.monotonic()
                        if done_at is None:
                            done_at = now
                        elif now - done_at > 3 and (dead or not rank_pids(out)):
                            _stop(proc, signal.SIGKILL)
                            idle = True
                            break
                        elif now - done_at > 10:
                            _stop(proc, signal.SIGKILL)
                            _kill_ranks(out)
                            idle = True
                            break
                    if (
                        keep_going
                        and startup_death is None
                        and (dead_rank := _died_in_startup(out))
                    ):
                        startup_death = dead_rank, time.monotonic()
                    if (
                        startup_death is not None
                        and last_change < startup_death[1]
                        and time.monotonic() - startup_death[1] > startup_grace
                    ):
                        # Nothing to write: ranks inside MPI_Init ignore a polite stop.
                        # srun passes no SIGKILL on (the other nodes' ranks would stay):
                        # its SIGTERM ends the whole step.
                        _stop(
                            proc, signal.SIGTERM if Path(cmd[0]).name == "srun" else signal.SIGKILL
                        )
                        _kill_ranks(out)
                        why = (
                            f"{startup_death[0]} ended during the start-up, before the run began, "
                            "and the other ranks waited for it there: bench.recover goes on "
                            "without ranks lost once the run has started, not before; the run was stopped"
                        )
                        break
                    if time.monotonic() - last_change > quiet_limit:
                        stops.hold()
                        _stop(proc, stops=stops)
                        why = f"the ranks stopped reporting for {quiet_limit:.0f} s; the run was killed"
                        break
            except KeyboardInterrupt:
                interrupted = True
                stops.hold()
                # Another signal in it: SIGKILL at once.
                if proc is not None:
                    _stop(proc, *_polite(cmd), stops)
            stops.hold()
        segments.release()
        _append_rank_logs(out)
        notes = [why] if why else []
        status = proc.returncode if proc is not None else None
        # Under bench.recover hydra may also give up by itself (status 9) over a wrapper
        # killed after its rank ended: as when it is stopped, the run is what the ranks wrote.
        if keep_going and status not in (0, None):
            idle = idle or _only_the_dead_remain(out, ranks, baseline_due) is not None
        if status not in (0, None) and not interrupted and not why and not idle:
            cause = first_error(out / "launcher.log")
            notes.append(f"launcher exited with status {status}" + (f": {cause}" if cause else ""))
        # A run killed for its silence is not one that keeps going without its dead.
        result = _finish(
            out,
            ranks,
            notes,
            scenario,
            table_format,
            keep_going and not why,
            interrupted,
            cause=why if startup_death else "",
        )
        # A signal while the results were gathered: the run counts as stopped, unless it failed.
        if interrupted or (stops.seen and result.status == "finished"):
            result.status, result.interrupted = "interrupted", True
            write_tables(result, out, table_format)
        elif (
            result.status == "interrupted"
            and not stops.seen
            and any("stopped without finishing" in e for e in result.errors)
        ):
            # Stopped, but not by us: the launcher ended the ranks after one died (srun's
            # --kill-on-bad-exit), and it read "interrupted", exit 130, as if by Ctrl-C.
            result.status, result.interrupted = "failed", False
            result.errors.append("the launcher stopped the ranks after one ended without finishing")
            write_tables(result, out, table_format)
    if keep_earlier and not result.interrupted and result.status in ("finished", "degraded"):
        discard_previous(out)
    return result


# What a run writes beside its results, kept with them in OUT/previous/.
RUN_FILES = ("run.cfg", "scenario.json", "command.txt", "launcher.log")


def earlier_run_files(out: Path) -> list[Path]:
    """The results of an earlier run in `out` that a new run replaces (its ranks' files, the
    result and its tables)."""
    return [
        *out.glob("rank-*.json"),
        *out.glob("rank-*.csv"),
        *out.glob("rank-*.error"),
        *out.glob("rank-*.log"),
        *out.glob("rank-*.exit"),
        out / "launch.json",
        out / "baseline.json",
        out / "result.json",
        *(
            out / f"{t}.{ext}"
            for t in ("units", "timeseries", "memory")
            for ext in ("csv", "parquet")
        ),
    ]


# A rank's death must not look like one to MPICH's hydra: its proxy SIGKILLs every process
# it started as soon as it reaps one that a signal ended, -disable-auto-cleanup or not. Under
# bench.recover each rank runs under a shell that turns its child's death into a plain exit
# status (128 + signal) and ignores the SIGUSR1 hydra sends the survivors' process groups
# (whose default action would end them). It outlives Ctrl-C and SIGTERM too (the trap runs
# once the rank, which has them at their defaults, is done) so that no signal death reaches
# hydra while the ranks write their last results.
# A rank that ends unsuccessfully leaves its status in OUT/rank-N.exit (N from hydra's
# PMI_RANK or srun's SLURM_PROCID): one dead before the run began leaves the others waiting
# for it inside MPI's start-up, where no heartbeat runs, and daqnet bench stops the run
# (_died_in_startup).
_SUPERVISOR = (
    'trap "" USR1; trap : INT TERM USR2; "$@"; s=$?; '
    '[ "$s" = 0 ] || echo "$s" > {out}/rank-"${rank}".exit; exit "$s"'
)


def _supervised(argv: list[str], rank_var: str) -> list[str]:
    """argv under the supervising shell; `rank_var` is the launcher's variable holding the
    rank (PMI_RANK under hydra, SLURM_PROCID under srun)."""
    out = argv[argv.index("--out") + 1]
    script = _SUPERVISOR.format(out=shlex.quote(out), rank=rank_var)
    return ["/bin/sh", "-c", script, "daqnet-evb", *argv]


def _kill_ranks(out: Path, wait: float = 5.0) -> None:
    """SIGKILL this run's daqnet-evb processes on this machine (hydra's SIGKILL misses them:
    each rank has a session of its own) and wait until they are gone, so that their MPI
    segments are no longer mapped when RankSegments.release looks."""
    end = time.monotonic() + wait
    while (pids := rank_pids(out)) and time.monotonic() < end:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def _died_in_startup(out: Path) -> str | None:
    """A rank that ended (its supervising shell's rank-N.exit) before it wrote any results,
    as "rank N (exit status S)"; None when there is none."""
    for path in sorted(out.glob("rank-*.exit"), key=lambda p: _rank_number(p.stem)):
        rank = _rank_number(path.stem)
        if rank < 0 or (out / f"rank-{rank}.json").exists():
            continue
        try:
            status = int(path.read_text().strip())
        except (OSError, ValueError):
            continue  # read between the shell's truncation and its echo: the next poll
        how = f"exit status {status}"
        if status > 128:
            with contextlib.suppress(ValueError):
                how += f", {signal.Signals(status - 128).name}"
        return f"rank {rank} ({how})"
    return None


def _declared_dead(em_doc: dict[str, Any]) -> set[int]:
    """The ranks the event manager declared dead (bench.recover), from its rank file."""
    em: dict[str, Any] = next((u for u in em_doc.get("units", []) if u.get("unit") == "em"), {})
    return {
        int(f["rank"])
        for f in em.get("failures", [])
        if isinstance(f, dict) and isinstance(f.get("rank"), int)
    }


def _only_the_dead_remain(out: Path, ranks: int, baseline: bool) -> set[int] | None:
    """The ranks the EM declared dead (bench.recover), once every other rank has written
    its final snapshot and the `baseline` that follows them, if any, is written too (or a
    rank died: survivors then leave without it); None before. A launcher still running then
    waits for nothing, a hung rank or the wrapper of a dead one."""
    launch = read_json(out / "launch.json") or {}
    em_rank = launch.get("em_rank", 0)
    em_doc = read_json(out / f"rank-{em_rank}.json")
    if em_doc is None or em_doc.get("status") == "running":
        return None
    dead = _declared_dead(em_doc)
    if not dead and baseline and not (out / "baseline.json").exists():
        return None
    for r in set(range(ranks)) - dead:
        doc = read_json(out / f"rank-{r}.json")
        if doc is None or doc.get("status") == "running":
            return None
    return dead


def _append_rank_logs(out: Path) -> None:
    """With bench.recover each rank writes its stderr to rank-N.log (MPICH's hydra would exit
    at a survivor's first line after a death): gathered into launcher.log, in rank order."""
    logs = sorted(out.glob("rank-*.log"), key=lambda p: _rank_number(p.stem))
    if not logs:
        return
    with open(out / "launcher.log", "a") as log:
        for path in logs:
            try:
                log.write(path.read_text(errors="replace"))
            except OSError:
                continue


def _rank_number(stem: str) -> int:
    try:
        return int(stem.split("-", 1)[1])
    except (IndexError, ValueError):
        return -1


#: While the ranks stop politely, the signal goes to the launcher again this often: one sent
#: while it still starts them (hydra's proxies, each rank in a session of its own) reached
#: none of them, and the run waited out the 10 s before SIGKILL, which left MPICH's shared
#: memory behind.
AGAIN_SECONDS = 1.0


def _polite(cmd: list[str]) -> tuple[int, int]:
    """The signal that makes the launcher pass Ctrl-C on to the ranks, and the one to send
    again. mpiexec (hydra): SIGINT, then SIGTERM, since it takes a second SIGINT as "kill
    everything now". srun: SIGUSR2 both times, which it passes on as it is (the ranks take it
    as Ctrl-C): its first SIGINT only prints the step's state, and its SIGTERM kills the step
    before the ranks write their last results."""
    if Path(cmd[0]).name == "srun":
        return signal.SIGUSR2, signal.SIGUSR2
    return signal.SIGINT, signal.SIGTERM


def _stop(
    proc: subprocess.Popen[bytes],
    sig: int = signal.SIGTERM,
    again_sig: int = signal.SIGTERM,
    stops: Stops | None = None,
) -> None:
    """Signal the launcher's process group (`again_sig` every AGAIN_SECONDS after `sig`);
    escalate to SIGKILL if it lingers, or at once at another signal (raised, or noted by
    `stops`): stop waiting politely."""
    before = stops.seen if stops else 0
    for s, wait in ((sig, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, s)
        except ProcessLookupError:
            return
        end = time.monotonic() + wait
        again = time.monotonic() + AGAIN_SECONDS
        try:
            while time.monotonic() < end and not (stops and stops.seen > before):
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=0.1)
                    return
                if s != signal.SIGKILL and time.monotonic() > again:
                    again += AGAIN_SECONDS
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, again_sig)
        except KeyboardInterrupt:
            continue
        before = stops.seen if stops else 0


def first_error(log: Path) -> str:
    """The first line a daqnet-evb rank wrote about its own failure (its rank-N.error file,
    else its line in the launcher's log), else the log's last line: MPI_Abort and the
    launcher's complaints come after the cause and hide it."""
    if said := first_rank_error(log.parent):
        return said
    try:
        lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    for line in lines:
        if line.startswith("daqnet-evb") and "run failed (see" not in line:
            return line
    killed = _killed(lines, log.parent)
    if killed:
        return killed
    # MPI failing to start (e.g. srun --mpi=pmix under the mpich wheel) says why mid-log.
    for line in lines:
        if "PMI" in line:
            try:
                srun = _launched_by_srun((log.parent / "command.txt").read_text())
            except OSError:
                srun = False
            return f"{line}; {PMI_HINT}" if srun else line
    # A rank giving up after its own error (said in its results) and hydra's echo of its
    # MPI_Abort name no cause: the run's errors list the ranks' own.
    causes = [ln for ln in lines if "run failed (see" not in ln and "called MPI_Abort" not in ln]
    return causes[-1] if causes else ""


def _killed(lines: list[str], out: Path) -> str | None:
    """A process the launcher saw die by a signal, named by rank: hydra says "PID 20623
    RUNNING AT vm", "EXIT STRING: Killed (signal 9)", then its FAQ line, which was all the
    error said. The rank comes from the pid each rank writes in its rank-N.json."""
    pid = next((ln.split()[2] for ln in lines if re.match(r"=\s+PID \d+ RUNNING AT", ln)), None)
    how = next((ln.split("EXIT STRING:", 1)[1].strip() for ln in lines if "EXIT STRING:" in ln), "")
    if pid is None or "signal" not in how:
        return None
    at = next((ln.split("RUNNING AT", 1)[1].strip() for ln in lines if "RUNNING AT" in ln), "")
    who = f"a process (pid {pid})"
    for path in out.glob("rank-*.json"):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if str(doc.get("pid")) == pid:
            who = f"rank {doc.get('rank')} (pid {pid})"
            break
    # Hydra ends the other ranks when one dies, and the one it reports may be one of those
    # (a test killed rank 3; hydra named rank 1): said as the launcher's report.
    return (
        f"the launcher reports {who}{' on ' + at if at else ''} killed: {how} (when one rank "
        "dies it ends the others, and may name one of those)"
    )


def _launch_environment() -> dict[str, str]:
    """This environment, with UCX (under the mpich wheel's MPI) saying errors only unless
    told otherwise: a stopped run's ranks printed 40-65 lines of "UCX WARN object ... was
    not returned to mpool" into launcher.log and the terminal, burying the one that
    mattered."""
    env = dict(os.environ)
    env.setdefault("UCX_LOG_LEVEL", "error")
    return env


def _finish(
    out: Path,
    ranks: int,
    notes: list[str],
    scenario: Scenario,
    table_format: str = "csv",
    keep_going: bool = False,
    interrupted: bool = False,
    cause: str = "",
) -> BenchResult:
    """The ranks' results gathered, with `notes` among their errors; with none, an error
    saying why: `cause`, else the first error the launcher's log shows."""
    try:
        result = collect(out, ranks)
    except DaqnetError as err:
        if interrupted:  # a signal as the ranks started: it ended them before they could catch it
            raise KeyboardInterrupt(
                f"before any rank reported, nothing was measured (see {out}/launcher.log)"
            ) from None
        # Nothing measured at all (e.g. the launcher failed): say why, keep the log.
        cause = cause or first_error(out / "launcher.log") or str(err)
        raise DaqnetError(
            f"daqnet-evb produced no results: {cause} (see {out}/launcher.log)"
        ) from None
    if result.failures or (keep_going and result.errors):
        # Under bench.recover the launcher's status is a dead rank's (128 + signal): the
        # survivors' own results already say what happened.
        notes = [n for n in notes if not n.startswith("launcher exited with status")]
    result.errors += notes
    result.config = scenario.effective()
    if notes and result.status == "finished":
        result.status = "failed"
    result.out_dir = str(out)
    result.warnings = run_warnings(result)
    write_tables(result, out, table_format)
    return result
