"""``emulate.traffic = "steps"``: the steps of ``[workload]`` as plain TCP streams over the
emulated fabric, against the max-min fair rates the step simulation gives them.

This checks the emulation (and the fluid model) without the event builder: in every step one
iperf3 stream per flow runs for ``emulate.seconds`` after ``emulate.warmup_seconds``, all at
once, and each stream's received rate is compared with its max-min share of the links. Flows
between ranks of one host cross no cable and are left out, as the model leaves them out.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DaqnetError
from ..scenario import Scenario
from ..simulate.fair_share import flow_rates
from ..simulate.model import Stages
from .topology import Topology

__all__ = ["check_steps", "measure_steps"]

_PORT = 5201  # iperf3's own; one per flow of a step (a server takes one client at a time)


def check_steps(emulate: dict[str, Any], source: str) -> None:
    """What steps need, checked before anything is made: iperf3, and run lengths in whole
    seconds (iperf3 reads them as integers: 0.5 s of warm-up would silently be none)."""
    for key, least in (("seconds", 1), ("warmup_seconds", 0)):
        value = emulate[key]
        if value != int(value) or value < least:
            raise DaqnetError(
                f"{source}: emulate.{key} = {value:g}: emulate.traffic = 'steps' runs iperf3, "
                f"which counts whole seconds; give a whole number >= {least}"
            )
    if not shutil.which("iperf3"):
        raise DaqnetError("emulate.traffic = 'steps' runs iperf3 streams: apt-get install iperf3")


def _host_flows(stages: Stages, step: np.ndarray) -> list[tuple[int, int]]:
    placement = stages[2]
    flows = [(int(placement.hosts[a]), int(placement.hosts[b])) for a, b in step]
    return [(a, b) for a, b in flows if a != b]


def _in(topo: Topology, node: int, cmd: list[str]) -> list[str]:
    return ["ip", "netns", "exec", topo.namespace(node), *cmd]


def _wait_listening(topo: Topology, flows: list[tuple[int, int]], timeout: float = 10) -> None:
    """Until every flow's server listens (a client started earlier is refused)."""
    want: dict[int, set[int]] = {}
    for i, (_, dst) in enumerate(flows):
        want.setdefault(dst, set()).add(_PORT + i)
    end = time.monotonic() + timeout
    while want:
        for dst in list(want):
            listing = ["ss", "-Hltn"]
            out = subprocess.run(_in(topo, dst, listing), capture_output=True, text=True).stdout
            ports = {
                int(w.rsplit(":", 1)[1]) for line in out.splitlines() for w in line.split()[3:4]
            }
            want[dst] -= ports
            if not want[dst]:
                del want[dst]
        if want and time.monotonic() > end:
            raise DaqnetError(
                f"emulate: iperf3 servers did not start listening within {timeout:g} s"
            )
        if want:
            time.sleep(0.05)


