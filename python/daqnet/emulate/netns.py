"""Creating and removing an emulated fabric: namespaces, veth cables, addresses, static
routes, tc shaping (iproute2's ``ip`` and ``tc`` in batch mode, a handful of calls).

Safety first: the names of everything about to be made are written to a state file
(``/run/daqnet-emulate/<prefix>.json``) before anything is created, so a driver killed at
any point leaves a record that ``daqnet emulate --cleanup`` reads; :func:`teardown` removes
a run's namespaces (and with them their cables and routes) and ends what still runs in them.
The MPI library's shared-memory segments of the ranks, once found, join the record, and
teardown removes them after the ranks: a SIGKILLed driver leaves none in /dev/shm either.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ..bench.shm import remove_unmapped
from ..errors import DaqnetError
from .topology import Topology

__all__ = [
    "STATE_DIR",
    "check_privileges",
    "cleanup",
    "counters",
    "create",
    "new_prefix",
    "port_options",
    "record_segments",
    "teardown",
]

STATE_DIR = Path(os.environ.get("DAQNET_EMULATE_STATE", "/run/daqnet-emulate"))
_PREFIX = re.compile(r"^dqe[0-9a-f]{6}$")


def check_privileges() -> None:
    """Root (or CAP_NET_ADMIN) and iproute2; one clear line otherwise (exit 2)."""
    if not (shutil.which("ip") and shutil.which("tc")):
        raise DaqnetError("daqnet emulate needs iproute2 (ip, tc): apt-get install iproute2")
    if os.geteuid() != 0 and not _has_net_admin():
        raise DaqnetError("daqnet emulate needs root or CAP_NET_ADMIN to create network namespaces")


def check_congestion_control(name: str) -> None:
    """emulate.congestion_control must be one the kernel offers (checked before anything
    is made: setting an unknown one in a namespace fails half-way)."""
    offered = _tcp_setting("tcp_available_congestion_control")
    if offered is None:
        return  # no /proc to ask: sysctl will say
    if name not in offered:
        raise DaqnetError(
            f"emulate.congestion_control = {name!r}: this kernel offers {', '.join(offered)}"
        )


def _namespace_may_default(name: str) -> bool:
    """Whether a namespace may make `name` its default congestion control: the kernel lets
    only the initial namespace choose an algorithm outside tcp_allowed_congestion_control
    (EPERM otherwise; e.g. cubic where bbr is the machine's default). Routes may pin any."""
    allowed = _tcp_setting("tcp_allowed_congestion_control")
    return allowed is None or name in allowed  # no /proc to ask: sysctl will say


def _tcp_setting(key: str) -> list[str] | None:
    """The words of /proc/sys/net/ipv4/<key>, None where there is no /proc to read."""
    try:
        return (Path("/proc/sys/net/ipv4") / key).read_text().split()
    except OSError:
        return None


def _has_net_admin() -> bool:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) & (1 << 12))
    except (OSError, ValueError):
        pass
    return False


def new_prefix() -> str:
    """A run-specific prefix of every namespace name (dqe + 6 hex digits)."""
    return "dqe" + secrets.token_hex(3)


def _run(cmd: list[str], batch: str = "", what: str = "") -> None:
    done = subprocess.run(cmd, input=batch, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise DaqnetError(
            f"daqnet emulate: {what or ' '.join(cmd)} failed: {detail[-1] if detail else '?'}"
        )


def _write_state(topo: Topology, segments: set[str] | None = None) -> Path:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    path = STATE_DIR / f"{topo.prefix}.json"
    doc = {"prefix": topo.prefix, "pid": os.getpid(), "namespaces": topo.namespaces}
    if segments:
        doc["segments"] = sorted(segments)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc) + "\n")
    tmp.replace(path)
    return path


def record_segments(topo: Topology, segments: set[str]) -> None:
    """Add the ranks' MPI segments in /dev/shm to the run's record, for teardown (best
    effort: a record that cannot be written must not end the measurement)."""
    with contextlib.suppress(OSError):
        _write_state(topo, segments)


def _rate(gbps: float, scale: float) -> str:
    return f"{max(1.0, gbps * 1e9 / scale):.0f}bit"


