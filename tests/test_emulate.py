"""daqnet emulate (docs/emulate.md): the plan of namespaces, cables and routes against the
routing tables (no root needed), and, as root, a small tree built, measured, compared and
torn down; bad scenarios refused before anything exists; nothing left after Ctrl-C or a
SIGKILL of the driver once --cleanup ran."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from daqnet.bench.window import WINDOW_LATENCIES
from daqnet.emulate import plan
from daqnet.emulate.run import farthest_link, paths_match, short_window
from daqnet.errors import DaqnetError
from daqnet.scenario import Scenario

TREE = """name = "emu4"
[fabric]
radix = 4
hosts = 4
link_gbps = 100
[routing]
engine = "dmodk"
[bench]
fragment_bytes = 131072
credits = 2
in_flight = 2
[emulate]
seconds = 2
warmup_seconds = 0.5
"""


def _scenario(tmp_path: Path, text: str = TREE, *sets: str) -> Scenario:
    path = tmp_path / "emu.toml"
    path.write_text(text)
    return Scenario.load(path, list(sets))


def test_routes_are_the_routing_tables(tmp_path):
    s = _scenario(tmp_path, TREE.replace("radix = 4\nhosts = 4", "radix = 8\nhosts = 12"))
    fabric, routing, _, _ = s.build()
    topo = plan(fabric, routing, "dqe000000")
    assert len(topo.namespaces) == len(fabric.node_names)
    assert len(topo.cables()) * 2 == fabric.num_links
    for sw in range(fabric.num_hosts, len(fabric.node_names)):
        routes = {dst: (via, dev) for dst, via, dev in topo.routes[sw]}
        for d in range(fabric.num_hosts):
            via, dev = routes[topo.address(d)]
            port = routing.port(sw, d)
            assert dev == f"p{port}"
            nxt = next(n for q, n, _, _ in fabric.ports(sw) if q == port)
            assert via == topo.address(nxt)
    # Hosts send everything to their leaf.
    for h in range(fabric.num_hosts):
        ((net, via, dev),) = topo.routes[h]
        assert net == "198.18.0.0/15" and dev == "eth0"


DIRECT = """name = "direct"
[fabric]
kind = "dragonfly"
p = 2
a = 2
h = 1
g = 3
[routing]
engine = "direct"
"""
PERCS = (
    "fabric.kind=percs fabric.supernodes=2 fabric.drawers_per_supernode=2 fabric.nodes_per_drawer=2"
)


@pytest.mark.parametrize(
    ("text", "sets"),
    [
        (TREE.replace("radix = 4\nhosts = 4", "radix = 8\nhosts = 12"), ""),
        (DIRECT, ""),  # one global link per pair of groups: minimal paths are per destination
        (DIRECT, PERCS),  # one D link per pair of supernodes
    ],
    ids=["fat-tree", "dragonfly", "percs"],
)
def test_a_packet_follows_the_model_path(tmp_path, text, sets):
    # Walking the plan's routes hop by hop from every host to every other gives exactly the
    # routing's path (an independent walk: addresses and interfaces, not port tables).
    # Direct networks' routing gives paths, from which the plan reads per-destination routes.
    s = _scenario(tmp_path, text, *sets.split())
    fabric, routing, _, _ = s.build()
    topo = plan(fabric, routing, "dqe000000")
    by_addr = {topo.address(n): n for n in range(len(topo.node_names))}
    link_of = {(lk.node, lk.ifname): lk.link for lk in topo.links}
    for a in range(fabric.num_hosts):
        for b in range(fabric.num_hosts):
            if a == b:
                continue
            node, walked = a, []
            while node != b:
                rows = topo.routes[node]
                dst = topo.address(b)
                via, dev = next((v, d) for n, v, d in rows if n in (dst, "198.18.0.0/15"))
                walked.append(link_of[(node, dev)])
                node = by_addr[via]
                assert len(walked) < 10
            assert walked == [int(x) for x in routing.path(a, b)]


def test_what_cannot_be_emulated_is_refused(tmp_path):
    big = _scenario(
        tmp_path, TREE.replace("hosts = 4", "hosts = 40").replace("radix = 4", "radix = 16")
    )
    fabric, routing, _, _ = big.build()
    with pytest.raises(DaqnetError, match="at most 32"):
        plan(fabric, routing, "dqe000000")
    # Parallel global links, ties broken per host pair: two next hops for one destination.
    tied = _scenario(tmp_path, DIRECT, "fabric.a=4", "fabric.h=2")
    fabric, routing, _, _ = tied.build()
    with pytest.raises(DaqnetError, match="per-destination static routes cannot express it"):
        plan(fabric, routing, "dqe000000")
    # Valiant routing draws a path per flow.
    valiant = _scenario(tmp_path, DIRECT, "routing.engine=indirect")
    fabric, routing, _, _ = valiant.build()
    with pytest.raises(DaqnetError, match="draws them per flow"):
        plan(fabric, routing, "dqe000000")


@pytest.mark.parametrize(("key", "value"), [("warmup_seconds", "0.5"), ("seconds", "2.5")])
def test_steps_refuse_fractions_of_a_second(tmp_path, key, value):
    # iperf3 reads whole seconds: 0.5 s of warm-up was silently none, 2.5 s became 2.
    from daqnet.emulate.steps import check_steps

    whole = ["emulate.traffic=steps", "emulate.seconds=3", "emulate.warmup_seconds=1"]
    s = _scenario(tmp_path, TREE, *whole, f"emulate.{key}={value}")
    with pytest.raises(DaqnetError, match=rf"emu.toml: emulate.{key} = {value}: .*whole"):
        check_steps(s["emulate"], str(s.source))
    ok = _scenario(tmp_path, TREE, *whole)
    if shutil.which("iperf3"):
        check_steps(ok["emulate"], str(ok.source))  # whole seconds pass


def test_a_stream_rate_counts_one_second_intervals_only():
    # iperf3 3.12's receiver sometimes reports the first interval after the warm-up as 2 s
    # with one second's bytes: counted, it read a steady 14 Mbit/s stream as 11.9.
    from daqnet.emulate import steps
    from daqnet.emulate.topology import Topology

    def iv(mbit, seconds, omitted):
        return {"sum": {"bytes": mbit * 1e6 / 8, "seconds": seconds, "omitted": omitted}}

    server = [iv(14, 1.0, True), iv(14, 1.0, True), iv(14, 2.0, False)]  # the odd one
    server += [iv(14, 1.0, False)] * 4 + [iv(14 * 0.03, 0.03, False)]  # 3 s, the spare, the tail
    doc = {
        "server_output_json": {"intervals": server},
        "end": {"sum_sent": {"retransmits": 0}},
        "intervals": [{"sum": {"bytes": 1e6}}],
    }

    class Client:
        returncode = 0

        def communicate(self, timeout=None):
            return json.dumps(doc), ""

    topo = Topology("dqe000000", ["a", "b"], 2, [])
    got = steps._received(topo, 0, 1, Client(), 3, 10)  # type: ignore[arg-type]
    assert got["bps"] == pytest.approx(14e6)


def test_a_short_window_is_flagged():
    # 5 s over events of 1.19 s (emulated): 4.2 latencies, which read 0.947 or 1.066 of
    # the prediction depending on where the window fell. 20 s (17 latencies) read 0.98-1.01.
    doc = {"scale": 1000.0, "predicted": {"latency_seconds": {"p50": 1.19e-3}}}
    why = short_window({**doc, "window_latencies": 5 / 1.19})
    assert why is not None and "4.2 event latencies" in why and "emulate.seconds >= 18" in why
    assert short_window({**doc, "window_latencies": 20 / 1.19}) is None
    assert short_window({**doc, "window_latencies": None}) is None  # nothing predicted
    # A long window whose halves differ: the run was still starting.
    why = short_window({**doc, "window_latencies": 20 / 1.19, "halves_difference": 0.5})
    assert why is not None and "differs by 50%" in why and "emulate.warmup_seconds" in why
    assert short_window({**doc, "window_latencies": 20 / 1.19, "halves_difference": 0.1}) is None


def test_paths_match_notices_a_link_off_its_share():
    rows = [{"link": str(i), "measured_bytes": 1000, "predicted_bytes": 1000.0} for i in range(8)]
    assert paths_match(rows)
    rows[3]["measured_bytes"] = 1200  # 20 % more than routed there
    assert not paths_match(rows)
    assert not paths_match([{"link": "x", "measured_bytes": 0, "predicted_bytes": 0.0}])
    # Plain TCP steps know a flow's bytes between what was received and what was sent.
    rows = [
        {"link": str(i), "measured_bytes": 1050, "predicted_bytes": 1000.0,
         "predicted_max_bytes": 1100.0}
        for i in range(8)
    ]  # fmt: skip
    assert paths_match(rows)
    rows[2]["measured_bytes"] = 1300  # over what was sent
    assert not paths_match(rows)
    rows[2]["measured_bytes"] = 900  # under what was received
    assert not paths_match(rows)
    assert farthest_link(rows) == {
        "link": "2", "measured_bytes": 900, "routed_bytes": 1000.0, "off": -0.1
    }  # fmt: skip


def test_the_farthest_link_is_one_outside_its_band():
    # A lightly routed link's acknowledgements (5,000 bytes routed 1,000, within the band)
    # were named "400 % above" while another link was 20 % over.
    rows = [
        {"link": "A", "measured_bytes": 1_200_000, "predicted_bytes": 1e6},
        {"link": "B", "measured_bytes": 5_000, "predicted_bytes": 1e3},
        {"link": "C", "measured_bytes": 1_000_000, "predicted_bytes": 1e6},
        {"link": "D", "measured_bytes": 1_000_000, "predicted_bytes": 1e6},
    ]
    assert not paths_match(rows)
    assert farthest_link(rows)["link"] == "A"
    assert farthest_link(rows)["off"] == pytest.approx(0.2)
    rows[0]["measured_bytes"] = 1_000_000
    assert paths_match(rows) and farthest_link(rows) is None
    rows[1]["predicted_bytes"] = 0.0  # routed none, and far beyond the band
    rows[1]["measured_bytes"] = 400_000
    assert farthest_link(rows) == {
        "link": "B", "measured_bytes": 400_000, "routed_bytes": 0.0, "off": None
    }  # fmt: skip


def test_an_interrupted_run_compares_shares_of_the_bytes():
    # A Ctrl-C tears the fabric down under data the units counted as sent: every link read
    # 1.4-5.4 % below its routed bytes, and "did NOT take the predicted links" was printed.
    rows = [
        {"link": str(i), "measured_bytes": 1000 * (0.93 + 0.01 * i), "predicted_bytes": 1000.0}
        for i in range(6)
    ]
    assert not paths_match(rows)
    assert farthest_link(rows)["link"] == "0"
    assert paths_match(rows, shares=True)
    # As shares, a link off its share is still found.
    rows[4]["measured_bytes"] = 1300
    assert not paths_match(rows, shares=True)
    assert farthest_link(rows, shares=True)["link"] == "4"


# --- as root: the real thing -------------------------------------------------------------

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"),
    reason="daqnet emulate needs root and iproute2 (ip, tc)",
)


def _ours() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith("dqe")]


def _emulate(tmp_path: Path, *args: str, **kw) -> subprocess.Popen[str]:
    path = tmp_path / "emu.toml"
    if not path.exists():
        path.write_text(TREE)
    cmd = [sys.executable, "-m", "daqnet", "emulate", str(path), *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


@needs_root
@pytest.mark.parametrize("queue", ["fair", "fifo"])
def test_emulated_tree_measured_beside_the_prediction(tmp_path, queue):
    before = set(_ours())
    if queue == "fifo":  # a file that serves daqnet simulate too: its run length is not this run's
        (tmp_path / "emu.toml").write_text(
            TREE.replace("[bench]", "[bench]\nseconds = 7")
            + "[simulate]\nevents = 7\nwarmup_events = 3\n"
        )
    proc = _emulate(
        tmp_path, "--json", "--out", str(tmp_path / "out"), "--set", f"emulate.queue={queue}"
    )
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    doc = json.loads(stdout)
    m = doc["measured"]
    assert m["status"] == "finished" and m["events_built"] > 0
    assert m["lost_fragments"] == m["duplicate_fragments"] == m["corrupt_fragments"] == 0
    # Every byte went where the routing tables say (counters of every directed link).
    assert doc["paths_match"], doc["links"]
    assert len(doc["links"]) == 16 and sum(r["measured_bytes"] for r in doc["links"]) > 0
    # Rates are scaled back: the fastest link (100 Gb/s) ran at 100 Mbit/s.
    assert doc["scale"] == 1000
    assert doc["congestion_control"] == "cubic"  # pinned, whatever the machine's default
    # Shaped: never faster than the fabric allows (an unshaped veth runs about 50 times faster).
    assert doc["ratio"] is not None and 0.3 < doc["ratio"] < 1.5
    # The window in predicted event latencies (emulated seconds over scaled latency), and
    # the warning exactly when it is short.
    latency = doc["predicted"]["latency_seconds"]["p50"] * doc["scale"]
    assert doc["window_latencies"] == pytest.approx(2.0 / latency, rel=0.05)
    assert ("event latencies" in stderr) == (doc["window_latencies"] < WINDOW_LATENCIES)
    assert set(_ours()) == before  # torn down
    assert json.loads((tmp_path / "out" / "emulate.json").read_text())["paths_match"]
    if queue == "fifo":  # replaced, and said so (a file's seconds = 3 measured 1 s, silently)
        assert "bench.seconds = 7.0 is daqnet bench's; this run takes emulate.seconds" in stderr
    # The bench run says it is in the emulated units, and daqnet report shows the emulation
    # in the fabric's (it showed the run's 0.50 Gb/s beside a prediction of 509).
    run = json.loads((tmp_path / "out" / "bench" / "result.json").read_text())
    assert run["emulated"]["scale"] == 1000
    page = tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "daqnet", "report", str(tmp_path / "out"), "-o", str(page)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert "daqnet emulate" in html and 'data-json="measured.throughput_gbps"' in html
    # Collected again (daqnet collect), it stays marked.
    done = subprocess.run(
        [sys.executable, "-m", "daqnet", "collect", str(tmp_path / "out" / "bench")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    again = json.loads((tmp_path / "out" / "bench" / "result.json").read_text())
    assert again["emulated"] == run["emulated"]
    shown = re.search(r'data-json="measured.throughput_gbps"[^>]*>([\d,.]+)<', html)
    assert shown and float(shown[1].replace(",", "")) == pytest.approx(
        m["throughput_gbps"], rel=0.01
    )


# Accepts one connection on the address given, prints its congestion control, and the
# client's, which connects from another namespace and prints its own.
_CC_SERVER = """
import socket, sys
s = socket.create_server((sys.argv[1], 5299))
print("ready", flush=True)
c, _ = s.accept()
print(c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).strip(b"\\0").decode())
"""
_CC_CLIENT = """
import socket, sys
c = socket.create_connection((sys.argv[1], 5299), timeout=10)
print(c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).strip(b"\\0").decode())
"""


def _pinnable_congestion_control() -> str:
    """An algorithm the kernel offers other than the machine's default, preferably one a
    namespace may not make its default (outside tcp_allowed_congestion_control, as cubic
    is where bbr is the default): the case where only the routes can pin it."""
    ipv4 = Path("/proc/sys/net/ipv4")
    offered = (ipv4 / "tcp_available_congestion_control").read_text().split()
    allowed = (ipv4 / "tcp_allowed_congestion_control").read_text().split()
    default = (ipv4 / "tcp_congestion_control").read_text().strip()
    others = [a for a in offered if a != default] or [default]
    return next((a for a in others if a not in allowed), others[0])


@needs_root
def test_congestion_control_pinned_on_every_connection(tmp_path, monkeypatch):
    # Both ends of a connection over the fabric run the algorithm asked for, not the
    # machine's default, even one the kernel does not let a namespace make its default.
    from daqnet.emulate import netns

    monkeypatch.setattr(netns, "STATE_DIR", tmp_path / "state")
    algorithm = _pinnable_congestion_control()
    fabric, routing, _, _ = _scenario(tmp_path).build()
    topo = plan(fabric, routing, netns.new_prefix())
    netns.create(topo, 1000, "fair", 9000, congestion=algorithm)
    try:
        server = subprocess.Popen(
            ["ip", "netns", "exec", topo.namespace(3), sys.executable, "-c", _CC_SERVER,
             topo.address(3)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        client = subprocess.run(
            ["ip", "netns", "exec", topo.namespace(0), sys.executable, "-c", _CC_CLIENT,
             topo.address(3)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        accepted, _ = server.communicate(timeout=60)
    finally:
        netns.teardown(topo.prefix)
    assert client.returncode == 0, client.stderr
    assert client.stdout.strip() == algorithm
    assert accepted.strip() == algorithm


@needs_root
def test_queues_see_wire_packets(tmp_path, monkeypatch):
    # A veth passes TCP's segmentation-offload bursts (up to 64 KB) on whole, so a queue of
    # "100 packets" held up to 6 MB and htb's round robin served a burst as one packet.
    # Every port now hands on one segment at a time: what waits in the sending host's
    # queue, sampled while a stream runs, is at most an MTU (and its header) per packet.
    # (tc's sent counters count segments either way; only the backlog shows the bursts.)
    from daqnet.emulate import netns

    monkeypatch.setattr(netns, "STATE_DIR", tmp_path / "state")
    fabric, routing, _, _ = _scenario(tmp_path).build()
    topo = plan(fabric, routing, netns.new_prefix())
    mtu = 9000
    netns.create(topo, 1000, "fair", mtu)
    try:
        src, dst = topo.namespace(0), topo.namespace(3)
        receiver = subprocess.Popen(
            ["ip", "netns", "exec", dst, sys.executable, "-c", _SINK, topo.address(3)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert receiver.stdout is not None and receiver.stdout.readline().strip() == "ready"
        sender = subprocess.Popen(
            ["ip", "netns", "exec", src, sys.executable, "-c", _SOURCE, topo.address(3)],
            stderr=subprocess.PIPE,
            text=True,
        )
        largest, samples = 0.0, 0
        while sender.poll() is None:
            shown = subprocess.run(
                ["tc", "-n", src, "-s", "-j", "qdisc", "show", "dev", "eth0"],
                capture_output=True,
                text=True,
            )
            for q in json.loads(shown.stdout or "[]"):
                if q["kind"] == "pfifo" and q.get("qlen"):
                    largest = max(largest, q["backlog"] / q["qlen"])
                    samples += 1
            time.sleep(0.05)
        assert sender.communicate(timeout=60)[1] == "" and sender.returncode == 0
        receiver.communicate(timeout=60)
        assert receiver.returncode == 0
        assert samples >= 5  # the queue was seen busy
        assert largest <= mtu + 14, largest
    finally:
        netns.teardown(topo.prefix)
    assert not set(_ours()) & set(topo.namespaces)


# 32 MB over TCP from one emulated host to another (2.7 s at 100 Mbit/s).
_SINK = """
import socket, sys
s = socket.create_server((sys.argv[1], 5999))
print("ready", flush=True)
c, _ = s.accept()
while c.recv(1 << 20):
    pass