def _run_step(
    topo: Topology, flows: list[tuple[int, int]], seconds: float, warmup: float
) -> list[dict[str, Any]]:
    """One iperf3 stream per flow, all at once: each flow's bytes received and sent
    (warm-up included, as the link counters see them: the wire carried between the two,
    for what was still in the buffers when the stream ended), and its received rate
    (bit/s, emulated) over its measured seconds.

    Starting 50 clients one `ip netns exec` after the other takes most of a second, and a
    stream that starts late runs on alone at the end, faster than its share. So every
    client waits on its stdin until all are started, every stream runs a second longer
    than it is measured, and the rate is the receiver's over the seconds after the
    warm-up and before that tail, when all streams of the step run.

    Only one-second intervals count: iperf3 3.12's receiver sometimes reports the first
    interval after the warm-up as 2 s long with one second's bytes (seen in a third of the
    streams after 6 s of warm-up; the stream's rate then read 0.8 of the truth)."""
    t, omit = int(seconds), int(warmup)  # whole seconds (check_steps)
    procs: list[subprocess.Popen[Any]] = []
    try:
        for i, (_, dst) in enumerate(flows):
            server = ["iperf3", "-s", "-1", "-J", "-p", str(_PORT + i)]
            procs.append(
                subprocess.Popen(
                    _in(topo, dst, server), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
            )
        _wait_listening(topo, flows)
        clients = []
        for i, (src, dst) in enumerate(flows):
            client = ["iperf3", "-c", topo.address(dst), "-p", str(_PORT + i), "-t", str(t + 1)]
            client += ["-O", str(omit), "-l", "1M", "-J", "--get-server-output"]
            gated = ["sh", "-c", 'read _ && exec "$@"', "-", *client]
            clients.append(
                subprocess.Popen(
                    _in(topo, src, gated),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        procs += clients
        for c in clients:  # all go
            assert c.stdin is not None
            c.stdin.write("\n")
            c.stdin.flush()
        return [
            _received(topo, src, dst, c, t, t + omit + 60)
            for (src, dst), c in zip(flows, clients, strict=True)
        ]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()


def _received(
    topo: Topology, src: int, dst: int, client: subprocess.Popen[str], t: int, timeout: float
) -> dict[str, Any]:
    stdout, stderr = client.communicate(timeout=timeout)
    try:
        doc = json.loads(stdout)
    except json.JSONDecodeError:
        doc = {"error": (stderr or stdout).strip() or f"exit {client.returncode}"}
    server = doc.get("server_output_json", {})
    if "error" in doc or "error" in server or not server.get("intervals"):
        why = doc.get("error") or server.get("error") or "no receiver report"
        raise DaqnetError(
            f"emulate: iperf3 from {topo.node_names[src]} to {topo.node_names[dst]}: {why}"
        )
    intervals = [iv["sum"] for iv in server["intervals"]]
    window = [iv for iv in intervals if not iv["omitted"] and 0.5 <= iv["seconds"] <= 1.5][:t]
    seconds = sum(iv["seconds"] for iv in window)
    return {
        "retransmits": int(doc["end"]["sum_sent"].get("retransmits", 0)),
        "bytes": sum(iv["bytes"] for iv in intervals),
        "sent_bytes": sum(iv["sum"]["bytes"] for iv in doc["intervals"]),
        "bps": sum(iv["bytes"] for iv in window) * 8 / seconds if seconds > 0 else 0.0,
    }


def measure_steps(
    scenario: Scenario,
    stages: Stages,
    topo: Topology,
    scale: float,
    say: Callable[[str], object],
) -> tuple[list[dict[str, Any]], dict[tuple[int, int], tuple[float, float]], bool]:
    """Every step of [workload] measured beside its max-min rates: the rows, the bytes each
    host pair's streams received and sent (for the link counters), and whether Ctrl-C cut
    the run short."""
    e = scenario["emulate"]
    workload = stages[3]
    rows: list[dict[str, Any]] = []
    pairs: dict[tuple[int, int], tuple[float, float]] = {}
    try:
        for s, step in enumerate(workload.steps(), start=1):
            flows = _host_flows(stages, step)
            if not flows:
                continue
            say(f"step {s} of {workload.num_steps}: {len(flows)} TCP streams")
            # Max-min on the scenario's links and [simulate] injection/ejection limits.
            sim = scenario["simulate"]
            rates = flow_rates(stages[1], flows, sim["injection_gbps"], sim["ejection_gbps"])
            predicted = [float(r) for r in rates]
            got = _run_step(topo, flows, e["seconds"], e["warmup_seconds"])
            measured = [g["bps"] * scale / 1e9 for g in got]  # back to real units
            ratios = [m / p for m, p in zip(measured, predicted, strict=True) if p > 0]
            rows.append({
                "step": s,
                "flows": len(flows),
                "measured_gbps": sum(measured),
                "predicted_gbps": sum(predicted),
                "ratio": sum(measured) / sum(predicted) if sum(predicted) > 0 else None,
                "min_flow_ratio": min(ratios) if ratios else None,
                "max_flow_ratio": max(ratios) if ratios else None,
                "retransmitted_segments": sum(g["retransmits"] for g in got),
            })  # fmt: skip
            for (a, b), g in zip(flows, got, strict=True):
                got_before, sent_before = pairs.get((a, b), (0.0, 0.0))
                pairs[(a, b)] = (got_before + g["bytes"], sent_before + g["sent_bytes"])
    except KeyboardInterrupt:
        return rows, pairs, True
    return rows, pairs, False
