#!/usr/bin/env python3
"""Benchmark of daqnet emulate's set-up (docs/emulate.md), as root.

    python3 bench/emulate/run.py           # 4, 8, 16 and 32 hosts; the cost of a shaped link
    python3 bench/emulate/run.py --check   # 4 hosts: built, routes in place, torn down (CI)

1. Set-up and teardown time of an emulated two-level fat tree against host count, beside the
   floor measured in the same run: iproute2 making the same namespaces and veth pairs and
   nothing else (one batch each, no addresses, routes, sysctls or shaping). Ratio = daqnet's
   full set-up / that floor.
2. The share of one core a shaped link costs: one TCP stream between two namespaces over a
   veth shaped to 100 Mbit/s as daqnet shapes it (one packet per segment, htb and a queue
   per source), CPU time of the sender and receiver processes (where the kernel's TCP,
   veth and htb work is counted) per second of the transfer, against the same stream
   unshaped for the same bytes (the hardware limit of this machine's veth path, offloads
   on). Reported: core share at 100 Mbit/s, and the achieved rate / configured rate (the
   shaper's accuracy).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from daqnet.emulate import netns, plan
from daqnet.fabric import fat_tree
from daqnet.routing import dmodk
from provenance import git_commit, machine, write_json

HERE = Path(__file__).resolve().parent


def _tree(hosts: int):
    radix = 4 if hosts <= 4 else 8 if hosts <= 16 else 16
    fabric = fat_tree(radix=radix, hosts=hosts, levels=2, link_gbps=100)
    return fabric, dmodk(fabric)


def setup_time(hosts: int) -> dict[str, float]:
    fabric, routing = _tree(hosts)
    topo = plan(fabric, routing, netns.new_prefix())
    t0 = time.perf_counter()
    netns.create(topo, 1000.0, "fair", 9000)
    t1 = time.perf_counter()
    netns.teardown(topo.prefix)
    t2 = time.perf_counter()
    # The floor: the same namespaces and cables, nothing else.
    names = [f"{topo.prefix}-f{i}" for i in range(len(topo.namespaces))]
    b0 = time.perf_counter()
    subprocess.run(["ip", "-batch", "-"], input="".join(f"netns add {n}\n" for n in names),
                   text=True, check=True)  # fmt: skip
    subprocess.run(
        ["ip", "-batch", "-"],
        input="".join(
            f"link add {a.ifname} netns {names[a.node]} type veth peer name {b.ifname} "
            f"netns {names[b.node]}\n"
            for a, b in topo.cables()
        ),
        text=True,
        check=True,
    )
    b1 = time.perf_counter()
    subprocess.run(["ip", "-force", "-batch", "-"], input="".join(f"netns del {n}\n" for n in names),
                   text=True, check=False)  # fmt: skip
    return {
        "hosts": hosts,
        "namespaces": len(names),
        "cables": len(topo.cables()),
        "setup_s": t1 - t0,
        "teardown_s": t2 - t1,
        "floor_s": b1 - b0,
        "ratio": (t1 - t0) / (b1 - b0),
    }


def _children_cpu() -> float:
    """CPU seconds of the waited-for children so far (the kernel's TCP, veth and htb work
    runs mostly in the sender's and receiver's contexts and is counted there)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def stream_cost(shaped: bool, nbytes: int) -> dict[str, float]:
    """One TCP stream of nbytes over one veth between two namespaces."""
    prefix = netns.new_prefix()
    a, b = f"{prefix}-n0", f"{prefix}-n1"
    cmds = [["ip", "netns", "add", a], ["ip", "netns", "add", b],
            ["ip", "link", "add", "eth0", "netns", a, "type", "veth", "peer", "name", "eth0", "netns", b],
            ["ip", "-n", a, "addr", "add", "198.18.0.1/24", "dev", "eth0"],
            ["ip", "-n", b, "addr", "add", "198.18.0.2/24", "dev", "eth0"],
            ["ip", "-n", a, "link", "set", "eth0", "mtu", "9000", "up"],
            ["ip", "-n", b, "link", "set", "eth0", "mtu", "9000", "up"]]  # fmt: skip
    try:
        for c in cmds:
            subprocess.run(c, check=True)
        if shaped:
            from daqnet.emulate.netns import _shaping, port_options
            from daqnet.emulate.topology import Topology

            subprocess.run(["ip", "-n", a, "link", "set", "eth0", *port_options(9000).split()],
                           check=True)  # fmt: skip
            topo = Topology(prefix, ["a", "b"], 2, [])
            tc = _shaping(topo, "eth0", "100000000bit", "fair", 9000)
            subprocess.run(["tc", "-n", a, "-batch", "-"], input="\n".join(tc) + "\n", text=True,
                           check=True)  # fmt: skip
        sink = subprocess.Popen(
            ["ip", "netns", "exec", b, sys.executable, "-c",
             "import socket; s=socket.socket(); s.bind(('198.18.0.2', 5201)); s.listen(1); "
             "c,_=s.accept()\nwhile c.recv(1<<20): pass"],
        )  # fmt: skip
        time.sleep(0.5)
        code = (
            "import socket,sys; s=socket.create_connection(('198.18.0.2', 5201)); "
            f"b=bytes(1<<20); n={nbytes}\n"
            "while n>0: s.sendall(b[:min(n, len(b))]); n-=len(b)\n"
            "s.close()"
        )
        cpu0 = _children_cpu()
        t0 = time.perf_counter()
        subprocess.run(["ip", "netns", "exec", a, sys.executable, "-c", code], check=True)
        sink.wait(timeout=120)
        wall = time.perf_counter() - t0
        cpu1 = _children_cpu()
    finally:
        netns.teardown(prefix)
    return {"wall_s": wall, "gbps": nbytes * 8 / wall / 1e9, "cpu_s": cpu1 - cpu0,
            "cores": (cpu1 - cpu0) / wall}  # fmt: skip