def create(
    topo: Topology,
    scale: float,
    queue: str,
    mtu: int,
    progress: Callable[[str], object] | None = None,
    dscp: int = 0,
    congestion: str = "cubic",
    acks_first: bool = False,
) -> None:
    """Make the fabric. On any error what was made is removed before the error goes on.
    dscp > 0: packets with that DSCP take a strict-priority queue on every port;
    acks_first: so do TCP's pure acknowledgements."""
    say = progress or (lambda _text: None)
    _write_state(topo)
    try:
        say(f"{len(topo.namespaces)} namespaces")
        _run(["ip", "-batch", "-"], "".join(f"netns add {ns}\n" for ns in topo.namespaces))
        say(f"{len(topo.cables())} cables")
        _run(
            ["ip", "-batch", "-"],
            "".join(
                f"link add {a.ifname} netns {topo.namespace(a.node)} type veth "
                f"peer name {b.ifname} netns {topo.namespace(b.node)}\n"
                for a, b in topo.cables()
            ),
            "creating the veth cables",
        )
        for node, ns in enumerate(topo.namespaces):
            say(f"node {node + 1} of {len(topo.namespaces)}")
            _configure(topo, node, ns, scale, queue, mtu, dscp, congestion, acks_first)
    except BaseException:
        teardown(topo.prefix)
        raise


def port_options(mtu: int) -> str:
    """`ip link set` options of every emulated port: the MTU, and one packet per segment.
    A veth hands TCP's segmentation-offload bursts (up to 64 KB) to its peer whole, so
    every queue would count, and htb's round robin serve, up to seven 9000-byte packets as
    one, and a queue of 100 packets could hold 6 MB; a switch sees packets of one MTU."""
    return f"mtu {mtu} gso_max_size {mtu} gso_max_segs 1"


def _configure(
    topo: Topology,
    node: int,
    ns: str,
    scale: float,
    queue: str,
    mtu: int,
    dscp: int,
    congestion: str,
    acks_first: bool,
) -> None:
    ports = [lk for lk in topo.links if lk.node == node]
    addr = topo.address(node)
    lines = ["link set lo up"]
    for lk in ports:
        lines += [
            f"link set {lk.ifname} {port_options(mtu)} up",
            f"addr add {addr}/32 dev {lk.ifname}",
        ]
    # TCP's congestion control is pinned on every route: a connection over the fabric takes
    # its route's algorithm whatever the namespace's default, which a namespace may only set
    # to an algorithm the machine allows (see _namespace_may_default).
    for dst, via, dev in topo.routes.get(node, []):
        net = dst if "/" in dst else f"{dst}/32"
        lines.append(f"route add {net} via {via} dev {dev} onlink congctl {congestion}")
    _run(["ip", "-n", ns, "-batch", "-"], "\n".join(lines) + "\n", f"configuring {ns}")
    # Switches forward; routes up and down differ, so no reverse-path filter anywhere.
    sysctls = ["net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0"]
    sysctls.append("net.ipv4.conf.default.rp_filter=0")
    if _namespace_may_default(congestion):  # also for connections inside the namespace
        sysctls.append(f"net.ipv4.tcp_congestion_control={congestion}")
    sysctls += [f"net.ipv4.conf.{lk.ifname}.rp_filter=0" for lk in ports]
    _run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", *sysctls], what=f"sysctl in {ns}")
    tc = []
    for lk in ports:
        tc += _shaping(topo, lk.ifname, _rate(lk.gbps, scale), queue, mtu, dscp, acks_first)
    _run(["tc", "-n", ns, "-batch", "-"], "\n".join(tc) + "\n", f"shaping in {ns}")


def _shaping(
    topo: Topology,
    dev: str,
    rate: str,
    queue: str,
    mtu: int,
    dscp: int = 0,
    acks_first: bool = False,
) -> list[str]:
    """htb at the link's rate (only htb, tbf and the fifos are everywhere: sfq, fq and netem
    are missing from some kernels). fifo: one drop-tail queue. fair: a queue per source
    host, each a class that may borrow the whole rate, served in turn by htb's round robin
    (a u32 filter per source address; other packets, e.g. ARP, take the first queue).
    dscp > 0: packets marked with it (the event builder's control connection,
    bench.tcp_control_dscp) have a queue of their own that htb serves first (class prio 0,
    the others 1), as a switch's priority class would. acks_first: TCP's pure
    acknowledgements (under 64 bytes, flags ACK alone) take that queue too. Only pure ones:
    small data segments overtaking their connection's large ones would be reordered."""
    quantum = 2 * mtu  # each turn of the round robin sends about two packets per source
    head = [
        f"qdisc add dev {dev} root handle 1: htb default 10 r2q 1000",
        f"class add dev {dev} parent 1: classid 1:1 htb rate {rate} ceil {rate}",
    ]
    sources = range(topo.num_hosts) if queue == "fair" else range(1)
    share = f"{max(1, int(rate[:-3]) // len(sources))}bit"
    for i in sources:
        cls = f"1:{0x10 + i:x}"  # tc reads class minors in hex: the first is htb's default 10
        head += [
            f"class add dev {dev} parent 1:1 classid {cls} htb rate {share} ceil {rate} "
            f"quantum {quantum} prio 1",
            f"qdisc add dev {dev} parent {cls} pfifo limit 100",
        ]
        if queue == "fair":
            head.append(
                f"filter add dev {dev} parent 1: protocol ip prio 2 u32 match ip src "
                f"{topo.address(i)}/32 flowid {cls}"
            )
    if dscp > 0 or acks_first:
        # Guaranteed the whole rate, so never over it: htb serves classes under their rate
        # before borrowing ones, prio 0 first among them (with a twentieth, the class went
        # over it and commands waited 24 ms on average).
        head += [
            f"class add dev {dev} parent 1:1 classid 1:2 htb rate {rate} ceil {rate} "
            f"quantum {quantum} prio 0",
            f"qdisc add dev {dev} parent 1:2 pfifo limit 100",
        ]
    # Filter prio 1: looked at before the per-source ones (tc's prio 0 means "any").
    if dscp > 0:
        head.append(
            f"filter add dev {dev} parent 1: protocol ip prio 1 u32 match ip tos "
            f"{dscp << 2:#04x} 0xfc flowid 1:2"
        )
    if acks_first:  # TCP (no IP options), under 64 bytes, flags ACK alone: a pure ACK
        head.append(
            f"filter add dev {dev} parent 1: protocol ip prio 1 u32 match ip protocol 6 0xff "
            "match u8 0x05 0x0f at 0 match u16 0x0000 0xffc0 at 2 match u8 0x10 0xff at 33 "
            "flowid 1:2"
        )
    return head


