"""Which command reads which scenario key.

One scenario file serves every command, so most files hold keys that a given command does
not read (``[bench]`` keys in ``daqnet conflicts``). That is fine in the file, but a key the
user sets *for this run* (``--set``, ``--vary``) that the command ignores gives an unchanged
answer that looks like a finding: a scan over ``bench.fragment_bytes`` in steps mode prints
identical rows and a "best" point. :func:`unused` says why a key would be ignored, so the
command line can warn (``--set``) or refuse (``--vary``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import USER_ERRORS
from .scenario import Scenario

__all__ = ["read_with", "run_length_from_bench", "unused"]

_STAGES = ("fabric", "routing", "placement", "workload")

_SIMULATE_STEPS = {"mode", "message_bytes", "ideal", "injection_gbps", "ejection_gbps"}
_SIMULATE_PROTOCOL = {
    "mode",
    "injection_gbps",
    "ejection_gbps",
    "events",
    "warmup_events",
    "local_gbps",
    "timeseries_bins",
}
# [bench] keys that shape the event builder's traffic, which the protocol simulation mirrors.
# The rest (the transport's own settings, launcher, checksums, waiting, time-outs,
# baselines) only matter to real processes.
_BENCH_PROTOCOL = {
    "mode",
    "protocol",
    "transport",  # TCP's eager sends against MPI's rendezvous for large messages
    "ranks",
    "processes_per_node",
    "credits",
    "in_flight",
    "max_in_flight",
    "fragment_bytes",
    "fragment_distribution",
    "fragment_sigma",
    "fragment_bytes_per_ru",
    "meta_bytes",
    "command_bytes",
    "rate_hz",
    "events",
    "seconds",
    "warmup_seconds",
    "seed",
}


# [workload] keys the event builder reads (its gather schedule), and the protocol simulation.
_WORKLOAD_BENCH = ("kind", "schedule", "seed")
_WORKLOAD_PROTOCOL = (*_WORKLOAD_BENCH, "tasks_per_node")


def run_length_from_bench(scenario: Scenario) -> bool:
    """Whether the protocol simulation takes its run length from ``[bench]``: yes when
    ``bench.events`` or ``bench.seconds`` is above 0 (docs/simulate.md)."""
    return bool(scenario["bench"]["events"] or scenario["bench"]["seconds"])


def _command_name(command: str, scenario: Scenario) -> str:
    if command in ("simulate", "scan"):
        return f"daqnet {command} in {scenario['simulate']['mode']} mode"
    return f"daqnet {command}"


# The commands a "read by" names, with the mode of simulate.
_READERS = (
    ("conflicts", "conflicts", None),
    ("simulate in steps mode", "simulate", "steps"),
    ("simulate in protocol mode", "simulate", "protocol"),
    ("bench", "bench", None),
)


def _readers(scenario: Scenario, section: str, key: str) -> str:
    """Who reads the key, for the message: asked of the same rules, so that it never names
    the command that does not read it ("bench does not read workload.message_bytes (read
    by ..., daqnet bench)")."""
    return ", ".join(
        f"daqnet {label}"
        for label, command, mode in _READERS
        if _by_command(command, scenario, section, key, mode)
    )


def _by_command(
    command: str, scenario: Scenario, section: str, key: str, mode: str | None = None
) -> bool:
    """Whether `command` (in `mode`, else the scenario's) reads section.key at all."""
    mode = mode or scenario["simulate"]["mode"]
    if command in ("tables", "export"):
        return section in ("fabric", "routing")
    if command == "uplinks":
        return section in ("fabric", "routing", "placement")
    if command == "conflicts":
        # Conflicts count flows per link, not bytes: a message's size changes no figure.
        return section in _STAGES and (section, key) != ("workload", "message_bytes")
    if command == "repair":
        return section in _STAGES or (section == "simulate" and key in _SIMULATE_STEPS)
    if command == "emulate":
        if section in ("fabric", "routing", "emulate"):
            return True
        if scenario["emulate"]["traffic"] == "steps":  # plain TCP streams, max-min rates
            if section == "simulate":
                return key in ("injection_gbps", "ejection_gbps")
            return section in ("placement", "workload")
        if section == "placement":
            return key in ("order", "seed", "file", "hosts")
        if section == "simulate":  # the prediction: the protocol simulation, run for bench.seconds
            return key in ("injection_gbps", "ejection_gbps", "local_gbps")
        return section == "bench" and key not in ("seconds", "warmup_seconds", "events")
    if command == "bench":
        if section == "bench":
            return True
        if section == "placement":
            return key in ("order", "seed", "file")
        if section == "workload":
            return key in _WORKLOAD_BENCH
        return False
    # simulate and scan
    if section in _STAGES:
        # The protocol simulation's traffic is the event builder's: of [workload], what bench
        # reads (the gather schedule), and tasks_per_node, which must be 1.
        return mode == "steps" or section != "workload" or key in _WORKLOAD_PROTOCOL
    if section == "simulate":
        return key in (_SIMULATE_STEPS if mode == "steps" else _SIMULATE_PROTOCOL)
    if section == "bench":
        return mode == "protocol" and key in _BENCH_PROTOCOL
    return False


