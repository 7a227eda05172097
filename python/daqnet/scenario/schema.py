"""The scenario schema: every key of every section, with its type, default and doc.

Every command reads the same file (docs/scenario.md); a key not declared here, or a value
of the wrong type, is refused with the file and the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import placement as _placement
from .. import routing as _routing
from .. import workload as _workload
from ..fabric import NAMINGS

__all__ = ["INT32_MAX", "SCHEMA", "SEED_MAX", "TOP_LEVEL", "Key"]

INT32_MAX = 2**31 - 1
SEED_MAX = 2**64 - 1


@dataclass(frozen=True)
class Key:
    kind: str  # int, seed, float, str, bool, path, taper, int_list, float_list
    default: Any = None
    doc: str = ""
    choices: tuple[str, ...] = ()
    required: bool = False
    minimum: float | None = None


SCHEMA: dict[str, dict[str, Key]] = {
    "fabric": {
        "kind": Key("str", "fat-tree", "fabric family", ("fat-tree",)),
        "radix": Key("int", 36, "ports per switch"),
        "hosts": Key("int", None, "number of hosts (leaves filled in order)", required=True),
        "levels": Key("int", 2, "switch levels: 2 or 3"),
        "taper": Key(
            "taper", "1:1", 'down:up ratio at the leaf level ("2:1"), or a list per level'
        ),
        "hosts_per_leaf": Key("int", None, "host ports per leaf (default radix/2)", minimum=1),
        "spine_radix": Key("int", None, "ports of top-level switches (default radix)"),
        "link_gbps": Key("float", 100.0, "link rate in Gb/s (10^9 bit/s)"),
        "latency_seconds": Key("float", 100e-9, "latency per link"),
        "naming": Key("str", "cabling", "hostname scheme", tuple(NAMINGS)),
        "naming_seed": Key("seed", 0, "seed of the shuffled naming"),
        "naming_file": Key("path", None, "hostnames in cabling order, one per line"),
        "host_prefix": Key("str", "node", "hostname prefix"),
    },
    "routing": {
        "engine": Key("str", "dmodk", "routing engine", tuple(_routing.ENGINES)),
        "seed": Key("seed", 0, "seed of the random engine"),
        "file": Key("path", None, "forwarding tables for engine 'table'"),
    },
    "placement": {
        "order": Key("str", "topology", "rank order", tuple(_placement.ORDERS)),
        "ranks": Key("int", None, "ranks to place (default: all hosts, or all listed in file)"),
        "seed": Key("seed", 0, "seed of the random order"),
        "file": Key("path", None, "hostnames, one per line, for order 'file'"),
    },
    "workload": {
        "kind": Key("str", "event-building", "traffic pattern", tuple(_workload.KINDS)),
        "schedule": Key("str", "barrel", "event-building order", tuple(_workload.SCHEDULES)),
        "seed": Key("seed", 0, "seed of the random schedule"),
        "shifts": Key("int_list", [1], "shifts for kind 'shift'"),
    },
    # The real event builder (daqnet bench); see docs/bench.md.
    "bench": {
        "mode": Key(
            "str",
            "event-manager",
            "EM assigns events (LHCb) or time frames round-robin (ALICE)",
            ("event-manager", "time-frames"),
        ),
        "transport": Key("str", "mpi", "transport of the data", ("mpi", "tcp")),
        "protocol": Key("str", "push", "PUSH (RUs send) or PULL (BUs request)", ("push", "pull")),
        "ranks": Key("int", None, "MPI processes (default 4, or senders + receivers)", minimum=1),
        "processes_per_node": Key(
            "int", 1, "1: RU and BU share a process; 2: one process each", minimum=1
        ),
        "senders": Key("int", 0, "time-frames mode: sending ranks (FLPs)", minimum=0),
        "receivers": Key("int", 0, "time-frames mode: receiving ranks (EPNs)", minimum=0),
        "barrier": Key("bool", False, "time-frames mode: frame n+1 starts after frame n is built"),
        "credits": Key("int", 2, "events built in parallel per builder", minimum=1),
        "in_flight": Key("int", 8, "fragment transfers in flight per gather", minimum=1),
        "max_in_flight": Key("int", 0, "transfers in flight per process, 0 = no cap", minimum=0),
        "fragment_bytes": Key("int", 1048576, "mean data fragment size", minimum=64),
        "fragment_distribution": Key(
            "str", "fixed", "fragment size distribution", ("fixed", "normal", "lognormal")
        ),
        "fragment_sigma": Key("float", 0.1, "relative standard deviation of the sizes", minimum=0),
        "fragment_bytes_per_ru": Key(
            "float_list", [], "mean size per readout unit (cycled)", minimum=64
        ),
        "events_per_fragment": Key(
            "int", 1, "events packed in one fragment (listed in the meta-data)", minimum=1
        ),
        "meta_bytes": Key("int", 10240, "meta-data message size, 0 = none", minimum=0),
        "command_bytes": Key("int", 64, "command message size", minimum=64),
        "rate_hz": Key(
            "float", 0.0, "fragments per second per RU, 0 = as fast as possible", minimum=0
        ),
        "events": Key(
            "int", 0, "stop after this many events built after warm-up (0: use seconds)", minimum=0
        ),
        "seconds": Key(
            "float",
            0.0,
            "or stop this many seconds after warm-up (0: use events; neither given: 5 s)",
            minimum=0,
        ),
        "warmup_seconds": Key("float", 0.5, "excluded from the measurement", minimum=0),
        "seed": Key("seed", 0, "seed of sizes and payloads"),
        "checksum": Key("bool", True, "verify every fragment's checksum (off for speed runs)"),
        "report_seconds": Key("float", 1.0, "period of the time series and progress", minimum=0.01),
        "progress": Key("str", "yield", "how idle ranks wait", ("busy", "yield", "sleep")),
        "baseline": Key(
            "str", "none", "measured after the run for a ratio", ("none", "alltoall", "p2p")
        ),
        "baseline_seconds": Key("float", 2.0, "duration of the baseline", minimum=0.01),
        "launcher": Key(
            "str",
            "auto",
            "mpiexec, srun, or auto (srun inside a Slurm job)",
            ("auto", "mpiexec", "srun"),
        ),
        "launcher_args": Key("str", "", "extra launcher arguments, split like a shell"),
        "drain_timeout_seconds": Key(
            "float", 10.0, "longest wait for the last fragments at the end", minimum=0.1
        ),
        "stall_seconds": Key(
            "float", 30.0, "fail when no event is built for this long", minimum=0.1
        ),
        "tcp_address": Key("str", "", "TCP: IPv4 address to listen on"),
        "tcp_interface": Key("str", "", "TCP: network interface to listen on (e.g. ib0)"),
        "tcp_socket_buffer_bytes": Key(
            "int", 0, "TCP: SO_SNDBUF/SO_RCVBUF, 0 = system default", minimum=0
        ),
    },
    # The flow-level simulation (daqnet simulate, daqnet scan); see docs/simulate.md.
    "simulate": {
        "mode": Key(
            "str",
            "steps",
            "steps: the [workload] step by step; protocol: the [bench] event builder over time",
            ("steps", "protocol"),
        ),
        "message_bytes": Key("float", 1048576.0, "steps mode: bytes of every flow", minimum=1),
        "ideal": Key("bool", True, "steps mode: also time the steps on a contention-free fabric"),
        "injection_gbps": Key(
            "float", 0.0, "host NIC limit into the fabric, 0 = only the link", minimum=0
        ),
        "ejection_gbps": Key(
            "float", 0.0, "host NIC limit out of the fabric, 0 = only the link", minimum=0
        ),
        "events": Key(
            "int",
            None,
            "protocol mode, unless bench.events or bench.seconds is set: events built in the "
            "measurement window (default 2 × nodes × credits)",
            minimum=1,
        ),
        "warmup_events": Key(
            "int",
            None,
            "protocol mode, with simulate.events: the window opens once this many are built "
            "(default nodes × credits)",
            minimum=0,
        ),
        "local_gbps": Key(
            "float",
            0.0,
            "protocol mode: RU → BU copies within a node, 0 = instantaneous",
            minimum=0,
        ),
        "timeseries_bins": Key("int", 50, "protocol mode: periods of the time series", minimum=1),
    },
}
TOP_LEVEL = {"name": "str", "description": "str"}
