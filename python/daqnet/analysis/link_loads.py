"""Link loads per link class: how the bytes of a workload spread over the host, LL, LR and
D links of a PERCS network, the local and global links of a dragonfly, or the stages of a
fat tree (host->leaf, leaf->spine, spine->core and back)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _core
from ..fabric import Fabric
from ..placement import Placement
from ..routing import Routing
from ..workload import Workload

__all__ = ["class_loads", "link_bytes"]


def link_bytes(
    routing: Routing,
    placement: Placement,
    workload: Workload,
    message_bytes: float,
    max_steps: int = -1,
) -> np.ndarray:
    """Bytes every directed link carries over the steps (a flow split over its paths by
    weight; flows between tasks on one host carry nothing)."""
    return np.asarray(
        _core.analysis.link_bytes(
            routing._core, placement.hosts, workload._core, message_bytes, max_steps
        )
    )


def class_loads(fabric: Fabric, bytes_per_link: np.ndarray) -> list[dict[str, Any]]:
    """One row per link class: links, share used, bytes per link (mean, median, 99th
    percentile, max over the class's links, unused ones included), the total, and the
    busiest link's time at its rate (a lower bound on the time of the steps counted)."""
    rows = []
    for name, index, gbps in fabric.links_by_class():
        b = bytes_per_link[index]
        busy = b * 8 / (gbps * 1e9)
        rows.append(
            {
                "class": name,
                "links": len(index),
                "used": float((b > 0).mean()),
                "mean_bytes": float(b.mean()),
                "median_bytes": float(np.median(b)),
                "p99_bytes": float(np.percentile(b, 99)),
                "max_bytes": float(b.max()),
                "total_bytes": float(b.sum()),
                "max_busy_seconds": float(busy.max()),
            }
        )
    return rows
