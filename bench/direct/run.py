#!/usr/bin/env python3
"""Benchmark: one iteration of a 2-D stencil on a 300-supernode PERCS network, max-min model.

    python3 bench/direct/run.py           # full benchmark (300 supernodes, 307,200 tasks)
    python3 bench/direct/run.py --check   # small case, results only (CI; 1 on mismatch)

9,600 nodes x 32 tasks, direct routing, 2 MiB messages: ~1.2 million flows, of which
those between nodes enter the network. Two mappings: default (rank order: few distinct
rates) and random-node (whole nodes shuffled: many rates, many re-sharing events). Timed on one core, with the peak
memory of the process:
  * daqnet's step simulation (rates re-shared as flows end: the iteration time),
  * daqnet's static max-min rates of the same flows (one solve, routes included),
  * the baseline: textbook progressive filling in numpy (one bottleneck level per round,
    vectorised over flows) on the same flow-link incidence, routes built beforehand.
The ratio is baseline time over daqnet's static solve; both must give the same rates.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from daqnet import _core
from daqnet.fabric import percs
from daqnet.mapping import map_tasks
from daqnet.routing import group
from daqnet.workload import grid, stencil

TARGET_SECONDS = 10.0
MESSAGE = 2 * 2**20


def progressive_filling(
    capacity: np.ndarray, flow_of: np.ndarray, link_of: np.ndarray, flows: int
) -> np.ndarray:
    """Max-min rates: raise every unfrozen flow together; freeze the flows of the links
    that fill first; repeat. (flow_of[i], link_of[i]) are the incidences."""
    rate = np.zeros(flows)
    frozen = np.zeros(flows, dtype=bool)
    remaining = capacity.astype(float).copy()
    while not frozen.all():
        live = ~frozen[flow_of]
        users = np.bincount(link_of[live], minlength=len(capacity))
        share = np.full(len(capacity), np.inf)
        busy = users > 0
        share[busy] = remaining[busy] / users[busy]
        level = share.min()
        rate[~frozen] += level
        remaining -= level * users
        full = busy & (remaining <= 1e-9 * capacity)
        hit = np.zeros(flows, dtype=bool)
        hit[flow_of[live & full[link_of]]] = True
        frozen |= hit
    return rate


def case(supernodes: int, mapping: str):
    fab = percs(supernodes)
    routing = group(fab, "direct")
    tasks = fab.num_hosts * 32
    dims = grid("stencil2d", tasks)
    return fab, routing, stencil(dims), map_tasks(fab, mapping, 32, dims, seed=1)


def incidence(fab, routing, work, placement):
    """Flow-link incidence of the step's network flows (routes per host pair, reused)."""
    flows = work.step(1)
    a, b = placement[flows[:, 0]], placement[flows[:, 1]]
    net = a != b
    a, b = a[net], b[net]
    pairs, inverse = np.unique(a.astype(np.int64) * fab.num_hosts + b, return_inverse=True)
    routes = [routing.path(int(p // fab.num_hosts), int(p % fab.num_hosts)) for p in pairs]
    lengths = np.array([len(r) for r in routes])
    flat = np.concatenate(routes)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    n = len(a)
    per_flow = lengths[inverse]
    flow_of = np.repeat(np.arange(n), per_flow)
    offset = np.arange(len(flow_of)) - np.repeat(np.cumsum(per_flow) - per_flow, per_flow)
    link_of = flat[starts[inverse][flow_of] + offset]
    return flow_of, link_of, n


def run(supernodes: int, mapping: str, check: bool) -> int:
    t0 = time.perf_counter()
    fab, routing, work, placement = case(supernodes, mapping)
    model = _core.simulate.NetworkModel(routing._core, 0.0, 0.0)
    build = time.perf_counter() - t0

    t = time.perf_counter()
    steps = _core.simulate.simulate_steps(model, placement, work._core, MESSAGE, False, None)
    dynamic = time.perf_counter() - t
    t = time.perf_counter()
    rates, _alone, _local = _core.simulate.step_flow_rates(model, placement, work._core, 0)
    static = time.perf_counter() - t

    flow_of, link_of, n = incidence(fab, routing, work, placement)
    capacity = fab.links()["gbps"] * 1e9 / 8
    t = time.perf_counter()
    ref = progressive_filling(capacity, flow_of, link_of, n) * 8 / 1e9
    naive = time.perf_counter() - t
    same = len(ref) == len(rates) and np.allclose(np.sort(ref), np.sort(rates), rtol=1e-9)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"PERCS {supernodes} supernodes, {fab.num_hosts:,} nodes, {work.ranks:,} tasks, "
        f"{mapping} mapping: "
        f"{n:,} network flows of {int(steps.flows[0]):,}; built in {build:.2f} s"
    )
    print(f"  iteration time (max-min, re-shared as flows end): {steps.total_seconds * 1e3:.3f} ms")
    print(
        f"  daqnet step simulation   {dynamic:7.2f} s  (target < {TARGET_SECONDS:g} s on one core)"
    )
    print(f"  daqnet static max-min    {static:7.2f} s  (routes included)")
    print(f"  numpy progressive filling{naive:7.2f} s  (routes built beforehand)")
    print(f"  ratio naive / daqnet static: x{naive / static:.1f}; rates equal: {same}")
    print(f"  peak memory {peak:,.0f} MB")
    if not same:
        print("MISMATCH: daqnet's rates differ from progressive filling")
        return 1
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="small case, results only")
    ap.add_argument("--supernodes", type=int, default=300)
    args = ap.parse_args()
    size = 4 if args.check else args.supernodes
    code = max(run(size, m, args.check) for m in ("default", "random-node"))
    if args.check and code == 0:
        print("ok")
    return code


if __name__ == "__main__":
    sys.exit(main())
