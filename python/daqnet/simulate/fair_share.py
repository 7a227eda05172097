"""Max-min fair rates of concurrent flows (progressive filling, in the C++ core)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from .. import _core
from ..errors import DaqnetError
from ..routing import Routing

__all__ = ["fair_share", "flow_rates"]


def fair_share(
    capacity: npt.ArrayLike,
    flows: Iterable[npt.ArrayLike],
    caps: npt.ArrayLike | None = None,
) -> npt.NDArray[np.float64]:
    """Max-min fair rate of every flow.

    `capacity[r]` is the capacity of resource r (any unit; ``inf`` allowed), `flows[f]` the
    resources flow f uses, `caps[f]` an optional limit of flow f (``inf`` = none). Rates
    come back in the unit of the capacities. Progressive filling: all flows grow together;
    when a resource is full or a flow reaches its cap, those flows stop growing.
    """
    cap = np.ascontiguousarray(capacity, dtype=np.float64)
    lists = [np.asarray(f, dtype=np.int64).ravel() for f in flows]
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in lists], out=offsets[1:])
    res = np.concatenate(lists).astype(np.int32) if lists else np.zeros(0, dtype=np.int32)
    per_flow = None
    if caps is not None:
        per_flow = np.ascontiguousarray(caps, dtype=np.float64)
        if per_flow.shape != (len(lists),):
            raise DaqnetError(f"fair_share: {len(per_flow)} caps for {len(lists)} flows")
    try:
        return _core.simulate.max_min_rates(cap, offsets, res, per_flow)
    except ValueError as err:
        raise DaqnetError(str(err)) from None


def flow_rates(
    routing: Routing,
    pairs: Iterable[tuple[int, int]],
    injection_gbps: float = 0.0,
    ejection_gbps: float = 0.0,
    caps_gbps: Sequence[float] | None = None,
) -> np.ndarray:
    """Max-min fair rates in Gb/s of flows between hosts (src, dst) routed by `routing`.

    Links have their own rates; `injection_gbps`/`ejection_gbps` add a NIC limit per host
    (0 = the host's link only); `caps_gbps` limits single flows. Flows within one host get
    their cap (or ``inf``).
    """
    model = _core.simulate.NetworkModel(routing._core, injection_gbps, ejection_gbps)
    flows: list[npt.ArrayLike] = [model.resources(a, b) if a != b else [] for a, b in pairs]
    caps = None if caps_gbps is None else np.asarray(caps_gbps, dtype=np.float64) * 1e9 / 8
    return fair_share(model.capacity(), flows, caps) * 8 / 1e9
