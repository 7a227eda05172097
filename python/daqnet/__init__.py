"""daqnet: plan, simulate and benchmark event-building networks.

The data flow is one way: scenario → fabric → routing → placement → workload → analysis.
Each stage is a value that can be built, inspected and saved on its own::

    import daqnet
    fab = daqnet.fat_tree(radix=36, hosts=540, naming="shuffled", naming_seed=1)
    rt = daqnet.routing.dmodk(fab)
    pl = daqnet.placement.hostname(fab)
    wl = daqnet.workload.event_building(pl.ranks, schedule="barrel")
    report = daqnet.conflicts(rt, pl, wl)
    print(report.total_conflicts)
"""

from __future__ import annotations

from . import _quiet_start  # noqa: F401  (first: it handles Ctrl-C during the imports below)

try:
    from . import _core  # noqa: F401
except ImportError as err:  # pragma: no cover - only without a build
    raise ImportError(
        "daqnet's compiled core (daqnet._core) is missing: install the package with "
        "'pip install .' from the repository (it builds the C++ core) rather than "
        "importing it from the source tree"
    ) from err

from . import placement, routing, workload
from .analysis import ConflictReport, conflicts
from .errors import DaqnetError
from .fabric import Fabric, fat_tree
from .scenario import Scenario

__version__ = "0.1.0"

__all__ = [
    "ConflictReport",
    "DaqnetError",
    "Fabric",
    "Scenario",
    "__version__",
    "conflicts",
    "fat_tree",
    "placement",
    "routing",
    "workload",
]