#: Keys read only for some values of another key (several values; see also _by_value).
_PERCS = ("supernodes", "drawers_per_supernode", "nodes_per_drawer", "ll_gbps", "lr_gbps")
_ONLY_FOR: dict[tuple[str, tuple[str, ...]], tuple[str, tuple[str, ...]]] = {
    ("fabric", (*_PERCS, "d_gbps", "d_links_per_pair")): ("fabric.kind", ("percs",)),
    ("fabric", ("p", "a", "h", "g", "local_gbps", "global_gbps")): ("fabric.kind", ("dragonfly",)),
    ("fabric", ("host_gbps",)): ("fabric.kind", ("percs", "dragonfly")),
    ("fabric", ("radix", "hosts", "levels", "taper", "hosts_per_leaf", "spine_radix")): (
        "fabric.kind",
        ("fat-tree",),
    ),
    # An imported fabric's hosts carry the names of the file; PERCS and dragonfly hosts
    # are numbered by their place.
    ("fabric", ("naming", "naming_seed", "naming_file", "host_prefix")): (
        "fabric.kind",
        ("fat-tree",),
    ),
    # PERCS links have rates of their own kinds (ll_gbps, lr_gbps, d_gbps, host_gbps).
    ("fabric", ("link_gbps",)): (
        "fabric.kind",
        ("fat-tree", "dragonfly", "ibnetdiscover", "slurm-topology"),
    ),
    ("routing", ("seed",)): ("routing.engine", ("random", "direct", "indirect")),
    ("routing", ("spread",)): ("routing.engine", ("direct", "indirect")),
    ("placement", ("seed",)): ("placement.order", ("random", "random-node", "random-drawer")),
    ("workload", ("targets",)): ("workload.kind", ("multicast",)),
    ("workload", ("rounds",)): ("workload.kind", ("bisection",)),
}


def _only_for(section: str, key: str) -> tuple[str, str, tuple[str, ...]] | None:
    """The (section, key) another key's value decides whether `section.key` is read, and
    those values (_ONLY_FOR); None when no such key does."""
    for (sec, names), (other, wanted) in _ONLY_FOR.items():
        if section == sec and key in names:
            s, k = other.split(".")
            return s, k, wanted
    return None


def read_with(values: Mapping[str, Any], section: str, key: str) -> bool:
    """Whether `section.key` is read with these scenario values, as far as it depends on
    another key's value (fabric.ll_gbps on a PERCS fabric only): what a result's effective
    scenario shows (a fat tree's listed PERCS link rates)."""
    rule = _only_for(section, key)
    if rule is None:
        return True
    s, k, wanted = rule
    inner = values.get(s)
    return not isinstance(inner, Mapping) or inner.get(k) in wanted


