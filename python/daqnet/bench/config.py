"""From a scenario to the run description daqnet-evb reads (``run.cfg``).

All checks a user can get wrong happen here, before anything is launched, with one message
naming the scenario key.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .. import _core
from ..errors import CoreError, DaqnetError
from ..io.files import write_text_atomic
from ..io.hostlist import read_hostnames
from ..memory_budget import physical_bytes
from ..scenario import Scenario
from ..scenario.schema import INT32_MAX, run_config_keys

__all__ = ["bench_ranks", "run_config", "run_config_text", "write_run_config", "write_scenario"]

DEFAULT_RANKS = 4
DEFAULT_SECONDS = 5.0
# Test hooks, never in a scenario: DAQNET_EVB_FAULTS="fault_corrupt_every=5,fault_duplicate_every=7"
FAULT_KEYS = tuple(k["name"] for k in _core.evb.config_keys() if k["name"].startswith("fault_"))


def bench_ranks(scenario: Scenario) -> int:
    b = scenario["bench"]
    if b["mode"] == "time-frames":
        return int(b["ranks"] or b["senders"] + b["receivers"])
    return int(b["ranks"] or DEFAULT_RANKS)


#: The keys of run_config()'s `derived` that share a [bench] key's name: written from several
#: keys or a default of daqnet bench's own, not copied from it (collect compares the rest).
DERIVED_FROM_BENCH = frozenset({"ranks", "events", "seconds", "baseline", "fragment_bytes_per_ru"})


def run_config(
    scenario: Scenario,
    baseline: str | None = None,
    check_memory: bool = True,
    ranks: int | None = None,
    run_length: bool = True,
    memory_warnings: list[str] | None = None,
) -> dict[str, object]:
    """The key/value pairs of run.cfg, checked (`check_memory`: that the buffers fit here;
    `run_length`: that bench.events or bench.seconds ends the run, which the protocol
    simulation leaves to its own rules when it takes simulate.events). Given a list in
    `memory_warnings`, buffers that would not fit here are said there instead of refused
    (--prepare: the ranks may run on other machines).

    `ranks` replaces the scenario's rank count (the protocol simulation sizes the run to the
    nodes it places when bench.ranks is not given).
    """
    b = scenario["bench"]
    src = scenario.source
    ranks = ranks or bench_ranks(scenario)

    def bad(key: str, why: str) -> DaqnetError:
        value = b[key]
        # As the scenario file spells it (TOML's true, not Python's True).
        shown = str(value).lower() if isinstance(value, bool) else repr(value)
        return DaqnetError(f"{src}: bench.{key} = {shown}: {why}")

    if scenario["workload"]["kind"] != "event-building":
        raise DaqnetError(
            f"{src}: workload.kind = {scenario['workload']['kind']!r}: daqnet bench runs event building only"
        )
    if b["mode"] == "time-frames":
        if b["senders"] < 1 or b["receivers"] < 1:
            raise DaqnetError(
                f"{src}: bench.mode = 'time-frames' needs bench.senders ≥ 1 and bench.receivers ≥ 1"
            )
        if b["senders"] + b["receivers"] > INT32_MAX:
            raise DaqnetError(
                f"{src}: bench.senders + bench.receivers = {b['senders'] + b['receivers']:,} ranks, more than {INT32_MAX:,}"
            )
        if b["senders"] + b["receivers"] != ranks:
            raise DaqnetError(
                f"{src}: bench.senders + bench.receivers = {b['senders'] + b['receivers']} units but bench.ranks = {ranks}: one unit per rank"
            )
        if b["protocol"] != "push":
            raise bad(
                "protocol",
                "time-frames mode pushes frames to the receiver that granted them; use push",
            )
    else:
        # bench.senders, receivers and barrier are time-frames keys, ignored here as any key
        # of another mode is (with a warning when --set: scenario.key_use), not refused after
        # that warning said they were ignored.
        if ranks % b["processes_per_node"]:
            raise bad(
                "ranks",
                f"cannot be split into nodes of {b['processes_per_node']} processes (one RU and one BU per node)",
            )
        if b["processes_per_node"] == 2 and ranks < 2:
            raise bad("ranks", "processes_per_node = 2 needs at least 2 ranks")
    if b["transport"] == "tcp" and b["tcp_address"] and b["tcp_interface"]:
        # The address won, while the results named the interface's NIC.
        raise bad(
            "tcp_interface",
            "give bench.tcp_address or bench.tcp_interface, not both (each chooses where "
            "the ranks listen)",
        )
    if b["recover"] and b["transport"] != "tcp":
        # MPICH reports no dead peer to a communicator without its fault-tolerance extension.
        raise bad("recover", "failure recovery needs bench.transport = 'tcp'")
    if b["recover"] and b["mode"] == "time-frames":
        raise bad("recover", "time-frames mode does not recover from a rank's death")
    if 0 < b["meta_bytes"] < 64:
        raise bad("meta_bytes", "must be 0 (no meta-data messages) or at least 64")
    if b["transport"] == "tcp" and 0 < b["tcp_socket_buffer_bytes"] < 4096:
        # 1 byte stalled TCP for seconds at a time: a fragment was called lost after 10 s.
        raise bad(
            "tcp_socket_buffer_bytes",
            "must be 0 (the system's default) or at least 4096: smaller socket buffers stall "
            "TCP for seconds at a time",
        )
    if b["events"] and b["seconds"]:
        raise DaqnetError(
            f"{src}: give bench.events or bench.seconds, not both (set the other to 0)"
        )
    given = {"bench.events", "bench.seconds"} & scenario.given
    if run_length and not b["events"] and not b["seconds"] and given:
        raise DaqnetError(
            f"{src}: bench.events and bench.seconds are both 0, so the run would have no end: "
            f"give one of them > 0, or leave both out for {DEFAULT_SECONDS:g} s"
        )
    means = b["fragment_bytes_per_ru"] or [b["fragment_bytes"]]
    size_key = "fragment_bytes_per_ru" if b["fragment_bytes_per_ru"] else "fragment_bytes"
    spread = 1 + 8 * b["fragment_sigma"] if b["fragment_distribution"] != "fixed" else 1
    if max(means) * spread > 2**31 - 1:
        raise bad(size_key, "fragments (with their spread) must stay below 2 GiB")
    try:
        shlex.split(b["launcher_args"])
    except ValueError as err:
        raise bad("launcher_args", f"cannot be split like a shell command line: {err}") from None
    if (baseline or b["baseline"]) == "p2p" and b["baseline_cache"] == "cold":
        raise bad("baseline_cache", "applies to the alltoall and isend baselines, not to p2p")
    if (baseline or b["baseline"]) == "p2p":
        # Nodes stream to nodes: with one, no rank streams (it printed "p2p: 0.00 Gb/s").
        frames = b["mode"] == "time-frames"
        nodes = ranks if frames else ranks // max(1, b["processes_per_node"])
        if nodes < 2:
            raise DaqnetError(
                f"{src}: bench.baseline = 'p2p' streams from one node to another, and the run "
                f"has one node ({ranks} ranks, bench.processes_per_node = "
                f"{b['processes_per_node']}): give alltoall or isend, or more ranks"
            )
        # Every pair streams with credits * in_flight messages of fragment_bytes in flight.
        window = b["credits"] * b["in_flight"]
        if window > INT32_MAX:
            raise bad(
                "in_flight",
                f"the p2p baseline keeps credits × in_flight = {window:,} messages in flight, more than {INT32_MAX:,}",
            )

    # run.cfg holds one `key = value` per line, '#' starts a comment and blanks around a
    # value go: a text that needs more would reach daqnet-evb as another value, or lines.
    for key in run_config_keys():
        section, _, field = key["scenario"].partition(".")
        if key["kind"] == "text" and section == "bench":
            why = _not_carried(b[field])
            if why:
                raise bad(field, f"run.cfg cannot carry {why} in a value")

    p = scenario["placement"]
    orders = next(k["choices"] for k in run_config_keys() if k["name"] == "placement")
    if p["order"] not in orders:  # e.g. 'default', the direct networks' order
        raise DaqnetError(
            f"{src}: placement.order = {p['order']!r}: the event builder places its ranks in "
            f"{', '.join(orders[:-1])} or {orders[-1]} order"
        )
    if p["order"] == "file" and not p["file"]:
        raise DaqnetError(f"{src}: placement.order = 'file' needs placement.file")
    # A host may be listed once per rank, as SLURM_HOSTFILE and daqnet repair (several tasks
    # a node) list them: its ranks take its lines in turn (daqnet-evb's layout).
    hosts = (
        []
        if p["order"] != "file"
        else read_hostnames(p["file"], "placement.file", max(1, ranks), "one line per rank")
    )
    for name, lineno in hosts:
        if "," in name:  # read_hostnames took care of blanks and '#'
            raise DaqnetError(
                f"{p['file']}:{lineno}: host '{name}': a ',' in a host name (run.cfg separates names with ',')"
            )
    # Every key of the core's table, in its order: run.cfg is complete, so daqnet-evb takes no
    # default of its own and a run.cfg says everything the run was given. (Those named as a
    # [bench] key are DERIVED_FROM_BENCH.)
    derived: dict[str, object] = {
        "ranks": ranks,  # daqnet-evb refuses another world size (e.g. srun without PMI)
        "schedule": scenario["workload"]["schedule"],
        "schedule_seed": scenario["workload"]["seed"],
        "placement": p["order"],
        "placement_seed": p["seed"],
        "placement_hosts": ",".join(name for name, _ in hosts),
        "baseline": baseline or b["baseline"],
        "events": b["events"],
        "seconds": 0.0 if b["events"] else (b["seconds"] or DEFAULT_SECONDS),
        "fragment_bytes_per_ru": ",".join(repr(v) for v in b["fragment_bytes_per_ru"]),
        # The run's secret: a TCP connection that does not show it is refused (run.cfg is
        # written readable by its owner only, and results never repeat it).
        "tcp_token": secrets.token_hex(16),
        **_faults(),
    }
    cfg: dict[str, object] = {}
    for key in run_config_keys():
        name = key["name"]
        section, _, field = key["scenario"].partition(".")
        if name in derived:
            cfg[name] = derived[name]
        elif section == "bench":
            cfg[name] = b[field]
        else:
            cfg[name] = key["default"]  # test hooks, unless DAQNET_EVB_FAULTS sets them
    # The checks above name the scenario's keys; daqnet-evb's own reader has the last word,
    # so a run.cfg that it would refuse is never written.
    text = run_config_text(cfg, src)
    try:
        _core.evb.read_config(text, "run.cfg")
    except CoreError as err:
        raise DaqnetError(f"{src}: daqnet-evb would refuse the run description: {err}") from None
    if check_memory:
        _check_buffers(scenario, text, ranks, cfg["baseline"] == "p2p", bad, memory_warnings)
    return cfg


def _check_buffers(
    scenario: Scenario,
    text: str,
    ranks: int,
    p2p: bool,
    bad: Callable[[str, str], DaqnetError],
    warnings: list[str] | None = None,
) -> None:
    """Refuse buffers over half of this machine's memory, counted by daqnet-evb's own rule
    (`text` is the run description): a node's, all the ranks' when they all run here, and
    the p2p baseline's. With a `warnings` list, say them there instead."""

    def refuse(key: str, why: str) -> None:
        if warnings is None:
            raise bad(key, why)
        warnings.append(str(bad(key, why)))

    b = scenario["bench"]
    time_frames = b["mode"] == "time-frames"
    rus = b["senders"] if time_frames else ranks // b["processes_per_node"]
    builders = b["receivers"] if time_frames else rus
    budget = _core.evb.buffer_budget(text, rus, builders)
    builder_bytes, readout_bytes = budget["builder_bytes"], budget["readout_bytes"]
    # One process holds an RU and a BU (or, in time-frames mode, one of them).
    process_bytes = (
        max(builder_bytes, readout_bytes) if time_frames else builder_bytes + readout_bytes
    )
    memory = physical_bytes()
    size_key = "fragment_bytes_per_ru" if b["fragment_bytes_per_ru"] else "fragment_bytes"
    # The key to name: the one the user gave among those that size the buffers.
    blame = next(
        (k for k in (size_key, "credits", "max_in_flight") if f"bench.{k}" in scenario.given),
        "credits",
    )
    what = (
        "credits × readout units × largest fragment for a builder, "
        f"{budget['premade']:,} fragments made up front for a readout unit"
    )
    if memory and process_bytes > memory / 2:
        refuse(
            blame,
            f"each node would need {process_bytes / 2**30:.1f} GiB of buffers ({what}), more than half of this machine's {memory / 2**30:.0f} GiB",
        )
    # mpiexec with no hosts given runs every rank here: their units share this machine (4
    # builders of 1 GiB fragments passed the check above and asked for 32 GiB of 24).
    total = builders * builder_bytes + rus * readout_bytes
    if memory and _all_ranks_here(b) and total > memory / 2:
        refuse(
            "ranks" if "bench.ranks" in scenario.given else blame,
            f"the {ranks} ranks, all on this machine (mpiexec without hosts), would need {total / 2**30:.1f} GiB of buffers ({what}), more than half of its {memory / 2**30:.0f} GiB",
        )
    if p2p:
        p2p_bytes = b["credits"] * b["in_flight"] * ((b["fragment_bytes"] + 7) // 8 * 8)
        if memory and p2p_bytes > memory / 2:
            refuse(
                "in_flight",
                f"the p2p baseline would need {p2p_bytes / 2**30:.1f} GiB of buffers (credits × in_flight × fragment_bytes), more than half of this machine's {memory / 2**30:.0f} GiB",
            )


def _phi(x: float) -> float:
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def clipped_mean(distribution: str, sigma: float, mean: float) -> float:
    """Mean fragment over its `mean` once the sizes are clipped as daqnet-evb clips them:
    at least 64 B, at most mean·(1 + 8 sigma) (cpp/evb/fragments.cpp; rounding to 8 B
    aside). Normal: E[clamp(1 + sigma Z, lo, hi)]; log-normal of mean 1 and relative spread
    sigma: E[clamp(Y, lo, hi)]."""
    if distribution == "fixed" or sigma <= 0:
        return 1.0
    lo, hi = 64 / mean, 1 + 8 * sigma
    if distribution == "normal":
        a, b = (lo - 1) / sigma, 8.0
        return lo * _cdf(a) + hi * (1 - _cdf(b)) + (_cdf(b) - _cdf(a)) + sigma * (_phi(a) - _phi(b))
    s = math.sqrt(math.log1p(sigma * sigma))  # ln Y ~ N(-s²/2, s²)
    mu = -s * s / 2

    def below(x: float) -> float:  # E[Y 1{Y < x}]
        return _cdf((math.log(x) - mu - s * s) / s) if x > 0 else 0.0

    def p_below(x: float) -> float:
        return _cdf((math.log(x) - mu) / s) if x > 0 else 0.0

    return lo * p_below(lo) + (below(hi) - below(lo)) + hi * (1 - p_below(hi))


def size_warning(scenario: Scenario) -> str | None:
    """Why the fragments' mean is not what was given: sizes spread so wide that the clips
    (at least 64 B, at most mean·(1 + 8σ)) move the mean by over 1 % (normal sizes are
    lifted by the floor, log-normal ones lowered by the ceiling)."""
    return bench_size_warning(scenario["bench"])


def bench_size_warning(b: Mapping[str, Any]) -> str | None:
    """size_warning() of a scenario's [bench] values (a result's config, for daqnet collect)."""
    means = b["fragment_bytes_per_ru"] or [b["fragment_bytes"]]
    factors = [clipped_mean(b["fragment_distribution"], b["fragment_sigma"], m) for m in means]
    worst = max(factors, key=lambda f: abs(f - 1))
    if abs(worst - 1) <= 0.01:
        return None
    return (
        f"bench.fragment_sigma = {b['fragment_sigma']:g} with {b['fragment_distribution']} "
        f"sizes: sizes are kept between 64 B and the mean × (1 + 8σ), so the mean fragment is "
        f"{worst:.3f} × the size given (every figure counts the bytes moved)"
    )


def _not_carried(value: str) -> str:
    """What in a text value run.cfg cannot carry as it is ("" if nothing)."""
    if "\n" in value or "\r" in value:
        return "a line break"
    if "#" in value:
        return "a '#' (run.cfg's comment sign)"
    if "\0" in value:
        return "a NUL character"
    if value != value.strip(" \t"):
        return "blanks at the start or end"
    return ""


_HOST_OPTIONS = ("-host", "-hosts", "--host", "-H", "-f", "-hostfile", "--hostfile",
                 "-machinefile", "--machinefile")  # fmt: skip


def _all_ranks_here(b: Mapping[str, Any]) -> bool:
    """Whether every rank runs on this machine: mpiexec with no host list among its
    arguments, outside a batch allocation (whose hosts mpiexec takes without being told)."""
    if b["launcher"] not in ("auto", "mpiexec"):
        return False
    if any(os.environ.get(v) for v in ("SLURM_JOB_ID", "PBS_JOBID", "HYDRA_HOST_FILE")):
        return False
    try:
        args = shlex.split(b["launcher_args"])
    except ValueError:
        return False
    return not any(a.split("=", 1)[0] in _HOST_OPTIONS for a in args)


def _faults() -> dict[str, int]:
    text = os.environ.get("DAQNET_EVB_FAULTS", "")
    out = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, _, value = item.partition("=")
        if key not in FAULT_KEYS or not value.isdigit():
            raise DaqnetError(
                f"DAQNET_EVB_FAULTS: '{item}' (known: {', '.join(k + '=N' for k in FAULT_KEYS)})"
            )
        out[key] = int(value)
    return out


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def run_config_text(cfg: dict[str, object], source: str) -> str:
    lines = [f"# daqnet-evb run description, written by daqnet from {source}"]
    lines += [f"{key} = {_text(value)}" for key, value in cfg.items()]
    return "\n".join(lines) + "\n"


def write_run_config(cfg: dict[str, object], path: Path, source: str) -> None:
    # Owner only: the file holds the run's TCP token.
    write_text_atomic(path, run_config_text(cfg, source), mode=0o600)


def write_scenario(scenario: Scenario, out_dir: Path) -> None:
    """scenario.json beside run.cfg: the effective scenario, so that `daqnet collect` (after a
    launch by hand or by srun) can say what ran and `daqnet report` can pair it with a
    prediction of the same scenario."""
    write_text_atomic(out_dir / "scenario.json", json.dumps(scenario.effective(), indent=1) + "\n")
