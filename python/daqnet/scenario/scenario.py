"""Scenario files: one TOML file describes fabric, routing, placement, workload, and the
benchmark's and simulation's keys.

Every key is declared in :data:`~daqnet.scenario.schema.SCHEMA` with its type and default, so
an unknown key or a value of the wrong type is reported with the file and the key.
Overrides (``section.key=value``) read the value as TOML, and a bare word that is not valid
TOML as a string. Relative file paths in a scenario are relative to the scenario file;
paths given as overrides are relative to the current directory.
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import placement as _placement
from .. import routing as _routing
from .. import workload as _workload
from ..errors import DaqnetError
from ..fabric import Fabric, dragonfly, fat_tree, from_ibnetdiscover, percs
from ..io.files import read_toml
from ..io.slurm_topology import read_slurm_topology
from .overrides import parse_set, shown
from .schema import INT32_MAX, SCHEMA, SEED_MAX, TOP_LEVEL, Key

__all__ = ["Scenario"]


class Scenario:
    """A validated scenario: values with defaults filled in, and builders for each stage."""

    def __init__(
        self,
        data: dict[str, Any],
        source: str = "<scenario>",
        base_dir: str | Path = ".",
        overrides: list[str] | tuple[str, ...] = (),
    ):
        self.source = source
        self.base_dir = Path(base_dir)
        #: The ``--set`` items applied, as typed.
        self.overrides = list(overrides)
        #: "section.key" of every key set by ``--set`` (known before the values are checked,
        #: so that a bad one is the option's error).
        self.overridden = frozenset(".".join(parse_set(item)[:2]) for item in self.overrides)
        self.values = self._validate(data)
        #: "section.key" of every key given in the file or by ``--set`` (the rest are defaults).
        self.given = frozenset(
            f"{section}.{key}"
            for section, keys in data.items()
            if isinstance(keys, dict)
            for key in keys
        )

    # -- loading -------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> Scenario:
        path = Path(path)
        data = read_toml(path, "scenario")
        for item in overrides:
            section, key, value = parse_set(item)
            if section not in SCHEMA:
                raise DaqnetError(
                    f"set {shown(item)}: unknown section {section!r} (known: {', '.join(SCHEMA)})"
                )
            if key not in SCHEMA[section]:
                raise DaqnetError(
                    f"set {shown(item)}: unknown key {section + '.' + key!r} (known: {', '.join(SCHEMA[section])})"
                )
            if not isinstance(data.setdefault(section, {}), dict):
                raise DaqnetError(
                    f"{path}: '{section}' must be a table ([{section}]) to take set {shown(item)}"
                )
            if SCHEMA[section][key].kind == "path" and isinstance(value, str):
                # A path typed on the command line is relative to the current directory,
                # as the shell completed it; paths in the file are relative to the file.
                value = str(Path(value).absolute())
            data[section][key] = value
        return cls(data, str(path), path.parent, list(overrides))

    def _validate(self, data: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in data.items():
            if name in TOP_LEVEL:
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
        fab = out["fabric"]
        if fab["kind"] == "fat-tree" and fab["hosts"] is None:
            raise DaqnetError(
                f"{self.source}: missing required key 'fabric.hosts' ({SCHEMA['fabric']['hosts'].doc})"
            )
        required = {"percs": ("supernodes",), "dragonfly": ("p", "a", "h")}
        for key in required.get(fab["kind"], ()):
            if fab[key] is None:
                raise DaqnetError(
                    f"{self.source}: missing required key 'fabric.{key}' ({SCHEMA['fabric'][key].doc})"
                )
        if fab["kind"] in ("ibnetdiscover", "slurm-topology") and fab["file"] is None:
            raise DaqnetError(
                f"{self.source}: fabric.kind = {fab['kind']!r} needs fabric.file (the topology to import)"
            )
        # A topology.conf has no port numbers (daqnet numbers them in the file's order): a
        # subnet manager's tables over it failed on ports that do not exist, or misdelivered,
        # or held by luck.
        if fab["kind"] == "slurm-topology" and out["routing"]["engine"] == "lft-dump":
            raise DaqnetError(
                f"{self.source}: routing.engine = 'lft-dump' reads the subnet's port numbers, "
                "and a Slurm topology.conf (fabric.kind = 'slurm-topology') has none: import "
                "the same subnet's ibnetdiscover output (fabric.kind = 'ibnetdiscover'), or "
                "route this fabric with engine 'minhop'"
            )
        return out

    def _check(self, section: str, key: str, spec: Key, value: Any) -> Any:
        # A value typed with --set is that option's error, not the file's; shown as typed
        # (TOML's true, not Python's True).
        shown_value = ("true" if value else "false") if isinstance(value, bool) else repr(value)
        by_set = f"{section}.{key}" in self.overridden
        where = f"{'set' if by_set else self.source + ':'} {section}.{key} = {shown_value}"
        # A whole number written as 1e6 (TOML reads a float) is that number: refused as "not a
        # whole number" for bench.fragment_bytes, it was taken for simulate.message_bytes.
        if (
            spec.kind == "int"
            and isinstance(value, float)
            and math.isfinite(value)
            and value.is_integer()
            and abs(value) <= INT32_MAX
        ):
            value = int(value)
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
        highest = INT32_MAX if spec.maximum is None else min(spec.maximum, INT32_MAX)
        if spec.kind == "int" and not lowest <= value <= highest:
            raise DaqnetError(f"{where}: must be from {int(lowest)} to {int(highest)}")
        if spec.kind == "float" and not math.isfinite(value):
            raise DaqnetError(f"{where}: must be a finite number")
        if spec.kind == "float" and spec.minimum is not None and value < spec.minimum:
            raise DaqnetError(f"{where}: must be at least {spec.minimum:g}")
        if spec.kind == "float" and spec.maximum is not None and value > spec.maximum:
            raise DaqnetError(f"{where}: must be at most {spec.maximum:g}")
        if spec.kind == "float" and spec.nonzero_minimum and 0 < value < spec.nonzero_minimum:
            raise DaqnetError(f"{where}: must be at least {spec.nonzero_minimum:g}")
        if spec.kind == "float" and spec.whole and value != int(value):
            raise DaqnetError(f"{where}: expected a whole number of bytes")
        if spec.kind == "float_list":
            if not all(math.isfinite(v) for v in value):
                raise DaqnetError(f"{where}: must be finite numbers")
            if spec.minimum is not None and any(v < spec.minimum for v in value):
                raise DaqnetError(f"{where}: every value must be at least {spec.minimum:g}")
            if spec.maximum is not None and any(v > spec.maximum for v in value):
                raise DaqnetError(f"{where}: every value must be at most {spec.maximum:g}")
            if spec.unit == "bytes" and any(v != int(v) for v in value):
                raise DaqnetError(f"{where}: every value must be a whole number of bytes")
            value = [float(v) for v in value]
        if spec.choices and value not in spec.choices:
            hint = ""
            from ..subnet_manager import OPENSM_ENGINES  # on this error's path only

            if (section, key) == ("routing", "engine") and value in OPENSM_ENGINES:
                # OpenSM's engines run in OpenSM: daqnet reads their tables.
                hint = (
                    f" (OpenSM's {value}: `daqnet opensm SCENARIO --engine {value}` computes its "
                    'tables and writes a scenario with routing.engine = "lft-dump")'
                )
            raise DaqnetError(f"{where}: expected one of {', '.join(spec.choices)}{hint}")
        if spec.kind == "float":
            value = float(value)
        if spec.kind == "path":
            value = str(self.base_dir / value)
        return value

    def __getitem__(self, section: str) -> dict[str, Any]:
        values: dict[str, Any] = self.values[section]
        return values

    def effective(self) -> dict[str, Any]:
        """What a result was computed from: the file, the --set items, every key's value
        (defaults filled in) and which keys were given (the rest are that version's
        defaults), for the ``config`` of every result document."""
        # Paths absolute: a result is read (and its scenario copied) from anywhere.
        values = {
            section: {
                k: str(Path(v).absolute()) if SCHEMA[section][k].kind == "path" and v else v
                for k, v in keys.items()
            }
            if isinstance(keys, dict)
            else keys
            for section, keys in self.values.items()
        }
        return {
            "file": self.source,
            "set": list(self.overrides),
            "values": values,
            "given": sorted(self.given),
        }

    @property
    def name(self) -> str:
        return str(self.values.get("name", Path(self.source).stem))

    # -- building the stages -----------------------------------------------------------
    @contextlib.contextmanager
    def _named_errors(self) -> Iterator[None]:
        """A builder's error as one line naming this scenario's file."""
        try:
            yield
        except ValueError as err:
            msg = str(err)
            if msg.startswith(self.source):
                raise DaqnetError(msg) from None
            # About a key given with --set ("fabric.link_gbps must be ..."): that option's
            # error, with the value typed (the last one given: it took effect), not the file's.
            for item in reversed(self.overrides):
                section, key, _ = parse_set(item)
                if msg.startswith((f"{section}.{key} ", f"{section}.{key}:")):
                    raise DaqnetError(f"set {shown(item)}: {msg}") from None
            raise DaqnetError(f"{self.source}: {msg}") from None

    def tasks_per_node(self) -> int:
        """workload.tasks_per_node, or its default: 32 on PERCS (a QCM's cores), else 1."""
        given = self["workload"]["tasks_per_node"]
        if given is not None:
            return int(given)
        return 32 if self["fabric"]["kind"] == "percs" else 1

    def message_bytes(self) -> float:
        """Bytes of every message: workload.message_bytes, else simulate.message_bytes."""
        given = self["workload"]["message_bytes"]
        return float(given if given is not None else self["simulate"]["message_bytes"])

    def build_fabric(self) -> Fabric:
        f = self["fabric"]
        with self._named_errors():
            if f["kind"] == "percs":
                return percs(
                    f["supernodes"],
                    f["drawers_per_supernode"],
                    f["nodes_per_drawer"],
                    f["d_links_per_pair"],
                    f["ll_gbps"],
                    f["lr_gbps"],
                    f["d_gbps"],
                    1536.0 if f["host_gbps"] is None else f["host_gbps"],
                    f["latency_seconds"],
                )
            if f["kind"] == "dragonfly":
                link = f["link_gbps"]
                return dragonfly(
                    f["p"],
                    f["a"],
                    f["h"],
                    f["a"] * f["h"] + 1 if f["g"] is None else f["g"],
                    link if f["local_gbps"] is None else f["local_gbps"],
                    link if f["global_gbps"] is None else f["global_gbps"],
                    link if f["host_gbps"] is None else f["host_gbps"],
                    f["latency_seconds"],
                )
            if f["kind"] == "ibnetdiscover":
                return from_ibnetdiscover(f["file"], f["link_gbps"], f["latency_seconds"])
            if f["kind"] == "slurm-topology":
                return read_slurm_topology(f["file"], f["link_gbps"], f["latency_seconds"])
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

    def build_routing(
        self, fabric: Fabric, progress: _routing.ProgressFn | None = None
    ) -> _routing.Routing:
        """The [routing] engine over `fabric`; `progress(done, total)` follows table building."""
        r = self["routing"]
        with self._named_errors():
            return _routing.build(
                fabric, r["engine"], r["seed"], r["file"], r["subnet_file"], r["spread"], progress
            )

    def build_placement(self, fabric: Fabric) -> _placement.Placement:
        p = self["placement"]
        tasks = self.tasks_per_node()
        kind = self["workload"]["kind"]
        # Every host runs `tasks` ranks, and ranks are 32-bit in the core.
        if fabric.num_hosts * tasks > INT32_MAX:
            raise DaqnetError(
                f"{self.source}: workload.tasks_per_node = {tasks} on {fabric.num_hosts:,} hosts makes "
                f"{fabric.num_hosts * tasks:,} tasks, more than {INT32_MAX:,}"
            )
        with self._named_errors():
            grid = (
                _workload.grid(kind, fabric.num_hosts * tasks)
                if p["order"] in _placement.MAPPINGS
                else None
            )
            return _placement.build(
                fabric, p["order"], p["ranks"], p["seed"], p["file"], p["hosts"], tasks, grid
            )

    def build_workload(self, ranks: int) -> _workload.Workload:
        w = self["workload"]
        with self._named_errors():
            return _workload.build(
                ranks,
                w["kind"],
                w["schedule"],
                w["seed"],
                w["shifts"],
                w["file"],
                w["targets"],
                w["rounds"],
            )

    def build(
        self, progress: _routing.ProgressFn | None = None
    ) -> tuple[Fabric, _routing.Routing, _placement.Placement, _workload.Workload]:
        """Fabric, routing, placement and workload; `progress` follows route building."""
        fabric = self.build_fabric()
        routing = self.build_routing(fabric, progress)
        placement = self.build_placement(fabric)
        return fabric, routing, placement, self.build_workload(placement.ranks)
