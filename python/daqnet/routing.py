"""Routing: for every (source, destination) pair of hosts, one path or a few weighted paths.

Engines differ in how they make the paths: per-switch forwarding tables (destination host
→ output port; ``dmodk``, ``random``, ``minhop``, ``table``, ``lft-dump``), checked when built (each route from every
switch with hosts to every destination must reach it without a loop or a black hole, else
an error names the switch and destination), or explicit paths per pair
(:func:`from_paths`). The analysis and the simulations take paths from any of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import _core
from .errors import DaqnetError
from .fabric import Fabric

__all__ = [
    "ENGINES",
    "Routing",
    "build",
    "dmodk",
    "from_file",
    "from_lft_dump",
    "from_paths",
    "from_ports",
    "group",
    "minhop",
    "random",
]

#: name → description, for --help, errors and documentation.
ENGINES: dict[str, str] = {
    "dmodk": "D-mod-K on a fat tree: up-port = destination index mod up-ports, level by "
    "level (OpenSM ftree, SimGrid FatTreeZone)",
    "random": "a seeded random up-port for every (switch, destination); down routes unique",
    "minhop": "fewest hops on any graph, least-used port first (as OpenSM's minhop balances)",
    "table": "forwarding tables read from a plain-text file (docs/routing-table.md)",
    "lft-dump": "the subnet manager's tables: opensm-lfts.dump, or ibroute/dump_lfts output",
    "direct": "PERCS / dragonfly minimal routing: at most local-global-local between switches",
    "indirect": "PERCS / dragonfly Valiant routing: through a random intermediate group, "
    "drawn per flow (seeded)",
}


#: A progress callback of route building: (work done, work in total).
ProgressFn = Callable[[int, int], object]


def _reporter(progress: ProgressFn | None) -> Callable[[int, int], bool] | None:
    """The core's callback (it must return True to go on); Ctrl-C is honoured without one."""
    if progress is None:
        return None

    def report(done: int, total: int) -> bool:
        progress(done, total)
        return True

    return report


class Routing:
    """Paths over a fabric: checked forwarding tables (each route cached as directed links)
    or explicit per-pair paths."""

    def __init__(self, fabric: Fabric, core: _core.routing.Routing):
        self.fabric = fabric
        self._core = core

    @property
    def has_tables(self) -> bool:
        """Whether the paths come from per-switch forwarding tables."""
        return isinstance(self._core, _core.routing.TableRouting)

    @property
    def single_path(self) -> bool:
        """Whether every pair has one path, the same for every flow."""
        return self._core.single_path

    def _tables(self) -> _core.routing.TableRouting:
        core = self._core
        if not isinstance(core, _core.routing.TableRouting):
            raise DaqnetError(f"routing '{self.engine}' has no forwarding tables (it gives paths)")
        return core

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
        """Directed link ids from host src to host dst (names or ids; the first path)."""
        return self._core.path(self._host(src), self._host(dst))

    def paths(
        self, src: int | str, dst: int | str, flow: int = 0
    ) -> list[tuple[float, np.ndarray]]:
        """(weight, directed link ids) of every path of a flow from src to dst."""
        return self._core.paths(self._host(src), self._host(dst), flow)

    def port(self, switch: int | str, dst: int | str) -> int:
        sw = self.fabric.node(switch) if isinstance(switch, str) else int(switch)
        return self._tables().port(sw, self._host(dst))

    def table(self) -> np.ndarray:
        """Output ports as an array (switch - num_hosts, destination host); 0 = no entry."""
        return self._tables().table()

    def write_table(self, path: str | Path, progress: ProgressFn | None = None) -> None:
        """Write the tables in daqnet's plain-text format (readable by engine "table").

        The C++ writer fills a temporary file beside `path`, renamed over it when complete;
        `progress(done, total)` follows it in entries, and Ctrl-C stops it (KeyboardInterrupt,
        `path` left as it was).
        """
        from .io.files import atomic_path

        tables = self._tables()
        # The reader splits on blanks and cuts comments at '#': such a name would not read back.
        odd = next((n for n in self.fabric.node_names if "#" in n or len(n.split()) != 1), None)
        if odd is not None:
            raise DaqnetError(
                f"{path}: node name {odd!r} cannot be written in a table file (it holds a blank "
                "or '#', which the table format reads as a separator or a comment)"
            )
        with atomic_path(path) as tmp:
            _core.routing.write_table_file(tables, tmp, _reporter(progress))

    def __repr__(self) -> str:
        return f"<daqnet.Routing {self.engine} over {self.fabric.describe()}>"


def dmodk(fabric: Fabric, progress: ProgressFn | None = None) -> Routing:
    return Routing(fabric, _core.routing.dmodk(fabric._core, _reporter(progress)))


def random(fabric: Fabric, seed: int = 0, progress: ProgressFn | None = None) -> Routing:
    return Routing(fabric, _core.routing.random_uplinks(fabric._core, seed, _reporter(progress)))


def minhop(fabric: Fabric, progress: ProgressFn | None = None) -> Routing:
    """Fewest-hop tables on any graph (imported fabrics, graphs built by hand)."""
    return Routing(fabric, _core.routing.minhop(fabric._core, _reporter(progress)))


