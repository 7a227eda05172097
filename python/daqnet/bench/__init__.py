"""``daqnet bench``: the real event builder (daqnet-evb), launched and collected.

:mod:`.config` turns a scenario into the run description daqnet-evb reads (every check a
user can get wrong happens there, before launch); :mod:`.launch` starts the ranks with
mpiexec or srun and supervises them; :mod:`.collect` gathers what the ranks wrote, complete
or not. See docs/bench.md.
"""

from __future__ import annotations

from .collect import collect, latency_percentiles, read_run_config
from .config import bench_ranks, run_config, run_config_text, write_run_config, write_scenario
from .launch import (
    check_transport_built,
    executable,
    first_error,
    keeps_going,
    launch_command,
    mpiexec,
    run,
    srun_command,
    uses_mpich_wheel,
)
from .result import BenchResult

__all__ = [
    "BenchResult",
    "bench_ranks",
    "check_transport_built",
    "collect",
    "executable",
    "first_error",
    "keeps_going",
    "latency_percentiles",
    "launch_command",
    "mpiexec",
    "read_run_config",
    "run",
    "run_config",
    "run_config_text",
    "srun_command",
    "uses_mpich_wheel",
    "write_run_config",
    "write_scenario",
]