"""
_SOURCE = """
import socket, sys
c = socket.create_connection((sys.argv[1], 5999), timeout=30)
c.sendall(bytes(32 << 20))
c.close()
"""


STEPS = """name = "steps8"
[fabric]
radix = 8
hosts = 8
hosts_per_leaf = 4
taper = "2:1"
link_gbps = 100
[routing]
engine = "dmodk"
[workload]
kind = "shift"
shifts = [1, 4]
[emulate]
traffic = "steps"
acks_first = true
seconds = 2
warmup_seconds = 1
"""


@needs_root
@pytest.mark.skipif(not shutil.which("iperf3"), reason="emulate.traffic = 'steps' runs iperf3")
def test_plain_tcp_steps_beside_max_min(tmp_path):
    # 2 leaves of 4 hosts, 2 spines: shift 1 crosses no up-link twice (every flow at its
    # link's rate), shift 4 sends 4 flows up 2 up-links per leaf (each flow at half).
    (tmp_path / "emu.toml").write_text(STEPS)
    before = set(_ours())
    proc = _emulate(tmp_path, "--json", "--out", str(tmp_path / "out"))
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "warning" not in stderr  # no internal key reported as set and ignored
    doc = json.loads(stdout)
    assert doc["traffic"] == "steps" and doc["measured"]["status"] == "finished"
    assert [(r["step"], r["flows"]) for r in doc["steps"]] == [(1, 8), (2, 8)]
    predicted = [r["predicted_gbps"] for r in doc["steps"]]
    assert predicted == pytest.approx([800.0, 400.0])  # max-min, scaled back to 100 Gb/s links
    # Every stream near its max-min share. A loose bound, but not loose enough for
    # acknowledgements queued behind data (acks_first = false: in shift 4 the streams
    # coming the other way got 0.2-0.8 of their share).
    assert doc["min_flow_ratio"] > 0.8, doc["steps"]
    assert 0.9 < doc["ratio"] < 1.05
    assert doc["paths_match"], doc["links"]
    assert set(_ours()) == before


@needs_root
def test_bad_scenario_is_refused_before_anything_exists(tmp_path):
    before = set(_ours())
    (tmp_path / "emu.toml").write_text(
        TREE.replace("hosts = 4", "hosts = 40").replace("radix = 4", "radix = 16")
    )
    proc = _emulate(tmp_path)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "at most 32" in stderr and "Traceback" not in stderr
    assert set(_ours()) == before
    # A congestion control the kernel does not offer: named, before anything is made.
    (tmp_path / "emu.toml").write_text(
        TREE.replace("[emulate]", '[emulate]\ncongestion_control = "nosuch"')
    )
    proc = _emulate(tmp_path)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "emulate.congestion_control = 'nosuch'" in stderr and "cubic" in stderr
    assert "Traceback" not in stderr
    assert set(_ours()) == before
    # MPI's own all-to-all goes through shared memory, around the fabric (it read 141 Gb/s
    # on 100 Mbit/s links); and a refused run leaves no temporary directory behind.
    (tmp_path / "emu.toml").write_text(TREE)
    made = set(Path(tempfile.gettempdir()).glob("daqnet-emulate-*"))
    proc = _emulate(tmp_path, "--set", "bench.baseline=alltoall")
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "bench.baseline = 'alltoall'" in stderr and "only 'p2p'" in stderr, stderr
    assert set(Path(tempfile.gettempdir()).glob("daqnet-emulate-*")) == made
    assert set(_ours()) == before


@needs_root
def test_without_privileges_one_line_and_exit_2(tmp_path):
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is needed to drop root")
    import tempfile

    where = Path(tempfile.mkdtemp(dir="/tmp"))  # readable by nobody, unlike pytest's tmp_path
    os.chmod(where, 0o755)
    (where / "emu.toml").write_text(TREE)
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
         sys.executable, "-m", "daqnet", "emulate", str(where / "emu.toml")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    shutil.rmtree(where)
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("needs root or CAP_NET_ADMIN to create network namespaces")
    )


def _wait_for_namespaces(
    before: set[str], proc: subprocess.Popen[str], timeout: float = 60
) -> set[str]:
    """The namespaces the run made, once there. Otherwise the test fails with the driver's
    own error, the driver killed if still running (no process or pipe outlives the test to
    fail a later one)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        made = set(_ours()) - before
        if len(made) >= 6:  # 4 hosts and 2 switches... and more once built
            return made
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    if proc.poll() is None:
        proc.kill()
    _, stderr = proc.communicate()
    raise AssertionError(
        f"the emulated fabric never appeared (daqnet emulate exit {proc.returncode}): {stderr}"
    )


