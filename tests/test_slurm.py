"""The cluster path under a real Slurm (one node, Slurm's default MpiDefault=none).

The mpich wheel's MPI speaks PMI-2 only: a task that srun starts without it is a lone rank
0 of 1. None of these paths may end with exit 0 and the wrong number of ranks.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import libfabric_build
import pytest
from slurm_cluster import SlurmCluster, missing

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bench-local.toml"
LHCB = ROOT / "examples" / "lhcb-540.toml"
QUICK = [
    "bench.seconds=0.6",
    "bench.warmup_seconds=0.1",
    "bench.fragment_bytes=65536",
    "bench.report_seconds=0.2",
]
SETS = [a for s in QUICK for a in ("--set", s)]
DAQNET = [sys.executable, "-m", "daqnet"]

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    cluster.start()
    yield cluster
    cluster.stop()


def run(slurm, *cmd, timeout=180, cwd=None):
    return subprocess.run(
        [str(c) for c in cmd],
        capture_output=True,
        text=True,
        env=slurm.env,
        timeout=timeout,
        cwd=cwd,
    )


def sbatch(slurm, tmp_path, script: str, tasks: int) -> tuple[int, str]:
    """Submit a batch script, wait for it; (its exit status, its output)."""
    path = tmp_path / "job.sh"
    path.write_text("#!/bin/bash\nset -euo pipefail\n" + script)
    log = tmp_path / "job.out"
    r = run(
        slurm,
        "sbatch",
        "--wait",
        f"--ntasks={tasks}",
        f"--output={log}",
        f"--chdir={tmp_path}",
        path,
        timeout=300,
    )
    return r.returncode, log.read_text() if log.exists() else r.stderr


def test_bench_launched_with_srun(slurm, tmp_path):
    out = tmp_path / "out"
    r = run(slurm, *DAQNET, "bench", EXAMPLE, *SETS, "--set", "bench.launcher=srun",
            "--json", "--out", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "finished" and doc["ranks"] == 4 and doc["events_built"] > 0
    units = {(u["unit"], u["index"]) for u in doc["units"]}
    assert len([u for u in units if u[0] == "bu"]) == 4
    assert "--mpi=pmi2" in (out / "command.txt").read_text()


def test_interrupted_bench_under_srun_keeps_every_ranks_last_results(slurm, tmp_path):
    # srun's first SIGINT only prints the step's state and its SIGTERM kills the step: Ctrl-C
    # waited 10 s, then every rank was "stopped without finishing". SIGUSR2 goes through.
    out = tmp_path / "out"
    args = [*DAQNET, "bench", EXAMPLE, *SETS, "--set", "bench.launcher=srun",
            "--set", "bench.seconds=60", "--json", "--out", out]  # fmt: skip
    p = subprocess.Popen([str(a) for a in args], env=slurm.env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    end = time.monotonic() + 120
    while time.monotonic() < end:
        time.sleep(0.1)
        try:
            if any(json.loads(f.read_text())["period"] >= 3 for f in out.glob("rank-*.json")):
                break
        except (OSError, ValueError, KeyError):
            continue
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    doc = json.loads(stdout)
    assert doc["interrupted"] and doc["events_built"] > 0
    assert doc["errors"] == [], doc["errors"]
    for rank in range(4):
        assert json.loads((out / f"rank-{rank}.json").read_text())["status"] == "interrupted"


def test_bench_srun_with_mpi_none_never_succeeds(slurm, tmp_path):
    # The user forces Slurm's plugin 'none': every task would be rank 0 of 1.
    r = run(slurm, *DAQNET, "bench", EXAMPLE, *SETS, "--set", "bench.launcher=srun",
            "--set", "bench.launcher_args=--mpi=none", "--out", tmp_path / "out")  # fmt: skip
    assert r.returncode != 0
    assert "prepared for 4 ranks but MPI started this process as rank 0 of 1" in r.stderr
    assert "srun --mpi=pmi2" in r.stderr
    assert not list((tmp_path / "out").glob("rank-*.json"))


def test_bench_srun_with_pmix_names_the_cause(slurm, tmp_path):
    # With srun's PMIx plugin (a site's MpiDefault=pmix) the wheel's MPI aborts at start.
    r = run(slurm, *DAQNET, "bench", EXAMPLE, *SETS, "--set", "bench.launcher=srun",
            "--set", "bench.launcher_args=--mpi=pmix", "--out", tmp_path / "out")  # fmt: skip
    assert r.returncode == 2
    assert "PMIx" in r.stderr and "srun --mpi=pmi2" in r.stderr, r.stderr
    assert not (tmp_path / "out" / "result.json").exists()


@pytest.mark.skipif(not libfabric_build.built(), reason=libfabric_build.MISSING)
def test_bench_over_libfabric_inside_sbatch(slurm, tmp_path):
    # The libfabric transport bootstraps through MPI, so srun's PMI-2 carries its endpoint
    # names as mpiexec's does; libfabric's tcp provider then connects the tasks.
    out = tmp_path / "out"
    sets = ["--set", "bench.transport=libfabric", "--set", "bench.libfabric_provider=tcp"]
    cmd = shlex.join([*DAQNET, "bench", str(EXAMPLE), *SETS, *sets, "--json", "--out", str(out)])
    status, log = sbatch(slurm, tmp_path, cmd + "\n", tasks=4)
    assert status == 0, log
    doc = json.loads((out / "result.json").read_text())
    assert doc["status"] == "finished" and doc["ranks"] == 4 and doc["events_built"] > 0
    assert doc["transport"] == "libfabric" and doc["fabric_endpoint"].startswith("tcp, ")
    assert doc["lost_fragments"] == doc["corrupt_fragments"] == 0
    assert (
        (out / "command.txt")
        .read_text()
        .startswith("srun --ntasks=4 --kill-on-bad-exit=1 --mpi=pmi2 ")
    )


def test_bench_inside_sbatch(slurm, tmp_path):
    # In a batch job daqnet bench picks srun itself (SLURM_JOB_ID) and adds --mpi=pmi2.
    out = tmp_path / "out"
    cmd = shlex.join([*DAQNET, "bench", str(EXAMPLE), *SETS, "--json", "--out", str(out)])
    status, log = sbatch(slurm, tmp_path, cmd + "\n", tasks=4)
    assert status == 0, log
    doc = json.loads((out / "result.json").read_text())
    assert doc["status"] == "finished" and doc["ranks"] == 4
    assert (
        (out / "command.txt")
        .read_text()
        .startswith("srun --ntasks=4 --kill-on-bad-exit=1 --mpi=pmi2 ")
    )


def test_command_txt_keeps_the_hostfile_that_placed_the_ranks(slurm, tmp_path):
    # A rank order applied as daqnet repair prints it (SLURM_HOSTFILE, arbitrary
    # distribution): command.txt lacked the variable, so running it again placed the ranks
    # by Slurm's default order. It now runs as recorded, into the same directory. Over the
    # MPI transport: with the arbitrary distribution Slurm's PMI-2 tells MPICH every task
    # is on a node of its own, and MPICH's UCX netmod lost commands that came before their
    # receive from MPI_ANY_SOURCE was posted (a rank's fragments never left it, 5 runs in 7).
    out = tmp_path / "out"
    hostfile = tmp_path / "hostfile"
    hostfile.write_text(f"{slurm.host}\n" * 4)
    bench = [*DAQNET, "bench", str(EXAMPLE), *SETS, "--set", "bench.transport=mpi",
             "--set", "bench.launcher_args=--distribution=arbitrary", "--json", "--out", str(out)]  # fmt: skip
    script = (
        f"export SLURM_HOSTFILE={shlex.quote(str(hostfile))}\n{shlex.join(bench)} > /dev/null\n"
        f"bash {shlex.quote(str(out / 'command.txt'))}\n"
        f"{shlex.join([*DAQNET, 'collect', str(out), '--json'])} > {shlex.quote(str(tmp_path / 'c.json'))}\n"
    )
    status, log = sbatch(slurm, tmp_path, script, tasks=4)
    assert status == 0, log
    line = (out / "command.txt").read_text()
    assert line.startswith(f"SLURM_HOSTFILE={hostfile} srun --ntasks=4 "), line
    assert "--distribution=arbitrary" in line
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["status"] == "finished" and doc["ranks"] == 4 and doc["events_built"] > 0


def test_recover_run_with_a_rank_dead_in_start_up_ends_under_srun(slurm, tmp_path):
    # bench.recover under srun: a task dead before MPI_Init was done left the others inside
    # it. The run is stopped naming the rank (srun's SLURM_PROCID), and srun ends the
    # step: the job's script goes on and ends.
    script = tmp_path / "die.py"
    script.write_text(
        "import sys\n"
        "from daqnet import Scenario\n"
        "from daqnet.bench.launch import run\n"
        "from daqnet.errors import DaqnetError\n"
        "sets = ['bench.transport=tcp', 'bench.recover=true', 'bench.heartbeat_seconds=1',\n"
        "        'bench.report_seconds=0.2', *sys.argv[2:]]\n"
        'die = \'if [ "$SLURM_PROCID" = 3 ]; then kill -9 $$; fi; exec "$@"\'\n'
        "try:\n"
        "    run(Scenario.load(sys.argv[1], sets), sys.argv[0] + '.out', wrapper=['/bin/sh', '-c', die, 'x'])\n"
        "except DaqnetError as err:\n"
        "    print(err)\n"
    )
    cmd = shlex.join([sys.executable, str(script), str(EXAMPLE), *QUICK])
    status, log = sbatch(slurm, tmp_path, cmd + "\n", tasks=4)
    assert status == 0, log
    assert (
        "rank 3 (exit status 137, SIGKILL) ended during the start-up, before the run began" in log
    ), log
    assert "srun --ntasks=4" in (Path(str(script) + ".out") / "command.txt").read_text()


def test_bench_from_inside_a_job_step(slurm, tmp_path):
    # `srun daqnet bench` in a batch script (or from `srun --pty bash`): the step holds the
    # allocation's CPUs, and daqnet's own srun waited for them without a word until killed.
    out = tmp_path / "out"
    bench = [*DAQNET, "bench", str(EXAMPLE), *SETS, "--json", "--out", str(out)]
    cmd = shlex.join(["srun", "--ntasks=1", *bench])
    status, log = sbatch(slurm, tmp_path, cmd + "\n", tasks=4)
    assert status == 0, log
    doc = json.loads((out / "result.json").read_text())
    assert doc["status"] == "finished" and doc["ranks"] == 4
    assert " --overlap " in (out / "command.txt").read_text()


def test_prepare_srun_collect(slurm, tmp_path):
    out = tmp_path / "run"
    p = run(slurm, *DAQNET, "bench", EXAMPLE, *SETS, "--prepare", "--out", out)
    assert p.returncode == 0, p.stderr
    srun_line = p.stdout.splitlines()[0]
    assert srun_line.startswith("srun --ntasks=4 --kill-on-bad-exit=1 --mpi=pmi2 ")
    # Exactly what the hint prints works.
    r = run(slurm, *shlex.split(srun_line))
    assert r.returncode == 0, r.stderr
    c = run(slurm, *DAQNET, "collect", out, "--json")
    assert c.returncode == 0, c.stderr
    doc = json.loads(c.stdout)
    assert doc["status"] == "finished" and doc["ranks"] == 4
    # The same without --mpi (Slurm's default 'none'): the ranks refuse, collect refuses.
    for old in out.glob("rank-*"):
        old.unlink()
    (out / "launch.json").unlink()
    (out / "result.json").unlink()
    bare = srun_line.replace(" --mpi=pmi2", "")
    r = run(slurm, *shlex.split(bare))
    assert r.returncode != 0
    assert r.stderr.count("prepared for 4 ranks") == 1  # one line, not one per task
    c = run(slurm, *DAQNET, "collect", out)
    assert c.returncode == 2 and "--mpi=pmi2" in c.stderr
    # Two tasks for a run prepared for four, over pmi2: the count is at fault, and it was
    # blamed on the process manager interface.
    r = run(slurm, *shlex.split(srun_line.replace("--ntasks=4", "--ntasks=2")))
    assert r.returncode != 0
    assert "(srun started 2 tasks): start it with srun --ntasks=4" in r.stderr
    assert "process manager interface" not in r.stderr


def test_scan_under_srun(slurm, tmp_path):
    args = ["scan", LHCB, "--set", "fabric.hosts=72",
            "--vary", "placement.order=topology,hostname,random", "--jobs", "1"]  # fmt: skip
    r = run(slurm, "srun", "--ntasks=2", "--mpi=pmi2", *DAQNET, *args, "--out", tmp_path / "a")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "a" / "scan.json").read_text())
    assert doc["status"] == "finished" and doc["ranks"] == 2 and len(doc["rows"]) == 3
    # Without PMI every task would be a scan of its own: refused, with the cause.
    r = run(slurm, "srun", "--ntasks=2", *DAQNET, *args, "--out", tmp_path / "b")
    assert r.returncode == 2
    assert "srun started 2 tasks but MPI" in r.stderr and "srun --mpi=pmi2" in r.stderr
    assert not (tmp_path / "b" / "scan.json").exists()


def test_scan_inside_sbatch(slurm, tmp_path):
    cmd = shlex.join(["srun", "--mpi=pmi2", *DAQNET, "scan", str(LHCB), "--set",
                      "fabric.hosts=72", "--vary", "fabric.taper=1:1,2:1", "--jobs", "1",
                      "--out", str(tmp_path / "o")])  # fmt: skip
    status, log = sbatch(slurm, tmp_path, cmd + "\n", tasks=2)
    assert status == 0, log
    doc = json.loads((tmp_path / "o" / "scan.json").read_text())
    assert doc["status"] == "finished" and doc["ranks"] == 2 and len(doc["rows"]) == 2


def test_repair_launch_line_runs_under_srun(slurm, tmp_path):
    # The srun line daqnet repair prints (SLURM_HOSTFILE + arbitrary distribution) is one
    # this Slurm accepts: tasks go to the hosts of the file, one per line (here the one node).
    from daqnet.repair.launch_lines import launch_lines

    hostfile = tmp_path / "hostfile"
    hostfile.write_text(f"{slurm.host}\n" * 3)
    line = launch_lines(hostfile, [slurm.host] * 3, tmp_path / "s.toml")["srun"]
    assert line.endswith("daqnet-evb RUN/run.cfg --out RUN")
    program = line[line.index(" ", line.index("--ntasks")) + 1 :]
    cmd = line.replace(program, "printenv SLURM_PROCID SLURMD_NODENAME")
    r = run(slurm, "bash", "-c", cmd, timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout.split()
    assert sorted(out[0::2]) == ["0", "1", "2"] and set(out[1::2]) == {slurm.host}
    # And the line runs the event builder as printed (it lacked --mpi=pmi2: every task
    # started as a rank 0 of 1, refused).
    run_dir = tmp_path / "RUN"
    p = run(slurm, *DAQNET, "bench", EXAMPLE, *SETS, "--set", "bench.ranks=3",
            "--set", "bench.processes_per_node=1", "--prepare", "--out", run_dir)  # fmt: skip
    assert p.returncode == 0, p.stderr
    r = run(slurm, "bash", "-c", line.replace("RUN", str(run_dir)), timeout=180)
    assert r.returncode == 0, r.stderr
    c = run(slurm, *DAQNET, "collect", run_dir, "--json")
    assert c.returncode == 0, c.stderr
    assert json.loads(c.stdout)["status"] == "finished"


def _kill_task(out: Path, procid: int) -> None:
    """SIGKILL the daqnet-evb task of SLURM_PROCID `procid` of the run in `out`, once its
    event manager built 100 events."""
    import os
    import signal
    import time

    end = time.monotonic() + 60
    while time.monotonic() < end:
        doc = json.loads(p.read_text()) if (p := out / "rank-0.json").exists() else {}
        em = [u for u in doc.get("units", []) if u["unit"] == "em"]
        if em and em[0]["events_done"] > 100:
            break
        time.sleep(0.1)
    for pid in os.listdir("/proc"):
        try:
            proc_dir = Path("/proc", pid)
            if (proc_dir / "comm").read_text().strip() != "daqnet-evb":
                continue
            if str(out) not in (proc_dir / "cmdline").read_text():
                continue
            env = (proc_dir / "environ").read_text().split("\0")
        except OSError:
            continue
        if f"SLURM_PROCID={procid}" in env:
            os.kill(int(pid), signal.SIGKILL)
            return
    raise AssertionError(f"no task of rank {procid} found")


def test_a_dead_task_ends_the_step(slurm, tmp_path):
    # Under srun a task's death ended nothing: the others ran 10 s more to their fragment
    # time-out, the dead time went into the figures, and the death read as lost data.
    import time

    out = tmp_path / "out"
    sets = ["bench.launcher=srun", "bench.seconds=30", "bench.warmup_seconds=0.1",
            "bench.fragment_bytes=65536", "bench.report_seconds=0.2"]  # fmt: skip
    cmd = [*DAQNET, "bench", str(EXAMPLE), "--json", "--out", str(out)]
    proc = subprocess.Popen([*cmd, *(a for s in sets for a in ("--set", s))], env=slurm.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        _kill_task(out, 2)
        t0 = time.monotonic()
        stdout, stderr = proc.communicate(timeout=120)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "--kill-on-bad-exit=1" in (out / "command.txt").read_text()
    assert proc.returncode == 1, stderr
    r = json.loads(stdout)
    assert r["status"] == "failed", r["errors"]
    assert any(e.startswith("rank 2: stopped without finishing") for e in r["errors"]), r
    assert r["lost_fragments"] == 0, r["errors"]  # a death, not lost data
    assert took < 25, took  # the step ended; a rank's stop waits at most 10 s for the others


def test_recovery_under_srun(slurm, tmp_path):
    # bench.recover under srun (--no-kill, each task under the supervising shell): a builder's
    # task killed mid-run, the step goes on without it.
    out = tmp_path / "out"
    sets = ["bench.launcher=srun", "bench.transport=tcp", "bench.recover=true",
            "bench.processes_per_node=2", "bench.seconds=4", "bench.warmup_seconds=0.1",
            "bench.fragment_bytes=65536", "bench.report_seconds=0.2",
            "bench.heartbeat_seconds=1"]  # fmt: skip
    cmd = [*DAQNET, "bench", str(EXAMPLE), "--json", "--out", str(out)]
    proc = subprocess.Popen([*cmd, *(a for s in sets for a in ("--set", s))], env=slurm.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        _kill_task(out, 3)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    r = json.loads(stdout)
    assert r["status"] == "degraded", r["errors"]
    assert [(f["rank"], f["role"]) for f in r["failures"]] == [(3, "bu")]
    assert r["failures"][0]["recovery_seconds"] < 2
    assert r["lost_fragments"] == r["duplicate_fragments"] == r["corrupt_fragments"] == 0
    assert "--no-kill" in (out / "command.txt").read_text()
