"""The fabric planner (``daqnet plan``): the fat tree that carries N hosts at a given link
rate with switches of a given radix, for each taper asked, side by side.

Each candidate is built by the same fat-tree builder the scenarios use (so counts are those
of the fabric daqnet simulates): a leaf tapered a:b keeps every port in use, k·a/(a+b) hosts
and k·b/(a+b) up-links (36 ports at 2:1: 24 hosts, 12 up-links, as NCAR trimmed
Yellowstone's top-of-rack level); two levels while the leaves fit under one spine's ports,
three above. Cables between a host and its leaf are copper (same rack, ≤ 3 m), cables
between switches optical, unless a prices file says otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DaqnetError
from .fabric import Fabric, fat_tree, parse_taper
from .io.files import read_toml
from .result import Result, optional

__all__ = [
    "DEFAULT_PRICES",
    "Plan",
    "candidate",
    "hosts_per_leaf",
    "one_switch_cost",
    "plan",
    "price",
    "read_prices",
]

#: Unit prices. Cables as reported for the LHCb upgrade (copper ≤ 3 m ~150 CHF, optical
#: ≤ 100 m ~500 CHF); the switch price per port is an assumption to override.
DEFAULT_PRICES: dict[str, Any] = {
    "currency": "CHF",
    "switch_port": 400.0,
    "copper_cable": 150.0,
    "optical_cable": 500.0,
    "copper_stages": ["host->leaf"],
}
#: The stages of cables a plan counts, host to top; copper_stages names some of them.
STAGES = ("host->leaf", "leaf->spine", "spine->core")
#: A unit price above this is a typo (a price of 1e300 printed 300 digits into the table).
MAX_PRICE = 1e9
#: The largest switch daqnet builds (cpp/fabric/fat_tree.hpp, kMaxRadix).
MAX_RADIX = 4096


@dataclass
class Plan(Result):
    """One candidate fat tree per taper (``daqnet plan --json``)."""

    hosts: int
    gbps: float
    radix: int
    prices: dict[str, Any]
    candidates: list[dict[str, Any]] = field(default_factory=list)
    #: where the document was made: daqnet version, build commit, machine, date (daqnet.provenance)
    provenance: dict[str, Any] | None = optional()


def read_prices(path: str | Path) -> dict[str, Any]:
    """Unit prices from a TOML file ([prices] with any of DEFAULT_PRICES' keys)."""
    data = read_toml(Path(path), "prices")
    given = data.get("prices")
    if not isinstance(given, dict) or set(data) - {"prices"}:
        raise DaqnetError(f"{path}: expected one [prices] table")
    prices = dict(DEFAULT_PRICES)
    for key, value in given.items():
        if key not in DEFAULT_PRICES:
            raise DaqnetError(
                f"{path}: unknown key 'prices.{key}' (known: {', '.join(DEFAULT_PRICES)})"
            )
        where = f"{path}: prices.{key} = {value!r}"
        want = type(DEFAULT_PRICES[key])
        if want is float:
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise DaqnetError(f"{where}: expected a number")
            if not 0 <= value <= MAX_PRICE:  # NaN fails too
                raise DaqnetError(f"{where}: must be from 0 to {MAX_PRICE:g}")
            value = float(value)
        elif not isinstance(value, want):
            raise DaqnetError(f"{where}: expected a {'list' if want is list else 'string'}")
        if key == "copper_stages":
            for k, stage in enumerate(value):
                if stage not in STAGES:
                    raise DaqnetError(
                        f"{where}: {stage!r} is not a stage of cables (known: {', '.join(STAGES)})"
                    )
                if stage in value[:k]:
                    raise DaqnetError(f"{where}: {stage!r} is listed twice")
        if key == "currency" and not value.strip():
            raise DaqnetError(f'{where}: empty (it names the prices\' unit, e.g. "CHF")')
        prices[key] = value
    return prices


def hosts_per_leaf(radix: int, taper: str) -> int:
    """Hosts of a `radix`-port leaf tapered "a:b" with every port in use: radix·a/(a+b)."""
    ((a, b),) = parse_taper(taper, 2, "--taper")
    if a < 1 or b < 1:
        raise DaqnetError(f"--taper {taper}: both terms must be at least 1")
    if b > a:  # checked first: "radix x 1 / 3 is not whole" hid it on 8-port leaves
        raise DaqnetError(
            f"--taper {taper}: a taper (down:up) keeps at most as many up-links as down-links"
        )
    if (radix * a) % (a + b) != 0:
        raise DaqnetError(
            f"--taper {taper}: {radix}-port leaves cannot split {a}:{b} "
            f"(radix × {a} / {a + b} is not whole)"
        )
    return radix * a // (a + b)


def price(ports: int, copper: int, optical: int, prices: dict[str, Any]) -> float:
    """What switch ports and copper and optical cables cost at `prices`."""
    return float(
        ports * prices["switch_port"]
        + copper * prices["copper_cable"]
        + optical * prices["optical_cable"]
    )


def one_switch_cost(hosts: int, radix: int, prices: dict[str, Any]) -> float:
    """A single `radix`-port switch holding `hosts` hosts (a non-blocking crossbar), priced
    as candidate() prices a tree: its ports and the hosts' cables."""
    copper = hosts if "host->leaf" in prices["copper_stages"] else 0
    return price(radix, copper, hosts - copper, prices)


def candidate(
    hosts: int,
    gbps: float,
    radix: int,
    taper: str,
    prices: dict[str, Any],
    levels: int | None = None,
    spine_radix: int | None = None,
) -> dict[str, Any]:
    """One planned fat tree (a row of Plan.candidates): of `levels` levels, else of as few
    as hold the hosts; `spine_radix` as fat_tree() takes it."""
    per_leaf = hosts_per_leaf(radix, taper)
    leaves = math.ceil(hosts / per_leaf)
    levels = levels or (2 if leaves <= radix else 3)
    try:
        fab = fat_tree(
            radix=radix,
            hosts=hosts,
            levels=levels,
            taper=[taper] if levels == 2 else [taper, "1:1"],
            hosts_per_leaf=per_leaf,
            link_gbps=gbps,
            spine_radix=spine_radix,
        )
    except (DaqnetError, ValueError) as err:
        # The builder names scenario keys; here they are command-line options.
        text = (
            str(err)
            .replace("fabric.hosts = ", "--hosts ")
            .replace("fabric.radix = ", "--radix ")
            .replace(" (fabric.levels = 3 holds more)", "")  # plan picks the levels itself
        )
        if "holds at most" in text:  # daqnet builds up to 3 levels: the radix is the lever
            text += " (a larger --radix holds more)"
        raise DaqnetError(f"--taper {taper}: {text}") from None
    level = fab.nodes()["level"]
    switches = {fab.level_name(lv): int((level == lv).sum()) for lv in range(1, fab.levels + 1)}
    classes = fab.link_classes()
    up = [f"{fab.level_name(lv)}->{fab.level_name(lv + 1)}" for lv in range(0, fab.levels)]
    up[0] = "host->leaf"
    cables = {stage: classes.count(stage) for stage in up}
    copper = sum(n for s, n in cables.items() if s in prices["copper_stages"])
    optical = sum(cables.values()) - copper
    ports = int(fab.nodes()["ports"][level >= 1].sum())
    cost = price(ports, copper, optical, prices)
    # Bisection: half the hosts against the other half, limited by the up-links of each
    # level (half of them serve each half) as far as the hosts below can fill them.
    narrowest = round(min(_fillable(fab)), 9)  # shares of a cable: 26.000000000000004
    # Three levels: leaves in different pods share no spine, so D-mod-K's symmetry needs every
    # pod full, not only every leaf (radix 36: 666 hosts, full leaves, still conflict).
    shape = fab.xgft  # the builder's trees are XGFTs
    pod = per_leaf * shape["down"][1] if shape is not None and fab.levels == 3 else None
    # What a scenario gives to build this tree: its taper alone keeps radix/2 hosts per leaf.
    keys: dict[str, Any] = {
        "radix": radix,
        "hosts": hosts,
        "levels": fab.levels,
        "taper": taper if fab.levels == 2 else [taper, "1:1"],
        "hosts_per_leaf": per_leaf,
        "link_gbps": gbps,
    }
    if spine_radix is not None:
        keys["spine_radix"] = spine_radix
    return {
        "taper": taper,
        "levels": fab.levels,
        "hosts_per_leaf": per_leaf,
        "uplinks_per_leaf": radix - per_leaf,
        "full_leaf_hosts": leaves * per_leaf,
        "full_pod_hosts": math.ceil(hosts / pod) * pod if pod else None,
        "fabric": keys,
        # The top level as the builder makes it, whatever the hosts: a partly used one is
        # priced whole (switch ports count, used or not).
        "top_ports_used": cables[up[-1]] // switches[fab.level_name(fab.levels)],
        "switches": switches,
        "switches_total": sum(switches.values()),
        "switch_ports": ports,
        "cables": {**cables, "copper": copper, "optical": optical},
        "cost": cost,
        "cost_per_host": cost / hosts,
        "bisection_gbps": narrowest * gbps / 2,
        "bisection_fraction": narrowest / hosts,
    }


def _fillable(fab: Fabric) -> list[float]:
    """Per stage of up-cables (host->leaf, leaf->spine, ...), how many cables' worth the hosts
    below can fill: a switch passes up at most what reaches it from below, spread evenly over
    its up-cables. A leaf of 4 hosts has 4 cables' worth to give, however many up-links it
    has: counting all 12 of one such leaf (100 hosts, 2:1) read 3,000 Gb/s of bisection where
    a cut through it crosses 2,600."""
    level = fab.nodes()["level"]
    links = fab.links()
    src, dst = links["src"], links["dst"]
    n = len(level)
    inflow = (level == 0).astype(float)  # a host fills its own link
    stages = []
    for lv in range(fab.levels):
        up = (level[src] == lv) & (level[dst] == lv + 1)
        s, d = src[up], dst[up]
        cables = np.bincount(s, minlength=n).astype(float)
        share = np.minimum(cables, inflow)[s] / cables[s]  # what each up-cable carries
        stages.append(float(share.sum()))
        inflow = np.bincount(d, weights=share, minlength=n)
    return stages


def plan(
    hosts: int,
    gbps: float,
    radix: int,
    tapers: list[str] | None = None,
    prices: dict[str, Any] | None = None,
) -> Plan:
    """The candidates for `hosts` hosts, one per taper ("1:1" when none is given)."""
    if hosts < 2:
        raise DaqnetError(f"--hosts {hosts}: at least 2 hosts")
    if not (gbps > 0 and math.isfinite(gbps)):
        raise DaqnetError(f"--gbps {gbps}: must be a finite rate > 0")
    # Said of --radix, not of the taper it was first met with ("--taper 1:1: 3-port leaves
    # cannot split 1:1").
    if radix < 4 or radix % 2 or radix > MAX_RADIX:
        raise DaqnetError(f"--radix {radix}: must be an even number from 4 to {MAX_RADIX}")
    if hosts > 2**31 - 1:  # it read "--taper 1:1: --hosts 10000000000: out of range"
        raise DaqnetError(f"--hosts {hosts}: at most {2**31 - 1:,} hosts")
    prices = prices or dict(DEFAULT_PRICES)
    # One column per taper: a taper given twice printed its column twice.
    tapers = list(dict.fromkeys(t.replace(" ", "") for t in tapers or ["1:1"]))
    try:
        rows = [candidate(hosts, gbps, radix, t, prices) for t in tapers]
    except ValueError as err:
        raise DaqnetError(str(err)) from None
    from .provenance import provenance

    return Plan(
        hosts=hosts,
        gbps=gbps,
        radix=radix,
        prices=prices,
        candidates=rows,
        provenance=provenance(),
    )