def counters(topo: Topology) -> dict[tuple[int, str], int]:
    """Bytes sent so far out of every emulated port: (node, interface) → bytes."""
    out: dict[tuple[int, str], int] = {}
    for node, ns in enumerate(topo.namespaces):
        done = _ip("-n", ns, "-s", "-j", "link", "show")
        if done.returncode != 0:
            raise DaqnetError(f"daqnet emulate: reading the counters of {ns} failed")
        for row in json.loads(done.stdout):
            out[(node, row["ifname"])] = int(row["stats64"]["tx"]["bytes"])
    return out


def teardown(prefix: str) -> list[str]:
    """Remove every namespace of the run `prefix` and its state file; the names removed."""
    state = STATE_DIR / f"{prefix}.json"
    names = _namespaces_of(prefix)
    killed = []
    for ns in names:  # nothing may outlive its namespace's removal unnoticed
        pids = _ip("netns", "pids", ns)
        for pid in pids.stdout.split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
                killed.append(int(pid))
    segments: list[str] = []
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        segments = [str(p) for p in json.loads(state.read_text()).get("segments", [])]
    if segments:
        # The killed ranks unmap their segments as they die: wait (briefly) until they have.
        for _ in range(100):
            if not any(_alive(pid) for pid in killed):
                break
            time.sleep(0.01)
        remove_unmapped(segments)
    if names:
        _ip("-force", "-batch", "-", stdin="".join(f"netns del {ns}\n" for ns in names))
    with contextlib.suppress(FileNotFoundError):
        state.unlink()
    return names


def _ip(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`ip` out of the terminal's process group: a Ctrl-C there reaches the driver, which
    notes it once the measurement is in (daqnet.stops), and must not end the counters or
    the teardown half-way by ending their commands."""
    return subprocess.run(
        ["ip", *args], input=stdin, capture_output=True, text=True, check=False,
        start_new_session=True,
    )  # fmt: skip


def _existing() -> list[str]:
    done = _ip("netns", "list")
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def _namespaces_of(prefix: str) -> list[str]:
    """The run's namespaces that exist: from its state file, and by name."""
    recorded: list[str] = []
    with contextlib.suppress(OSError, ValueError, KeyError):
        recorded = list(json.loads((STATE_DIR / f"{prefix}.json").read_text())["namespaces"])
    existing = set(_existing())
    named = {ns for ns in existing if ns.startswith(f"{prefix}-n")}
    return sorted((set(recorded) & existing) | named)


def cleanup() -> list[str]:
    """What killed runs left: every recorded run whose driver is gone, and namespaces named
    like ours with no live run. The namespaces removed."""
    live: set[str] = set()
    runs: set[str] = set()
    if STATE_DIR.is_dir():
        for path in STATE_DIR.glob("*.json"):
            try:
                doc = json.loads(path.read_text())
                pid, prefix = int(doc["pid"]), str(doc["prefix"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            (live if _alive(pid) else runs).add(prefix)
    for ns in _existing():
        prefix = ns.split("-n", 1)[0]
        if _PREFIX.match(prefix) and prefix not in live:
            runs.add(prefix)
    removed = []
    for prefix in sorted(runs):
        removed += teardown(prefix)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
