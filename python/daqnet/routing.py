"""Routing engines: per-switch forwarding tables (destination host → output port).

Every engine's tables are checked when built: each route from every switch with hosts to
every destination must reach it without a loop or a black hole, else a
:class:`~daqnet.errors.DaqnetError`-like error names the switch and destination.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import numpy as np

from . import _core
from .errors import DaqnetError
from .fabric import Fabric

__all__ = ["ENGINES", "Routing", "build", "dmodk", "from_file", "from_ports", "random"]

#: name → description, for --help, errors and documentation.
ENGINES = {
    "dmodk": "D-mod-K on a fat tree: up-port = destination index mod up-ports, level by "
    "level (OpenSM ftree, SimGrid FatTreeZone)",
    "random": "a seeded random up-port for every (switch, destination); down routes unique",
    "table": "forwarding tables read from a plain-text file (docs/routing-table.md)",
}


class Routing:
    """Checked forwarding tables over a fabric, with each route cached as directed links."""

    def __init__(self, fabric: Fabric, core: _core.routing.Routing):
        self.fabric = fabric
        self._core = core

    @property
    def engine(self) -> str:
        return self._core.engine

    @property
    def max_hops(self) -> int:
        """Links on the longest host-to-host route."""
        return self._core.max_hops

    def _host(self, h: int | str) -> int:
        node = self.fabric.node(h) if isinstance(h, str) else int(h)
        if not 0 <= node < self.fabric.num_hosts:
            raise DaqnetError(f"{h!r} is not a host")
        return node

    def path(self, src: int | str, dst: int | str) -> np.ndarray:
        """Directed link ids from host src to host dst (names or ids)."""
        return self._core.path(self._host(src), self._host(dst))

    def port(self, switch: int | str, dst: int | str) -> int:
        sw = self.fabric.node(switch) if isinstance(switch, str) else int(switch)
        return self._core.port(sw, self._host(dst))

    def table(self) -> np.ndarray:
        """Output ports as an array (switch - num_hosts, destination host); 0 = no entry."""
        return self._core.table()

    def write_table(self, path: str | Path) -> None:
        """Write the tables in daqnet's plain-text format (readable by engine "table").

        The C++ writer fills a temporary file beside `path`, renamed over it when complete.
        """
        path = Path(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
        os.close(fd)
        try:
            _core.routing.write_table_file(self._core, tmp)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def __repr__(self) -> str:
        return f"<daqnet.Routing {self.engine} over {self.fabric.describe()}>"


def dmodk(fabric: Fabric) -> Routing:
    return Routing(fabric, _core.routing.dmodk(fabric._core))


def random(fabric: Fabric, seed: int = 0) -> Routing:
    return Routing(fabric, _core.routing.random_uplinks(fabric._core, seed))


def from_file(fabric: Fabric, path: str | Path) -> Routing:
    return Routing(fabric, _core.routing.read_table_file(fabric._core, str(path)))


def from_ports(fabric: Fabric, ports: np.ndarray, engine: str = "array") -> Routing:
    """Tables from an array of output ports (switches × hosts, 0 = no entry), checked."""
    ports = np.asarray(ports)
    if ports.size and (ports.min() < 0 or ports.max() > 65535):
        raise DaqnetError("routing: output ports must be from 0 (no entry) to 65535")
    arr = np.ascontiguousarray(ports, dtype=np.uint16)
    return Routing(fabric, _core.routing.from_ports(fabric._core, arr, engine))


def build(
    fabric: Fabric, engine: str = "dmodk", seed: int = 0, file: str | Path | None = None
) -> Routing:
    """The engine named in a scenario's [routing] section."""
    if engine == "dmodk":
        return dmodk(fabric)
    if engine == "random":
        return random(fabric, seed)
    if engine == "table":
        if file is None:
            raise DaqnetError('routing.engine = "table" needs routing.file')
        return from_file(fabric, file)
    raise DaqnetError(f"routing.engine = {engine!r}: expected one of {', '.join(ENGINES)}")