@needs_root
def test_ctrl_c_tears_down(tmp_path):
    before = set(_ours())
    (tmp_path / "emu.toml").write_text(TREE.replace("seconds = 2", "seconds = 30"))
    proc = _emulate(tmp_path, "--out", str(tmp_path / "out"))
    _wait_for_namespaces(before, proc)
    time.sleep(3)  # into the run
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert set(_ours()) == before


# Runs the event builder over the emulated fabric of argv[1], and sends itself SIGINT when
# the run says argv[2]: a Ctrl-C at exactly that point.
_CTRL_C_AT = """
import argparse, json, os, signal, sys
from daqnet.cli.emulate import _event_builder_scenario
from daqnet.emulate import emulate
path, when, out = sys.argv[1:]
def say(text):
    if text == when:
        os.kill(os.getpid(), signal.SIGINT)
doc = emulate(_event_builder_scenario(argparse.Namespace(scenario=path, overrides=[])), out, say)
print(json.dumps(doc))
"""


@needs_root
@pytest.mark.parametrize("when", ["tearing down", "the protocol simulation"])
def test_ctrl_c_after_the_measurement_keeps_it(tmp_path, when):
    # In the teardown a Ctrl-C once stopped it half-way and lost the finished measurement;
    # in the simulation, it let the comparison use a prediction cut short.
    before = set(_ours())
    (tmp_path / "emu.toml").write_text(TREE)
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_AT, str(tmp_path / "emu.toml"), when, str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert set(_ours()) == before  # torn down, to the end
    assert doc["interrupted"] is True
    assert doc["measured"]["status"] == "finished" and doc["measured"]["events_built"] > 0
    assert doc["paths_match"], doc["links"]
    # No prediction, or a whole one (a run shorter than its first progress report).
    if when == "tearing down":
        assert doc["predicted"] is None and doc["ratio"] is None
    else:
        assert doc["predicted"] is None or doc["predicted"]["status"] == "finished"
    assert json.loads((out / "emulate.json").read_text())["interrupted"] is True


