"""Whether a workload's largest step fits in memory, said before it is built.

One step of every ordered pair (workload.kind = "all-to-all", or an "all-at-once" gather)
over 65,536 ranks is 4.3 billion flows: the analysis failed with a traceback
(std::bad_alloc), and the step simulation grew to the machine's 24 GB, deaf to Ctrl-C
while it built the step, until the kernel killed it.
"""

from __future__ import annotations

import os

from .errors import DaqnetError
from .workload import Workload

__all__ = [
    "ANALYSIS_BYTES_PER_FLOW",
    "SIMULATION_BYTES_PER_FLOW",
    "available_bytes",
    "check_step_memory",
    "physical_bytes",
]

#: What a flow of the step in hand costs, measured on all-to-all steps of 1 and 4 M flows
#: over a 3-level tree: the analysis holds the step's (source, destination) pairs (8 B);
#: the step simulation its flows, routes and solver state (940 B with the contention-free
#: run, simulate.ideal; 590 B without).
ANALYSIS_BYTES_PER_FLOW = 8
SIMULATION_BYTES_PER_FLOW = 1000
SIMULATION_BYTES_PER_FLOW_NO_IDEAL = 600


def available_bytes() -> int:
    """Memory available to a new allocation (MemAvailable), else the physical memory; 0 when
    neither is known."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return physical_bytes()


def physical_bytes() -> int:
    """The machine's physical memory; 0 when not known."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 0


def check_step_memory(workload: Workload, bytes_per_flow: float, what: str) -> None:
    """A DaqnetError when `what` (e.g. "the step simulation") cannot hold the workload's
    largest step in the memory available."""
    flows = workload.largest_step_flows
    have = available_bytes()
    if not flows or not have or flows * bytes_per_flow <= have:
        return
    need = flows * bytes_per_flow
    raise DaqnetError(
        f"{what} of {workload.describe()}: one step holds {flows:,} flows (every ordered pair "
        f"of {workload.ranks:,} ranks) and needs about {need / 1e9:,.1f} GB "
        f"({bytes_per_flow:,.0f} B a flow), more than the {have / 1e9:,.1f} GB available: place "
        "fewer ranks (placement.ranks, workload.tasks_per_node), or spread the pairs over "
        "steps (workload.kind = 'event-building' with schedule 'barrel' or 'random')"
    )
