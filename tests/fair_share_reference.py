"""Slow, obviously correct references for the flow-level model (exact rational arithmetic).

``max_min`` is the textbook progressive filling, one bottleneck at a time, with Fractions.
``is_max_min`` checks the defining property of an allocation instead of computing one:
feasible, and every flow has a saturated resource (or its own cap) at which no flow gets
more. ``flow_times`` plays flows that start together event by event with ``max_min``.
"""

from __future__ import annotations

from fractions import Fraction


def max_min(capacity, flows, caps=None):
    """Rates (Fractions or None for unlimited) by progressive filling."""
    n = len(flows)
    caps = caps or [None] * n
    rate = [Fraction(0)] * n
    frozen = [False] * n
    level = Fraction(0)
    while not all(frozen):
        # The next level at which something stops a flow: a resource fills or a cap is met.
        best = None
        for r, c in enumerate(capacity):
            if c is None:
                continue
            users = [f for f in range(n) if not frozen[f] for _ in range(flows[f].count(r))]
            if not users:
                continue
            used = sum(rate[f] * flows[f].count(r) for f in range(n) if frozen[f])
            fill = (Fraction(c) - used) / len(users)
            best = fill if best is None else min(best, fill)
        for f in range(n):
            if not frozen[f] and caps[f] is not None:
                best = Fraction(caps[f]) if best is None else min(best, Fraction(caps[f]))
        if best is None:  # only unlimited resources: the rest is unlimited
            for f in range(n):
                if not frozen[f]:
                    rate[f], frozen[f] = None, True
            break
        level = max(level, best)
        for f in range(n):
            if not frozen[f]:
                rate[f] = level
        # Freeze flows on full resources and flows at their caps.
        for r, c in enumerate(capacity):
            if c is None:
                continue
            used = sum(rate[f] * flows[f].count(r) for f in range(n) if r in flows[f])
            if used >= c:
                for f in range(n):
                    if r in flows[f]:
                        frozen[f] = True
        for f in range(n):
            if caps[f] is not None and rate[f] >= caps[f]:
                frozen[f] = True
    return rate


def is_max_min(capacity, flows, caps, rates, tol=1e-9):
    """The characterization of max-min fairness, checked on floats."""
    load = [0.0] * len(capacity)
    for f, res in enumerate(flows):
        for r in res:
            load[r] += rates[f]
    for r, c in enumerate(capacity):
        if load[r] > c * (1 + tol) + tol:
            return False
    for f, res in enumerate(flows):
        if caps is not None and rates[f] >= caps[f] * (1 - tol):
            continue
        ok = False
        for r in res:
            full = load[r] >= capacity[r] * (1 - tol)
            top = max(rates[g] for g, other in enumerate(flows) if r in other)
            if full and rates[f] >= top * (1 - tol):
                ok = True
        if not ok:
            return False
    return True


def flow_times(capacity, flows, sizes):
    """Completion times of flows that all start at 0 (resources per flow, bytes per flow):
    rates from ``max_min`` after every completion, exact arithmetic throughout."""
    left = {f: Fraction(sizes[f]) for f in range(len(flows))}
    done, now = {}, Fraction(0)
    while left:
        active = sorted(left)
        rates = max_min(capacity, [flows[f] for f in active])
        dt = min(left[f] / r for f, r in zip(active, rates, strict=True))
        now += dt
        for f, r in zip(active, rates, strict=True):
            left[f] -= r * dt
            if left[f] == 0:
                done[f] = now
                del left[f]
    return [done[f] for f in range(len(flows))]