def from_file(fabric: Fabric, path: str | Path, progress: ProgressFn | None = None) -> Routing:
    return Routing(
        fabric, _core.routing.read_table_file(fabric._core, str(path), _reporter(progress))
    )


def from_lft_dump(
    fabric: Fabric,
    path: str | Path,
    subnet_file: str | Path | None = None,
    progress: ProgressFn | None = None,
) -> Routing:
    """The tables of an InfiniBand subnet manager: OpenSM's ``opensm-lfts.dump`` or the
    output of ``ibroute``/``dump_lfts``. LIDs resolve through the fabric's own LIDs (a
    fabric imported from ibnetdiscover), else ``subnet_file`` (``opensm-subnet.lst``), else
    the node names the dump's lines carry. `progress(done, total)` follows the bytes read,
    then the routes walked (a 27,648-host fabric's dump is 5 GB); Ctrl-C stops it with
    KeyboardInterrupt."""
    sub = "" if subnet_file is None else str(subnet_file)
    return Routing(
        fabric,
        _core.routing.read_lft_dump(fabric._core, str(path), sub, _reporter(progress)),
    )


def from_ports(fabric: Fabric, ports: np.ndarray, engine: str = "array") -> Routing:
    """Tables from an array of output ports (switches × hosts, 0 = no entry), checked."""
    ports = np.asarray(ports)
    if ports.size and (ports.min() < 0 or ports.max() > 65535):
        raise DaqnetError("routing: output ports must be from 0 (no entry) to 65535")
    arr = np.ascontiguousarray(ports, dtype=np.uint16)
    return Routing(fabric, _core.routing.from_ports(fabric._core, arr, engine))


PathSpec = Sequence[int] | Sequence[str]


def _links_of(fabric: Fabric, path: PathSpec, where: str) -> np.ndarray:
    """Link ids of a path given as link ids, or as node names from host to host."""
    items: list[Any] = list(path)
    if items and all(isinstance(x, str) for x in items):
        links: list[int] = []
        for a, b in itertools.pairwise(items):
            na, nb = fabric.node(a), fabric.node(b)
            out = [lk for _, peer, _, lk in fabric.ports(na) if peer == nb]
            if not out:
                raise DaqnetError(f"{where}: no cable from {a} to {b}")
            links.append(out[0])
        items = links
    return np.ascontiguousarray(items, dtype=np.int32)


def from_paths(
    fabric: Fabric,
    paths: Mapping[tuple[int | str, int | str], PathSpec | Sequence[tuple[float, PathSpec]]],
    engine: str = "paths",
    all_pairs: bool = True,
) -> Routing:
    """Explicit paths per ordered pair of hosts, for routes tables cannot express.

    ``paths[(src, dst)]`` is one path — link ids, or node names from src to dst — or a list
    of ``(weight, path)`` spreading the pair's traffic. Each path is checked to be a chain
    of cables from src to dst; with ``all_pairs`` every ordered pair needs one.
    """
    core = _core.routing.PathRouting(fabric._core, engine)
    try:
        for (src, dst), spec in paths.items():
            a = fabric.node(src) if isinstance(src, str) else int(src)
            b = fabric.node(dst) if isinstance(dst, str) else int(dst)
            where = f"routing ({engine}): path {src} -> {dst}"
            items: list[Any] = list(spec)
            weighted = bool(items) and all(
                isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], (int, float))
                for x in items
            )
            ways: list[tuple[float, PathSpec]] = items if weighted else [(1.0, items)]
            for weight, one in ways:
                core.add(a, b, _links_of(fabric, one, where), float(weight))
        core.finalize(all_pairs)
    except ValueError as err:
        raise DaqnetError(str(err)) from None
    return Routing(fabric, core)


def group(fabric: Fabric, how: str = "direct", spread: bool = False, seed: int = 0) -> Routing:
    """Direct (minimal) or indirect (Valiant) routing on a PERCS or dragonfly network.

    ``spread`` splits a flow evenly over the parallel global links of a pair of groups
    (striping, with extra local hops); otherwise direct routing takes one with the fewest
    local hops (a seeded hash of the host pair breaks ties) and indirect routing draws one,
    and the intermediate group, per flow."""
    try:
        return Routing(fabric, _core.routing.group_routing(fabric._core, how, spread, seed))
    except ValueError as err:
        raise DaqnetError(str(err)) from None


def build(
    fabric: Fabric,
    engine: str = "dmodk",
    seed: int = 0,
    file: str | Path | None = None,
    subnet_file: str | Path | None = None,
    spread: bool = False,
    progress: ProgressFn | None = None,
) -> Routing:
    """The engine named in a scenario's [routing] section. `progress(done, total)` follows
    the building of forwarding tables (Ctrl-C stops it with KeyboardInterrupt)."""
    if engine in ("direct", "indirect"):
        return group(fabric, engine, spread, seed)
    if engine == "dmodk":
        return dmodk(fabric, progress)
    if engine == "random":
        return random(fabric, seed, progress)
    if engine == "minhop":
        return minhop(fabric, progress)
    if engine in ("table", "lft-dump"):
        if file is None:
            raise DaqnetError(f'routing.engine = "{engine}" needs routing.file')
        if engine == "table":
            return from_file(fabric, file, progress)
        return from_lft_dump(fabric, file, subnet_file, progress)
    raise DaqnetError(f"routing.engine = {engine!r}: expected one of {', '.join(ENGINES)}")
