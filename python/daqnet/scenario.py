"""Scenario files: one TOML file describes fabric, routing, placement and workload.

Every key is declared in :data:`SCHEMA` with its type and default, so an unknown key or a
value of the wrong type is reported with the file and the key. ``--set section.key=value``
overrides read the value as TOML, and a bare word that is not valid TOML as a string.
Relative file paths in a scenario are relative to the scenario file.
"""

from __future__ import annotations

import copy
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import placement as _placement
from . import routing as _routing
from . import workload as _workload
from .errors import DaqnetError
from .fabric import NAMINGS, Fabric, fat_tree
from .files import read_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["SCHEMA", "Scenario", "parse_set"]


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
_TOP_LEVEL = {"name": "str", "description": "str"}


def parse_set(item: str) -> tuple[str, str, Any]:
    """Parse one ``section.key=value`` override."""
    if "=" not in item:
        raise DaqnetError(f"--set {item}: expected section.key=value")
    path, text = item.split("=", 1)
    parts = path.strip().split(".")
    if len(parts) != 2 or not all(parts):
        raise DaqnetError(f"--set {item}: expected section.key=value (e.g. fabric.hosts=64)")
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text  # a bare word: taken as a string
    return parts[0], parts[1], value


class Scenario:
    """A validated scenario: values with defaults filled in, and builders for each stage."""

    def __init__(
        self,
        data: dict,
        source: str = "<scenario>",
        base_dir: str | Path = ".",
        overrides: list[str] | tuple[str, ...] = (),
    ):
        self.source = source
        self.base_dir = Path(base_dir)
        #: The ``--set`` items applied, as typed.
        self.overrides = list(overrides)
        self.values = self._validate(data)
        #: "section.key" of every key given in the file or by ``--set`` (the rest are defaults).
        self.given = frozenset(
            f"{section}.{key}"
            for section, keys in data.items()
            if isinstance(keys, dict)
            for key in keys
        )
        #: "section.key" of every key set by ``--set``.
        self.overridden = frozenset(".".join(parse_set(item)[:2]) for item in self.overrides)

    # -- loading -------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> Scenario:
        path = Path(path)
        text = read_text(path, "scenario")
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise DaqnetError(f"{path}: not valid TOML: {err}") from None
        for item in overrides:
            section, key, value = parse_set(item)
            if section not in SCHEMA:
                raise DaqnetError(
                    f"--set {item}: unknown section '{section}' (known: {', '.join(SCHEMA)})"
                )
            if key not in SCHEMA[section]:
                raise DaqnetError(
                    f"--set {item}: unknown key '{section}.{key}' (known: {', '.join(SCHEMA[section])})"
                )
            if not isinstance(data.setdefault(section, {}), dict):
                raise DaqnetError(
                    f"{path}: '{section}' must be a table ([{section}]) to take --set {item}"
                )
            if SCHEMA[section][key].kind == "path" and isinstance(value, str):
                # A path typed on the command line is relative to the current directory,
                # as the shell completed it; paths in the file are relative to the file.
                value = str(Path(value).absolute())
            data[section][key] = value
        return cls(data, str(path), path.parent, list(overrides))

    def _validate(self, data: dict) -> dict:
        out: dict[str, Any] = {}
        for name, value in data.items():
            if name in _TOP_LEVEL:
                if not isinstance(value, str):
                    raise DaqnetError(f"{self.source}: '{name}' must be a string")
                out[name] = value
            elif name not in SCHEMA:
                raise DaqnetError(
                    f"{self.source}: unknown section or key '{name}' (sections: {', '.join(SCHEMA)})"
                )
            elif not isinstance(value, dict):
                raise DaqnetError(f"{self.source}: '{name}' must be a table ([{name}])")
        for section, keys in SCHEMA.items():
            given = data.get(section, {})
            for key in given:
                if key not in keys:
                    raise DaqnetError(
                        f"{self.source}: unknown key '{section}.{key}' (known: {', '.join(keys)})"
                    )
            vals = {}
            for key, spec in keys.items():
                if key in given:
                    vals[key] = self._check(section, key, spec, given[key])
                elif spec.required:
                    raise DaqnetError(
                        f"{self.source}: missing required key '{section}.{key}' ({spec.doc})"
                    )
                else:
                    vals[key] = copy.deepcopy(spec.default)
            out[section] = vals
        return out

    def _check(self, section: str, key: str, spec: Key, value: Any) -> Any:
        where = f"{self.source}: {section}.{key} = {value!r}"
        is_int = isinstance(value, int) and not isinstance(value, bool)
        ok = {
            "int": is_int,
            "seed": is_int,
            "float": isinstance(value, (int, float)) and not isinstance(value, bool),
            "str": isinstance(value, str),
            "bool": isinstance(value, bool),
            "float_list": isinstance(value, list)
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value),
            "path": isinstance(value, str),
            "taper": isinstance(value, str)
            or (isinstance(value, list) and all(isinstance(v, str) for v in value)),
            "int_list": isinstance(value, list)
            and all(
                isinstance(v, int) and not isinstance(v, bool) and abs(v) <= INT32_MAX
                for v in value
            ),
        }[spec.kind]
        if not ok:
            expected = {
                "int": "a whole number",
                "seed": "a whole number",
                "float": "a number",
                "str": "a string",
                "bool": "true or false",
                "float_list": "a list of numbers",
                "path": "a file path (string)",
                "taper": 'a ratio such as "2:1" or a list of them',
                "int_list": f"a list of whole numbers up to {INT32_MAX} in size",
            }[spec.kind]
            raise DaqnetError(f"{where}: expected {expected}")
        if spec.kind == "seed" and not 0 <= value <= SEED_MAX:
            raise DaqnetError(f"{where}: a seed must be from 0 to 2^64-1")
        lowest = -INT32_MAX - 1 if spec.minimum is None else spec.minimum
        if spec.kind == "int" and not lowest <= value <= INT32_MAX:
            raise DaqnetError(f"{where}: must be from {lowest} to {INT32_MAX}")
        if spec.kind == "float" and not math.isfinite(value):
            raise DaqnetError(f"{where}: must be a finite number")
        if spec.kind == "float" and spec.minimum is not None and value < spec.minimum:
            raise DaqnetError(f"{where}: must be at least {spec.minimum}")
        if spec.kind == "float_list":
            if not all(math.isfinite(v) for v in value):
                raise DaqnetError(f"{where}: must be finite numbers")
            if spec.minimum is not None and any(v < spec.minimum for v in value):
                raise DaqnetError(f"{where}: every value must be at least {spec.minimum}")
            value = [float(v) for v in value]
        if spec.choices and value not in spec.choices:
            raise DaqnetError(f"{where}: expected one of {', '.join(spec.choices)}")
        if spec.kind == "float":
            value = float(value)
        if spec.kind == "path":
            value = str(self.base_dir / value)
        return value

    def __getitem__(self, section: str) -> dict:
        return self.values[section]

    def effective(self) -> dict:
        """What a result was computed from: the file, the --set items, and every key's value
        (defaults filled in), for the ``config`` of every result document."""
        return {"file": self.source, "set": list(self.overrides), "values": self.values}

    @property
    def name(self) -> str:
        return self.values.get("name", Path(self.source).stem)

    # -- building the stages -----------------------------------------------------------
    def _wrap(self, err: Exception) -> DaqnetError:
        msg = str(err)
        return DaqnetError(msg if msg.startswith(self.source) else f"{self.source}: {msg}")

    def build_fabric(self) -> Fabric:
        f = self["fabric"]
        try:
            return fat_tree(
                radix=f["radix"],
                hosts=f["hosts"],
                levels=f["levels"],
                taper=f["taper"],
                link_gbps=f["link_gbps"],
                latency_seconds=f["latency_seconds"],
                hosts_per_leaf=f["hosts_per_leaf"],
                spine_radix=f["spine_radix"],
                naming=f["naming"],
                naming_seed=f["naming_seed"],
                naming_file=f["naming_file"],
                host_prefix=f["host_prefix"],
            )
        except ValueError as err:
            raise self._wrap(err) from None

    def build_routing(self, fabric: Fabric) -> _routing.Routing:
        r = self["routing"]
        try:
            return _routing.build(fabric, r["engine"], r["seed"], r["file"])
        except ValueError as err:
            raise self._wrap(err) from None

    def build_placement(self, fabric: Fabric) -> _placement.Placement:
        p = self["placement"]
        try:
            return _placement.build(fabric, p["order"], p["ranks"], p["seed"], p["file"])
        except ValueError as err:
            raise self._wrap(err) from None

    def build_workload(self, ranks: int) -> _workload.Workload:
        w = self["workload"]
        try:
            return _workload.build(ranks, w["kind"], w["schedule"], w["seed"], w["shifts"])
        except ValueError as err:
            raise self._wrap(err) from None

    def build(self) -> tuple[Fabric, _routing.Routing, _placement.Placement, _workload.Workload]:
        fabric = self.build_fabric()
        routing = self.build_routing(fabric)
        placement = self.build_placement(fabric)
        return fabric, routing, placement, self.build_workload(placement.ranks)
