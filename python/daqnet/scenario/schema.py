"""The scenario schema: every key of every section, with its type, default and doc.

Every command reads the same file (docs/scenario.md); a key not declared here, or a value
of the wrong type, is refused with the file and the key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import _core
from .. import placement as _placement
from .. import routing as _routing
from .. import workload as _workload
from ..fabric import KINDS, NAMINGS

__all__ = ["INT32_MAX", "SCHEMA", "SEED_MAX", "TOP_LEVEL", "Key"]

INT32_MAX = 2**31 - 1
SEED_MAX = 2**64 - 1
# Ranges of physical quantities: far beyond any network, well inside a double, so that every
# time, rate and byte count derived from them stays finite (a link rate of 1e308 Gb/s made
# the step simulation report inf Gb/s and NaN seconds).
MAX_GBPS = 1e9  # 1 Eb/s on one link
MIN_GBPS = 1e-6  # 1 kb/s: a rate of 5e-324 Gb/s gave inf seconds, then NaN
MAX_LATENCY_SECONDS = 1e3
MAX_MESSAGE_BYTES = 2.0**53  # ~9 PB; whole byte counts stay exact


@dataclass(frozen=True)
class Key:
    kind: str  # int, seed, float, str, bool, path, taper, int_list, float_list
    default: Any = None
    doc: str = ""
    choices: tuple[str, ...] = ()
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    unit: str = ""
    #: float keys: a value above 0 must be at least this (0 may mean "no limit")
    nonzero_minimum: float | None = None
    #: float keys: a whole number (bytes), given as a float for 1e6 or 1048576.0
    whole: bool = False


SCHEMA: dict[str, dict[str, Key]] = {
    "fabric": {
        "kind": Key("str", "fat-tree", "fabric family", tuple(KINDS)),
        "file": Key("path", None, "the topology to import (kinds ibnetdiscover, slurm-topology)"),
        "radix": Key("int", 36, "ports per switch"),
        # Required for kind fat-tree only (Scenario checks): imported fabrics count their own.
        "hosts": Key(
            "int", None, "number of hosts (leaves filled in order); kind fat-tree", minimum=2
        ),
        "levels": Key("int", 2, "switch levels: 2 or 3"),
        "taper": Key(
            "taper", "1:1", 'down:up ratio at the leaf level ("2:1"), or a list per level'
        ),
        "hosts_per_leaf": Key("int", None, "host ports per leaf (default radix/2)", minimum=1),
        "spine_radix": Key("int", None, "ports of top-level switches (default radix)"),
        "link_gbps": Key(
            "float",
            100.0,
            "link rate in Gb/s (10^9 bit/s)",
            maximum=MAX_GBPS,
            nonzero_minimum=MIN_GBPS,
        ),
        "latency_seconds": Key("float", 100e-9, "latency per link", maximum=MAX_LATENCY_SECONDS),
        "naming": Key("str", "cabling", "hostname scheme", tuple(NAMINGS)),
        "naming_seed": Key("seed", 0, "seed of the shuffled naming"),
        "naming_file": Key("path", None, "hostnames in cabling order, one per line"),
        "host_prefix": Key("str", "node", "hostname prefix"),
        # Two-level direct networks (docs/direct-networks.md).
        "supernodes": Key("int", None, "kind percs: supernodes (required)", minimum=1),
        "drawers_per_supernode": Key("int", 4, "kind percs: drawers per supernode", minimum=1),
        "nodes_per_drawer": Key("int", 8, "kind percs: nodes (hubs) per drawer", minimum=1),
        "ll_gbps": Key(
            "float",
            192.0,
            "kind percs: LL link rate (24 GB/s)",
            maximum=MAX_GBPS,
            nonzero_minimum=MIN_GBPS,
        ),
        "lr_gbps": Key(
            "float",
            40.0,
            "kind percs: LR link rate (5 GB/s)",
            maximum=MAX_GBPS,
            nonzero_minimum=MIN_GBPS,
        ),
        "d_gbps": Key(
            "float",
            80.0,
            "kind percs: D link rate (10 GB/s)",
            maximum=MAX_GBPS,
            nonzero_minimum=MIN_GBPS,
        ),
        "d_links_per_pair": Key("int", 1, "kind percs: D links per pair of supernodes", minimum=1),
        "host_gbps": Key(
            "float",
            None,
            "kinds percs, dragonfly: host ↔ switch rate (default percs 1536 = 192 GB/s; "
            "dragonfly link_gbps)",
            maximum=MAX_GBPS,
            nonzero_minimum=MIN_GBPS,
        ),
        "p": Key("int", None, "kind dragonfly: hosts per router (required)", minimum=1),
        "a": Key("int", None, "kind dragonfly: routers per group (required)", minimum=1),
        "h": Key("int", None, "kind dragonfly: global ports per router (required)", minimum=0),
        "g": Key("int", None, "kind dragonfly: groups (default a·h + 1, the largest)", minimum=1),
        "local_gbps": Key(
            "float",
            None,
            "kind dragonfly: local link rate (default link_gbps)",
            maximum=MAX_GBPS,
            nonzero_minimum=MIN_GBPS,
        ),
        "global_gbps": Key(
            "float",
            None,
            "kind dragonfly: global link rate (default link_gbps)",
            maximum=MAX_GBPS,
            nonzero_minimum=MIN_GBPS,
        ),
    },
    "routing": {
        "engine": Key("str", "dmodk", "routing engine", tuple(_routing.ENGINES)),
        "seed": Key("seed", 0, "seed of the random and indirect engines"),
        "spread": Key(
            "bool", False, "direct, indirect: split a flow over parallel global (D) links"
        ),
        "file": Key("path", None, "forwarding tables for engines 'table' and 'lft-dump'"),
        "subnet_file": Key(
            "path", None, "engine 'lft-dump': opensm-subnet.lst naming each LID's node"
        ),
    },
    "placement": {
        "order": Key(
            "str", "topology", "rank order, or job mapping of tasks", tuple(_placement.ORDERS)
        ),
        "ranks": Key("int", None, "ranks to place (default: all hosts, or all listed in file)"),
        "seed": Key("seed", 0, "seed of the random order"),
        "file": Key("path", None, "hostnames, one per line, for order 'file'"),
        "hosts": Key(
            "str",
            None,
            "order 'file': a Slurm hostlist expression (node[001-064]) instead of a file",
        ),
    },
    "workload": {
        "kind": Key("str", "event-building", "traffic pattern", tuple(_workload.KINDS)),
        "schedule": Key("str", "barrel", "event-building order", tuple(_workload.SCHEDULES)),
        "seed": Key("seed", 0, "seed of the random schedule"),
        "shifts": Key("int_list", [1], "shifts for kind 'shift'"),
        "file": Key("path", None, "kind 'steps': one step per line of SRC>DST flows"),
        "tasks_per_node": Key(
            "int", None, "MPI tasks per host (default 32 on percs, else 1)", minimum=1
        ),
        "message_bytes": Key(
            "float",
            None,
            "bytes of every message (default simulate.message_bytes)",
            minimum=1,
            maximum=MAX_MESSAGE_BYTES,
            whole=True,
        ),
        "targets": Key("int", 14, "kind multicast: targets per task", minimum=1),
        "rounds": Key("int", 1, "kind bisection: random bisections (steps)", minimum=1),
    },
    # The real event builder (daqnet bench): built from the core's table of run.cfg keys,
    # below, plus the keys of the launch itself; see docs/bench.md.
    "bench": {},
    # The flow-level simulation (daqnet simulate, daqnet scan); see docs/simulate.md.
    "simulate": {
        "mode": Key(
            "str",
            "steps",
            "steps: the [workload] step by step; protocol: the [bench] event builder over time",
            ("steps", "protocol"),
        ),
        "message_bytes": Key(
            "float",
            1048576.0,
            "steps mode: bytes of every flow",
            minimum=1,
            maximum=MAX_MESSAGE_BYTES,
            whole=True,
        ),
        "ideal": Key("bool", True, "steps mode: also time the steps on a contention-free fabric"),
        "injection_gbps": Key(
            "float",
            0.0,
            "host NIC limit into the fabric, 0 = only the link",
            minimum=0,
            maximum=MAX_GBPS,
            nonzero_minimum=MIN_GBPS,
        ),
        "ejection_gbps": Key(
            "float",
            0.0,
            "host NIC limit out of the fabric, 0 = only the link",
            minimum=0,
            maximum=MAX_GBPS,
            nonzero_minimum=MIN_GBPS,
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
            "protocol mode: RU → BU copies within a node, each at this rate, 0 = instantaneous",
            minimum=0,
            maximum=MAX_GBPS,
            nonzero_minimum=MIN_GBPS,
        ),
        "timeseries_bins": Key("int", 50, "protocol mode: periods of the time series", minimum=1),
    },
    # The fabric emulated in network namespaces (daqnet emulate); see docs/emulate.md.
    "emulate": {
        "scale": Key(
            "float",
            None,
            "link rates are divided by this (default: the fastest link runs at 100 Mbit/s); "
            "message sizes stay, times and rates are reported back in real units",
            minimum=1,
        ),
        "queue": Key(
            "str",
            "fair",
            "switch and host port queues: fair (a queue per source host) or fifo (drop-tail)",
            ("fair", "fifo"),
        ),
        "congestion_control": Key(
            "str",
            "cubic",
            "TCP congestion control of the emulated hosts, pinned (the machine's default, "
            "bbr or cubic, would change the measurement); one this kernel offers",
        ),
        "priority": Key(
            "bool",
            True,
            "commands (the TCP transport's control connection, marked with "
            "bench.tcp_control_dscp, 46 unless set) take a strict-priority queue on every port",
        ),
        "acks_first": Key(
            "bool",
            False,
            "TCP's pure acknowledgements take the strict-priority queue too: plain TCP "
            "streams then get their max-min share (docs/emulate.md); the event builder loses "
            "to it (its bulk data overflows the port queues)",
        ),
        "traffic": Key(
            "str",
            "event-builder",
            "what runs over the fabric: the event builder (daqnet bench, TCP) beside the "
            "protocol simulation, or the [workload]'s steps as plain TCP streams (iperf3, one "
            "per flow) beside their max-min fair rates",
            ("event-builder", "steps"),
        ),
        "mtu": Key("int", 9000, "MTU of every emulated cable", minimum=1280, maximum=65535),
        "seconds": Key(
            "float",
            5.0,
            "measured seconds of the event builder (of every step, in whole seconds)",
            minimum=0.1,
            maximum=1e6,
        ),
        "warmup_seconds": Key(
            "float",
            1.0,
            "seconds before the measurement (of every step, in whole seconds)",
            minimum=0,
            maximum=1e6,
        ),
    },
}
TOP_LEVEL = {"name": "str", "description": "str"}


# -- [bench]: one description, in the core ----------------------------------------------------
_KINDS = {
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "text": "str",
    "choice": "str",
    "seed": "seed",
    "number_list": "float_list",
}


def _default(kind: str, text: str) -> Any:
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    if kind == "boolean":
        return text == "true"
    if kind == "seed":
        return int(text)
    if kind == "number_list":
        return [float(t) for t in text.split(",") if t.strip()]
    return text


def _limit(value: float) -> float | None:
    return value if math.isfinite(value) else None


def run_config_keys() -> list[dict[str, Any]]:
    """daqnet-evb's run.cfg keys (daqnet._core.evb.config_keys()): name, kind, default (as
    run.cfg writes it), minimum, maximum, choices, unit, doc, and where a scenario gives it."""
    return list(_core.evb.config_keys())


#: Keys of the launch itself (how many processes, with what): not part of run.cfg's table.
LAUNCH_KEYS: dict[str, Key] = {
    # run.cfg's `ranks` is what the run was prepared for; the scenario's has a default rule.
    "ranks": Key("int", None, "MPI processes (default 4, or senders + receivers)", minimum=1),
    "launcher": Key(
        "str",
        "auto",
        "mpiexec, srun, or auto (srun inside a Slurm job)",
        ("auto", "mpiexec", "srun"),
    ),
    "launcher_args": Key("str", "", "extra launcher arguments, split like a shell"),
}


def _bench_keys() -> dict[str, Key]:
    out: dict[str, Key] = {}
    for k in run_config_keys():
        section, _, name = k["scenario"].partition(".")
        if section != "bench":
            continue  # derived from other sections (schedule, placement) or test hooks
        if name in LAUNCH_KEYS:
            out[name] = LAUNCH_KEYS[name]
            continue
        out[name] = Key(
            _KINDS[k["kind"]],
            _default(k["kind"], k["default"]),
            k["doc"],
            tuple(k["choices"]),
            minimum=_limit(k["minimum"])
            if k["kind"] in ("integer", "number", "number_list")
            else None,
            maximum=_limit(k["maximum"])
            if k["kind"] in ("integer", "number", "number_list")
            else None,
            unit=k["unit"],
        )
    for name, key in LAUNCH_KEYS.items():
        out.setdefault(name, key)
    return out


SCHEMA["bench"] = _bench_keys()


def markdown_table(section: str) -> str:
    """The documentation table of a section's keys (docs/bench.md holds bench's)."""
    lines = ["| key | default | unit | meaning |", "|---|---|---|---|"]
    for name, key in SCHEMA[section].items():
        default = key.default
        if isinstance(default, bool):
            shown = "true" if default else "false"
        elif isinstance(default, str):
            shown = f'`"{default}"`' if default else '`""`'
        elif default is None:
            shown = "—"
        else:
            shown = f"`{default}`"
        extra = []
        if key.choices:
            extra.append("one of " + ", ".join(f"`{c}`" for c in key.choices))
        if key.minimum is not None and key.maximum is not None and key.maximum < INT32_MAX:
            extra.append(f"{key.minimum:g} to {key.maximum:g}")
        elif key.minimum is not None:
            extra.append(f"≥ {key.minimum:g}")
        meaning = key.doc + (f" ({'; '.join(extra)})" if extra else "")
        lines.append(f"| `{name}` | {shown} | {key.unit} | {meaning} |")
    return "\n".join(lines)
