"""Command lines that run the ranks on hosts in a given order: Slurm's arbitrary
distribution (SLURM_HOSTFILE lists one host per task, in rank order) and MPICH's Hydra and
Open MPI host files (ranks follow the file's lines with one slot per host; with several
tasks a host, Open MPI's sequential mapper, and no Hydra line)."""

from __future__ import annotations

import shlex
from pathlib import Path

from ..io.hostlist import collect

__all__ = ["launch_lines"]


def _program() -> str:
    """daqnet-evb as daqnet bench --prepare prints it: its full path where it is installed
    (a bare name needs the venv on every node's PATH)."""
    from ..bench.launch import executable
    from ..errors import DaqnetError

    try:
        return f"{shlex.quote(executable())} RUN/run.cfg --out RUN"
    except DaqnetError:  # no event builder built here: the lines still say what to run
        return "daqnet-evb RUN/run.cfg --out RUN"


def launch_lines(hostfile: Path, names: list[str], scenario: Path) -> dict[str, str]:
    from ..bench.launch import uses_mpich_wheel

    n = len(names)
    hf = shlex.quote(str(hostfile))
    nodes = shlex.quote(collect(sorted(set(names))))
    program = _program()
    # As daqnet bench launches it: the mpich wheel's MPI speaks PMI-2 only (without it, each
    # task starts as a rank 0 of 1 and daqnet-evb refuses the run).
    mpi = " --mpi=pmi2" if uses_mpich_wheel() else ""
    lines = {
        "prepare": f"daqnet bench {shlex.quote(str(scenario))} --set bench.ranks={n} --prepare --out RUN",
        "sbatch": f"sbatch --nodes={len(set(names))} --nodelist={nodes} JOB_SCRIPT",
        "srun": f"SLURM_HOSTFILE={hf} srun --distribution=arbitrary --ntasks={n}{mpi} {program}",
    }
    if len(set(names)) < n:
        # Several tasks a host, in no block order (a host on lines 2 and 3, another on 1):
        # Hydra's one slot per host, round robin, puts rank 2 elsewhere; Open MPI's
        # sequential mapper places one rank per line, as the file says.
        lines["openmpi"] = f"mpirun --hostfile {hf} --map-by seq -np {n} {program}"
        return lines
    lines["mpiexec"] = f"mpiexec -f {hf} -ppn 1 -n {n} {program}"
    lines["openmpi"] = f"mpirun --hostfile {hf} --map-by node -np {n} {program}"
    return lines