# As a Ctrl-C typed at a terminal reaches every process of its foreground group: SIGINT to
# the whole group of argv[1]'s run while the teardown's namespace removal runs (slowed down).
_CTRL_C_AT_TERMINAL = """
import argparse, json, os, signal, subprocess, sys, threading
from daqnet.cli.emulate import _event_builder_scenario
from daqnet.emulate import emulate
real = subprocess.run
def run(cmd, *args, **kw):
    if cmd[:3] == ["ip", "-force", "-batch"]:
        threading.Timer(0.3, os.killpg, (os.getpgid(0), signal.SIGINT)).start()
        cmd = ["sh", "-c", 'sleep 1; exec "$@"', "sh", *cmd]
    return real(cmd, *args, **kw)
subprocess.run = run
path, out = sys.argv[1:]
doc = emulate(_event_builder_scenario(argparse.Namespace(scenario=path, overrides=[])), out)
print(json.dumps(doc))
"""


@needs_root
def test_ctrl_c_at_the_terminal_does_not_cut_the_teardown(tmp_path):
    # The teardown's own commands were in the terminal's process group: a Ctrl-C ended them
    # and the namespaces stayed (with the state file gone, for --cleanup to find by name).
    before = set(_ours())
    (tmp_path / "emu.toml").write_text(TREE)
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_AT_TERMINAL, str(tmp_path / "emu.toml"), str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300, start_new_session=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert set(_ours()) == before
    doc = json.loads(done.stdout)
    assert doc["interrupted"] is True and doc["measured"]["status"] == "finished"


