"""What both simulation modes share: the network model of a routing, the context of a result,
and the progress callback the core calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _core
from ..errors import DaqnetError
from ..fabric import Fabric
from ..placement import Placement
from ..routing import Routing
from ..scenario import Scenario
from ..workload import Workload

__all__ = ["Progress", "Stages", "context", "network_model", "report"]

Progress = Callable[[int, int], object] | None


def network_model(scenario: Scenario, routing: Routing) -> _core.simulate.NetworkModel:
    s = scenario["simulate"]
    try:
        return _core.simulate.NetworkModel(routing._core, s["injection_gbps"], s["ejection_gbps"])
    except ValueError as err:
        raise DaqnetError(f"{scenario.source}: {err}") from None


def context(
    scenario: Scenario, fabric: Fabric, routing: Routing, placement: Placement
) -> dict[str, Any]:
    return {
        "scenario": scenario.source,
        "name": scenario.name,
        "fabric": fabric.describe(),
        "routing": routing.engine,
        "placement": placement.describe(),
        "config": scenario.effective(),
    }


def report(progress: Progress) -> Callable[[int, int], bool]:
    def report(done: int, total: int) -> bool:
        if progress is not None:
            progress(done, total)
        return True

    return report


#: (fabric, routing, placement, workload), as Scenario.build() gives them
Stages = tuple[Fabric, Routing, Placement, Workload]
