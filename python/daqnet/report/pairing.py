"""Prediction beside measurement: which ``daqnet simulate`` (protocol mode) result predicts
which ``daqnet bench`` result.

Both record the effective scenario they ran (``config``: file, ``--set`` items, every key's
value). A prediction and a measurement are of the *same scenario* when every key that both
commands read (:func:`daqnet.scenario.key_use.unused` says which: the ``[bench]`` keys that
shape the event builder's traffic, the placement order, the gather schedule) has the same
value in both. Keys only one side reads do not count: the fabric (the benchmark runs on
whatever hardware it is given), ``[simulate]``, the transport. A pair that differs only
in keys is listed with those keys, so a near miss is visible instead of silently dropped.
Their node counts must agree too: the benchmark's ranks per node, the simulation's nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import DaqnetError
from ..io.result_files import ResultFile

__all__ = ["NODES", "Pair", "compared_keys", "find_pairs", "nodes_of_bench"]

#: How a pair that differs in node count names it (the keys that set it on each side).
NODES = (
    "nodes (bench.ranks / bench.processes_per_node; simulate: bench.ranks, else every placed host)"
)


@dataclass
class Pair:
    """A measurement and a prediction of the same scenario keys, or a near miss."""

    measured: ResultFile  #: daqnet bench
    predicted: ResultFile  #: daqnet simulate, protocol mode
    keys: list[str]  #: the scenario keys both read ("section.key")
    #: keys whose values differ: (key, measured value, predicted value); empty for a pair
    differences: list[tuple[str, Any, Any]] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not self.differences


def _scenario(r: ResultFile) -> Any:
    """The Scenario recorded in a result (its effective values, None entries left out)."""
    from ..scenario import Scenario

    config = r.doc.get("config")
    if not isinstance(config, Mapping) or not isinstance(config.get("values"), Mapping):
        return None
    values = {
        section: (
            {k: v for k, v in keys.items() if v is not None} if isinstance(keys, Mapping) else keys
        )
        for section, keys in config["values"].items()
    }
    try:
        return Scenario(values, source=str(config.get("file", r.path)))
    except DaqnetError:
        return None  # a scenario this daqnet cannot read (another version's keys)


def _read_by(scenario: Any, command: str) -> set[str]:
    from ..scenario.key_use import unused

    return {
        f"{section}.{key}"
        for section, keys in scenario.values.items()
        if isinstance(keys, dict)
        for key in keys
        if unused(scenario, command, f"{section}.{key}") is None
    }


def compared_keys(measured: ResultFile, predicted: ResultFile) -> list[str] | None:
    """The scenario keys both the benchmark and the protocol simulation read, or None when
    either result records no scenario this version can read (``daqnet collect`` records
    none: it never saw the scenario file)."""
    m, p = _scenario(measured), _scenario(predicted)
    if m is None or p is None:
        return None
    return sorted(_read_by(m, "bench") & _read_by(p, "simulate"))


def _value(doc: Mapping[str, Any], key: str) -> Any:
    section, name = key.split(".", 1)
    return doc["config"]["values"].get(section, {}).get(name)


def find_pairs(results: list[ResultFile]) -> tuple[list[Pair], list[Pair]]:
    """(pairs of the same scenario, near misses): every bench result against every
    protocol-mode simulation. A near miss is a pair of the same scenario name that differs
    in some compared keys."""
    # A run of daqnet emulate is in the emulated units; its emulate.json holds the comparison.
    # A run.cfg edited after its scenario.json: the scenario is not what ran.
    benches = [
        r
        for r in results
        if r.kind == "bench"
        and not r.doc.get("emulated")
        and not (r.doc.get("config") or {}).get("differs_from_run_cfg")
    ]
    sims = [r for r in results if r.kind == "simulate-protocol"]
    same, near = [], []
    for b in benches:
        for s in sims:
            keys = compared_keys(b, s)
            if keys is None:
                continue
            # bench.ranks left out means "every placed host" to the simulation and 4 ranks to
            # the benchmark: the node counts below compare what each ran.
            diff = [
                (k, _value(b.doc, k), _value(s.doc, k))
                for k in keys
                if _value(b.doc, k) != _value(s.doc, k) and k != "bench.ranks"
            ]
            # Equal keys may still mean other node counts: without bench.ranks the benchmark
            # runs its 4 ranks and the simulation every placed host (8 nodes against 2 were
            # compared, "equal in both", at 0.039x per node).
            measured, predicted = nodes_of_bench(b.doc), s.doc.get("nodes")
            if measured is not None and isinstance(predicted, int) and measured != predicted:
                diff.append((NODES, measured, predicted))
            pair = Pair(b, s, keys, diff)
            if pair.same:
                same.append(pair)
            elif b.doc["config"]["values"].get("name") == s.doc["config"]["values"].get("name"):
                near.append(pair)
    return same, near


def nodes_of_bench(doc: Mapping[str, Any]) -> int | None:
    """Nodes of a benchmark as the protocol simulation counts them: bench.ranks over
    bench.processes_per_node (each node runs a readout and a builder unit)."""
    cfg = doc.get("run_config") or {}
    ranks, ppn = cfg.get("ranks") or doc.get("ranks"), cfg.get("processes_per_node") or 1
    if not isinstance(ranks, int) or not isinstance(ppn, int) or ranks < 1 or ppn < 1:
        return None
    return ranks // ppn