def _by_value(command: str, scenario: Scenario, section: str, key: str) -> str | None:
    """Keys that only matter for some value of another key: the reason, or None."""
    v = scenario.values
    cond = {
        ("routing", "file"): ("routing.engine", "table' or 'lft-dump"),
        ("routing", "subnet_file"): ("routing.engine", "lft-dump"),
        ("placement", "file"): ("placement.order", "file"),
        ("fabric", "naming_seed"): ("fabric.naming", "shuffled"),
        ("fabric", "naming_file"): ("fabric.naming", "file"),
        ("workload", "shifts"): ("workload.kind", "shift"),
        ("workload", "file"): ("workload.kind", "steps"),
        ("workload", "schedule"): ("workload.kind", "event-building"),
        ("workload", "seed"): ("workload.schedule", "random"),
        ("bench", "fragment_sigma"): ("bench.fragment_distribution", "normal' or 'lognormal"),
        ("bench", "tcp_address"): ("bench.transport", "tcp"),
        ("bench", "tcp_interface"): ("bench.transport", "tcp"),
        ("bench", "tcp_socket_buffer_bytes"): ("bench.transport", "tcp"),
        ("bench", "tcp_control_connection"): ("bench.transport", "tcp"),
        ("bench", "tcp_control_dscp"): ("bench.transport", "tcp"),
        ("bench", "libfabric_provider"): ("bench.transport", "libfabric"),
        ("bench", "libfabric_domain"): ("bench.transport", "libfabric"),
        ("bench", "senders"): ("bench.mode", "time-frames"),
        ("bench", "receivers"): ("bench.mode", "time-frames"),
        ("bench", "barrier"): ("bench.mode", "time-frames"),
        # Time frames run one unit per rank: no node holds an RU and a BU together.
        ("bench", "processes_per_node"): ("bench.mode", "event-manager"),
        ("bench", "local_path"): ("bench.mode", "event-manager"),
    }.get((section, key))
    rule = _only_for(section, key)
    if rule is not None and not read_with(v, section, key):
        s, k, kinds = rule
        listed = "' or '".join(kinds)
        return f"it is read only when {s}.{k} is '{listed}' (here '{v[s][k]}')"
    if (section, key) == ("simulate", "message_bytes") and v["workload"]["message_bytes"]:
        # Seen: a scan over simulate.message_bytes of examples/percs-64.toml, rows identical.
        given = float(v["workload"]["message_bytes"])
        shown = f"{given:,.0f}" if given.is_integer() else f"{given:,}"
        return (
            f"workload.message_bytes = {shown} is given, and it sets every message's size "
            "before simulate.message_bytes"
        )
    if (section, key) == ("fabric", "link_gbps") and v["fabric"]["kind"] == "ibnetdiscover":
        # Seen: --set fabric.link_gbps=200 on a capture of EDR links read as at 100, unsaid.
        # An ibsim net file carries no rates: there it is every cable's.
        try:
            defaulted = scenario.build_fabric().default_rate_cables
        except USER_ERRORS:
            return None  # the command says what is wrong with the file
        if defaulted == 0:
            return (
                "it is read only for cables whose line in the ibnetdiscover file gives no "
                "width × speed, and every cable's line here gives one (4xEDR: 100 Gb/s), which stays"
            )
    if cond is not None:
        other, wanted = cond
        s, k = other.split(".")
        have = v[s][k]
        if (section, key) == ("routing", "file"):
            if have not in ("table", "lft-dump"):
                return f"it is read only when {other} is 'table' or 'lft-dump' (here '{have}')"
        elif key == "fragment_sigma":
            if have == "fixed":
                return f"it is read only when {other} is 'normal' or 'lognormal' (here '{have}')"
        elif key == "seed" and section == "workload":
            if v["workload"]["kind"] in ("multicast", "bisection"):
                return None
            if v["workload"]["kind"] != "event-building" or have != "random":
                return f"it is read only when {other} is 'random' (here '{have}')"
        elif have != wanted:
            return f"it is read only when {other} is '{wanted}' (here '{have}')"
    # A scan's rows are figures, which host names change only where names pick hosts: a
    # hostname or file placement, tables that name them (fabric.naming_seed under topology
    # order ran identical rows).
    if (
        command == "scan"
        and section == "fabric"
        and key in ("naming", "naming_seed", "naming_file")
        and v["placement"]["order"] not in ("hostname", "file")
        and v["routing"]["engine"] not in ("table", "lft-dump")
    ):
        return (
            f"host names change no figure under placement.order = '{v['placement']['order']}' "
            f"and routing.engine = '{v['routing']['engine']}' (they pick hosts under order "
            "'hostname' or 'file', or routing tables that name them)"
        )
    if (section, key) == ("bench", "in_flight") and v["workload"]["schedule"] == "all-at-once":
        return "workload.schedule = 'all-at-once' asks for every fragment at once"
    if command in ("simulate", "scan") and scenario["simulate"]["mode"] == "protocol":
        from_bench = run_length_from_bench(scenario)
        if (section, key) == ("bench", "warmup_seconds") and not from_bench:
            return (
                "the run length comes from simulate.events and simulate.warmup_events "
                "unless bench.events or bench.seconds is set"
            )
        # simulate.events or simulate.warmup_events given beside bench.events or bench.seconds
        # is an error of its own (protocol_run_length): no warning before it.
    return None


def unused(scenario: Scenario, command: str, key: str) -> str | None:
    """Why `command` ignores `key` ("section.key") in this scenario, or None if it reads it.

    `command` is one of conflicts, tables, uplinks, repair, simulate, scan (as simulate) and bench.
    """
    section, name = key.split(".", 1)
    if section not in scenario.values or not isinstance(scenario.values[section], dict):
        return None
    if not _by_command(command, scenario, section, name):
        readers = _readers(scenario, section, name)
        return f"{_command_name(command, scenario)} does not read {key}" + (
            f" (read by {readers})" if readers else ""
        )
    why = _by_value(command, scenario, section, name)
    return f"{_command_name(command, scenario)} ignores {key}: {why}" if why else None