def _recorded_segments(made: set[str], timeout: float = 60) -> list[str]:
    """The MPI segments in the record of the run that made these namespaces, once there."""
    from daqnet.emulate.netns import STATE_DIR

    prefixes = {ns.split("-n", 1)[0] for ns in made}
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for path in STATE_DIR.glob("*.json"):
            try:
                doc = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if doc.get("prefix") in prefixes and doc.get("segments"):
                return list(doc["segments"])
        time.sleep(0.2)
    raise AssertionError("the run never recorded its ranks' MPI segments")


@needs_root
def test_cleanup_after_the_driver_was_killed(tmp_path):
    before = set(_ours())
    (tmp_path / "emu.toml").write_text(TREE.replace("seconds = 2", "seconds = 30"))
    proc = _emulate(tmp_path, "--out", str(tmp_path / "out"), start_new_session=True)
    made = _wait_for_namespaces(before, proc)
    segments = _recorded_segments(made)
    assert all(Path(p).exists() for p in segments)
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and its launcher, no teardown
    proc.communicate(timeout=30)
    assert set(_ours()) - before  # left behind
    done = subprocess.run(
        [sys.executable, "-m", "daqnet", "emulate", "--cleanup"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "removed" in done.stderr
    assert not (set(_ours()) & made)
    # The ranks' MPI segments (RAM in /dev/shm) went with them.
    assert not [p for p in segments if Path(p).exists()]


@pytest.mark.parametrize(
    ("item", "says"),
    [
        ("bench.transport=mpi", "over TCP"),
        ("bench.seconds=3", "emulate.seconds"),
        ("bench.warmup_seconds=1", "emulate.warmup_seconds"),
    ],
)
def test_bench_keys_emulate_sets_itself_are_refused(tmp_path, item, says):
    # They were silently replaced: --set bench.transport=mpi ran over TCP without a word.
    proc = _emulate(tmp_path, "--set", item)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and f"set {item.split('=')[0]}: daqnet emulate" in lines[0], stderr
    assert says in lines[0]
