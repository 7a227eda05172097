"""``daqnet scan``: ``daqnet simulate`` (or ``daqnet bench``) over every combination of
chosen scenario values.

A scan is planned in full before anything runs (:mod:`.plan`); points run in a process pool
on this machine (:mod:`.local`), or spread over MPI ranks when the command itself was started
by ``mpiexec``/``srun`` (:mod:`.mpi`); measured points run the real event builder one run at
a time, repeated, optionally beside their prediction (:mod:`.measure`). Each finished point
is one row of a tidy table
(:mod:`.collector`); ``scan.csv`` and ``scan.json`` are rewritten as rows arrive, so a long
scan never loses finished rows. See docs/scan.md.
"""

from __future__ import annotations

from ..scenario import Axis, parse_vary
from .collector import Collector
from .local import LocalRunner, available_cores, run_local, run_point, run_scan
from .metrics import HIGHER_IS_BETTER, METRICS, best_row
from .plan import Plan, Point, ScanRequest, make_plan
from .result import ScanResult

__all__ = [
    "HIGHER_IS_BETTER",
    "METRICS",
    "Axis",
    "Collector",
    "LocalRunner",
    "Plan",
    "Point",
    "ScanRequest",
    "ScanResult",
    "available_cores",
    "best_row",
    "make_plan",
    "parse_vary",
    "run_local",
    "run_point",
    "run_scan",
]
