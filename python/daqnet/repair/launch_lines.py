"""Command lines that run the ranks on hosts in a given order: Slurm's arbitrary
distribution (SLURM_HOSTFILE lists one host per task, in rank order) and MPICH's Hydra and
Open MPI host files (ranks follow the file's lines with one slot per host)."""

from __future__ import annotations

import shlex
from pathlib import Path

from ..io.hostlist import collect

__all__ = ["launch_lines"]

_PROGRAM = "daqnet-evb RUN/run.cfg --out RUN"


def launch_lines(hostfile: Path, names: list[str], scenario: Path) -> dict[str, str]:
    n = len(names)
    hf = shlex.quote(str(hostfile))
    nodes = shlex.quote(collect(names))
    return {
        "prepare": f"daqnet bench {shlex.quote(str(scenario))} --set bench.ranks={n} --prepare --out RUN",
        "sbatch": f"sbatch --nodes={n} --nodelist={nodes} JOB_SCRIPT",
        "srun": f"SLURM_HOSTFILE={hf} srun --distribution=arbitrary --ntasks={n} {_PROGRAM}",
        "mpiexec": f"mpiexec -f {hf} -ppn 1 -n {n} {_PROGRAM}",
        "openmpi": f"mpirun --hostfile {hf} --map-by node -np {n} {_PROGRAM}",
    }