def check() -> int:
    fabric, routing = _tree(4)
    topo = plan(fabric, routing, netns.new_prefix())
    netns.create(topo, 1000.0, "fair", 9000)
    try:
        routes = subprocess.run(["ip", "-n", topo.namespace(4), "route"], capture_output=True,
                                text=True, check=True).stdout  # fmt: skip
        expected = {topo.address(d) for d in range(4)}
        got = {line.split()[0] for line in routes.splitlines()}
        ok = expected <= got
    finally:
        netns.teardown(topo.prefix)
    left = [n for n in netns._existing() if n.startswith(topo.prefix)]
    print("ok" if ok and not left else f"FAILED: routes {got} vs {expected}, left {left}")
    return 0 if ok and not left else 1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0 or not shutil.which("tc"):
        if args.check and os.environ.get("DAQNET_REQUIRE_ALL_TESTS") != "1":
            print("ok (skipped: needs root and iproute2)")
            return 0
        print("FAILED: needs root and iproute2 (ip, tc)")
        return 2
    if args.check:
        return check()
    rows = [setup_time(h) for h in (4, 8, 16, 32)]
    print("| hosts | namespaces | cables | set-up | teardown | iproute2 floor | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['hosts']} | {r['namespaces']} | {r['cables']} | {r['setup_s']:.2f} s | "
              f"{r['teardown_s']:.2f} s | {r['floor_s']:.2f} s | {r['ratio']:.1f}× |")  # fmt: skip
    nbytes = 60 * 2**20  # about 5 s at 100 Mbit/s
    shaped, free = stream_cost(True, nbytes), stream_cost(False, nbytes)
    print(f"shaped link at 100 Mbit/s: {shaped['gbps'] * 1e3:.1f} Mbit/s achieved "
          f"({shaped['gbps'] / 0.1:.3f} of the configured rate), {shaped['cores']:.3f} of a core; "
          f"unshaped, same bytes: {free['gbps']:.2f} Gb/s, {free['cpu_s']:.2f} s of CPU "
          f"({shaped['cpu_s'] / max(free['cpu_s'], 1e-9):.1f}× the CPU time shaped)")  # fmt: skip
    write_json(HERE / "baseline.json", {"commit": git_commit(str(HERE)), "machine": machine(),
               "setup": rows, "shaped_link": shaped, "unshaped_link": free})  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
