"""A real one-node Slurm cluster for tests: munged, slurmctld and slurmd from Debian's
packages (slurmctld slurmd slurm-client munge), started in a temporary directory with the
configuration in tests/slurm/ and stopped afterwards. Clients find it through SLURM_CONF.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

TEMPLATE = Path(__file__).parent / "slurm" / "slurm.conf.in"
DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sbatch", "sinfo", "scontrol")


def missing() -> str | None:
    """Why a cluster cannot be started here, or None."""
    absent = [d for d in DAEMONS if not shutil.which(d) and not Path("/usr/sbin", d).exists()]
    if absent:
        return (
            f"Slurm is not installed ({', '.join(absent)} missing): "
            "apt-get install slurmctld slurmd slurm-client munge"
        )
    if os.geteuid() != 0:
        return "slurmd must run as root to start job steps"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _exe(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


class SlurmCluster:
    def __init__(self, directory: Path):
        self.dir = directory
        self.host = socket.gethostname().split(".")[0]
        self.conf = directory / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        for key in [k for k in self.env if k.startswith(("SLURM_", "SBATCH_", "SRUN_"))]:
            if key != "SLURM_CONF":
                del self.env[key]  # a test run inside a real job must not leak into this one

    def start(self, timeout: float = 60) -> None:
        d = self.dir
        for sub in ("state", "spool"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        key = d / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        text = TEMPLATE.read_text()
        for name, value in {
            "HOST": self.host,
            "DIR": str(d),
            "CTLD_PORT": str(_free_port()),
            "SLURMD_PORT": str(_free_port()),
            "FIRST_JOB": str(1000 + int.from_bytes(os.urandom(3)) % 1_000_000),
        }.items():
            text = text.replace(f"@{name}@", value)
        self.conf.write_text(text)
        self._run(
            _exe("munged"),
            "--force",
            f"--socket={d / 'munge.socket'}",
            f"--key-file={key}",
            f"--log-file={d / 'munged.log'}",
            f"--pid-file={d / 'munged.pid'}",
            f"--seed-file={d / 'munged.seed'}",
        )
        self._run(_exe("slurmctld"), "-f", str(self.conf))
        self._run(_exe("slurmd"), "-f", str(self.conf), "-N", self.host)
        end = time.monotonic() + timeout
        state = ""
        while time.monotonic() < end:
            state = subprocess.run(
                ["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=self.env
            ).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.5)
        logs = "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
            for p in sorted(d.glob("*.log"))
        )
        self.stop()
        raise RuntimeError(f"the test Slurm cluster did not come up (node state {state!r})\n{logs}")

    def _run(self, *cmd: str) -> None:
        r = subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=30)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr.strip()}")

    def stop(self) -> None:
        subprocess.run(
            ["scontrol", "shutdown"], capture_output=True, env=self.env, timeout=30, check=False
        )
        for name in ("slurmd.pid", "slurmctld.pid", "munged.pid"):
            self._kill(self.dir / name)

    @staticmethod
    def _kill(pidfile: Path, wait: float = 10) -> None:
        try:
            pid = int(pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return
        try:
            os.kill(pid, 15)
        except ProcessLookupError:
            return
        end = time.monotonic() + wait
        while time.monotonic() < end:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
