"""Gather what the ranks of daqnet-evb wrote into one result: JSON, CSV tables, a summary.

Every rank leaves ``rank-N.json`` (its latest snapshot) and ``rank-N.csv`` (one row per unit
per report period). This module works on whatever is there, so a crashed or interrupted
run still gives its partial result.
"""

from __future__ import annotations

import bisect
import csv
import json
import math
from pathlib import Path
from typing import Any

from ..errors import DaqnetError
from ..provenance import provenance
from .result import BenchResult

__all__ = ["PMI_HINT", "collect", "latency_percentiles", "read_json", "read_run_config"]


def _merge_histograms(hists: list[dict[str, Any]]) -> tuple[dict[int, int], float, float, float]:
    buckets: dict[int, int] = {}
    base = growth = 0.0
    peak = 0.0
    for h in hists:
        base, growth = h["base_seconds"], h["growth"]
        peak = max(peak, h["max_seconds"])
        for k, n in h["buckets"]:
            buckets[k] = buckets.get(k, 0) + n
    return buckets, base, growth, peak


def latency_percentiles(hists: list[dict[str, Any]]) -> dict[str, float | None]:
    """p50, p99 (to the 1 % width of a bucket: its geometric middle) and the exact max."""
    buckets, base, growth, peak = _merge_histograms(hists)
    total = sum(buckets.values())
    out: dict[str, float | None] = {"p50": None, "p99": None, "max": peak if total else None}
    if not total:
        return out
    for name, q in (("p50", 0.5), ("p99", 0.99)):
        rank = math.ceil(q * total)
        seen = 0
        for k in sorted(buckets):
            seen += buckets[k]
            if seen >= rank:
                out[name] = min(peak, base * growth ** (k + 0.5))
                break
    return out


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deeply
        return None
    return doc if isinstance(doc, dict) else None


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _histogram(h: Any) -> bool:
    """A latency histogram as daqnet-evb writes it (geometric buckets of growth 1.01)."""
    return (
        isinstance(h, dict)
        and _number(h.get("base_seconds"))
        and h["base_seconds"] > 0
        and _number(h.get("growth"))
        and 1 < h["growth"] <= 2
        and _number(h.get("max_seconds"))
        and isinstance(h.get("buckets"), list)
        and all(
            isinstance(b, list) and len(b) == 2 and _whole(b[0]) and b[0] < 100_000 and _whole(b[1])
            for b in h["buckets"]
        )
    )


_COUNTERS = (
    "bytes_in",
    "bytes_out",
    "fragments_in",
    "fragments_out",
    "events_built",
    "built_bytes",
)
_UNIT_FIELDS = {
    "bu": ("missing_fragments", "duplicate_fragments", "corrupt_fragments"),
    "em": (
        "window_end_seconds",
        "window_start_seconds",
        "window_bytes",
        "window_events",
        "events_assigned",
    ),
    "ru": (),
}


def _is_snapshot(doc: dict[str, Any]) -> bool:
    """Whether a rank-N.json holds every field collect reads, of the types daqnet-evb
    writes: a file of another tool or version, or edited, is corrupt, not a traceback."""
    if not (
        _whole(doc.get("rank"))
        and isinstance(doc.get("host"), str)
        and doc.get("status") in ("running", "finished", "interrupted", "error")
        and isinstance(doc.get("error"), str)
        and _number(doc.get("cpu_seconds"))
        and _number(doc.get("time_seconds"))
        and isinstance(doc.get("units"), list)
    ):
        return False
    for u in doc["units"]:
        if not (
            isinstance(u, dict)
            and isinstance(u.get("unit"), str)
            and u["unit"] in _UNIT_FIELDS
            and _whole(u.get("index"))
        ):
            return False
        counters, window = u.get("counters"), u.get("window")
        if not (isinstance(counters, dict) and all(_number(counters.get(k)) for k in _COUNTERS)):
            return False
        if window is not None and not (
            isinstance(window, dict) and all(_number(window.get(k)) for k in _COUNTERS)
        ):
            return False
        if u.get("window_seconds") is not None and not _number(u["window_seconds"]):
            return False
        if not all(_number(u.get(k)) for k in _UNIT_FIELDS[u["unit"]]):
            return False
        if u["unit"] != "ru" and not _histogram(u.get("latency_histogram")):
            return False
        # Written since fragment_timeout_seconds: a part of missing_fragments.
        given_up = u.get("lost_fragments", 0) if u["unit"] == "bu" else 0
        if not (_whole(given_up) and given_up <= u.get("missing_fragments", 0)):
            return False
    return True


def _by_message(errors: dict[int, str]) -> list[str]:
    """'rank R: message', one line per message (every survivor of a death says the same)."""
    ranks: dict[str, list[int]] = {}
    for r in sorted(errors):
        ranks.setdefault(errors[r], []).append(r)
    return [
        f"rank{'s' if len(rs) > 1 else ''} {', '.join(map(str, rs))}: {msg}"
        for msg, rs in ranks.items()
    ]


def _failures(em: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The ranks the EM saw die and recovered from (bench.recover), as it wrote them."""
    rows = em.get("failures") if em else None
    if not isinstance(rows, list):
        return []
    out = []
    for f in rows:
        if not (
            isinstance(f, dict)
            and _whole(f.get("rank"))
            and f.get("role") in ("bu", "ru", "ru+bu")
            and _number(f.get("detected_at_seconds"))
        ):
            continue
        recovery = f.get("recovery_seconds")
        out.append(
            {
                "rank": f["rank"],
                "role": f["role"],
                "detected_at_seconds": f["detected_at_seconds"],
                "silent_seconds": f["silent_seconds"] if _number(f.get("silent_seconds")) else 0.0,
                "recovery_seconds": recovery if _number(recovery) else None,
            }
        )
    return out


def _scenario(out_dir: Path) -> dict[str, Any] | None:
    """The effective scenario `daqnet bench` (or --prepare) wrote beside run.cfg; None when
    there is none or it is not one (a file of another tool is ignored, not a traceback)."""
    doc = read_json(out_dir / "scenario.json")
    return doc if doc is not None and isinstance(doc.get("values"), dict) else None


#: How a transport's errors begin (TransportError): a rank that stopped on one lost a peer
#: or its network, so what its builder missed was under way, not lost.
_TRANSPORT_ERRORS = ("mpi: ", "tcp: ", "libfabric: ")


def _cut_off(doc: dict[str, Any]) -> bool:
    """Whether a rank ended on its transport's error (a peer died: its connection dropped,
    or MPI could not reach it): TCP counted a killed rank's fragments as lost, MPI and
    libfabric the same death's as in flight."""
    return doc.get("status") == "error" and str(doc.get("error", "")).startswith(_TRANSPORT_ERRORS)


def _scenario_as_run(out_dir: Path, cfg: dict[str, str]) -> dict[str, Any] | None:
    """The scenario beside run.cfg, with ``differs_from_run_cfg`` listing the [bench] keys
    whose value run.cfg changed since (a run.cfg edited by hand after --prepare ran PULL
    with 64 KiB fragments; the result said PUSH and 1 MiB, and the report paired it with a
    prediction of those at 0.064x)."""
    doc = _scenario(out_dir)
    if doc is None:
        return None
    from ..scenario.schema import run_config_keys
    from .config import DERIVED_FROM_BENCH

    bench = doc["values"].get("bench") or {}
    differ = []
    for key in run_config_keys():
        name = key["name"]
        if key["scenario"] != f"bench.{name}" or name not in cfg or name not in bench:
            continue
        given, ran = bench[name], _typed(cfg[name])
        if isinstance(given, list) or name in DERIVED_FROM_BENCH:
            continue  # written by daqnet bench from several keys: no one value to compare
        if given != ran and not (given is None and ran in ("", 0)):
            differ.append(f"bench.{name} ({ran!r} in run.cfg, {given!r} in scenario.json)")
    if differ:
        doc = {**doc, "differs_from_run_cfg": differ}
    return doc


_MEMORY_INTS = (
    "peak_rss_bytes",
    "buffer_bytes",
    "huge_page_bytes",
    "allocations",
    "allocations_after_warmup",
)


def _memory_row(rank: int, doc: dict[str, Any]) -> dict[str, Any] | None:
    """One process's memory (docs/bench.md "Memory"), or None for a rank file without it."""
    m = doc.get("memory")
    if not isinstance(m, dict):
        return None

    def whole(key: str) -> int | None:
        return m[key] if _whole(m.get(key)) else None

    def node(x: Any) -> int | None:  # -1 (unknown) and anything odd read as None
        return x if _whole(x) else None

    by_role: dict[str, int] = {}
    buffer_nodes = set()
    for u in doc["units"]:
        if _whole(u.get("buffer_bytes")):
            by_role[u["unit"]] = by_role.get(u["unit"], 0) + u["buffer_bytes"]
        if node(u.get("buffer_numa_node")) is not None:
            buffer_nodes.add(u["buffer_numa_node"])
    nic_node = node(m.get("nic_numa_node"))
    return {
        "rank": rank,
        "host": doc["host"],
        **{k: whole(k) for k in _MEMORY_INTS},
        "ru_buffer_bytes": by_role.get("ru", 0),
        "bu_buffer_bytes": by_role.get("bu", 0),
        "numa_node": node(m.get("numa_node")),
        "numa_nodes": whole("numa_nodes"),
        "buffer_numa_nodes": ",".join(map(str, sorted(buffer_nodes))),
        "nic": m.get("nic") if isinstance(m.get("nic"), str) else "",
        "nic_numa_node": nic_node,
        # Buffers on another node than the NIC cost every transfer a trip over the
        # inter-socket link (the LHCb nodes' lesson); None when the NIC's node is unknown.
        "buffers_on_nic_node": None if nic_node is None else buffer_nodes <= {nic_node},
    }


def _timeseries(out_dir: Path) -> list[dict[str, Any]]:
    """Built-event Gb/s and events/s per report period, from the builders' counters.

    Every rank reports at its own times: period n is due n report_seconds after the common
    start, but a process busy with large fragments writes it late (seen: 0.5 s late with
    64 MiB fragments), and the last row of each rank comes at its own end. Period n of the
    table therefore ends when the last rank reported it (the ends kept increasing), and each
    rank's row counts in the first period that ends at or after it was written: the periods
    tile the run, their seconds add up to it and every built event counts once. A period
    that holds a rank's last row is `partial`.
    """
    rows: list[tuple[int, float, int, int, bool]] = []  # (period, time, Δbytes, Δevents, final)
    for path in sorted(out_dir.glob("rank-*.csv")):
        last: dict[str, tuple[int, int]] = {}
        try:
            table = list(csv.DictReader(path.read_text(errors="replace").splitlines()))
        except (OSError, csv.Error):  # unreadable, or no CSV: no time series from it
            continue
        for row in table:
            try:
                if row["unit"] != "bu":
                    continue
                t = float(row["time_seconds"])
                n = int(row["period"]) + int(row["final"])
                b, e = int(row["built_bytes"]), int(row["events_built"])
                unit, final = row["index"], row["final"] == "1"
            except (KeyError, ValueError, TypeError):
                continue  # a line cut short by a crash
            if not math.isfinite(t) or t < 0:
                continue
            b0, e0 = last.get(unit, (0, 0))
            last[unit] = (b, e)
            rows.append((n, t, b - b0, e - e0, final))
    if not rows:
        return []
    ends: dict[int, float] = {}
    for n, t, *_ in rows:
        ends[n] = max(ends.get(n, t), t)
    edges: list[tuple[int, float]] = []
    for n in sorted(ends):
        if not edges or ends[n] > edges[-1][1]:  # an earlier period's end covers this one's
            edges.append((n, ends[n]))
    times = [end for _, end in edges]
    slots = [{"bytes": 0, "events": 0, "partial": False} for _ in edges]
    for _, t, db, de, final in rows:
        slot = slots[bisect.bisect_left(times, t)]  # t <= times[-1]: the largest time is an end
        slot["bytes"] += db
        slot["events"] += de
        slot["partial"] |= final
    out = []
    for i, ((n, end), s) in enumerate(zip(edges, slots, strict=True)):
        seconds = end - (times[i - 1] if i else 0.0)
        out.append(
            {
                "period": n,
                "time_seconds": round(end, 6),
                "seconds": round(seconds, 6),
                "throughput_gbps": s["bytes"] * 8 / seconds / 1e9 if seconds > 0 else 0.0,
                "events_per_second": s["events"] / seconds if seconds > 0 else 0.0,
                "built_bytes": s["bytes"],
                "events": s["events"],
                "partial": s["partial"],
            }
        )
    return out


def read_run_config(path: Path) -> dict[str, str]:
    """The key = value pairs of a run.cfg (empty if there is none), read as daqnet-evb reads
    them (cpp/evb/config.cpp): '#' starts a comment anywhere on a line."""
    try:
        lines = path.read_text(errors="replace").split("\n")  # as getline: only \n ends a line
    except OSError:
        return {}
    out = {}
    for line in lines:
        key, eq, value = line.split("#", 1)[0].partition("=")
        if eq:
            out[key.strip(" \t\r")] = value.strip(" \t\r")
    return out


# Why daqnet-evb may have run with another number of ranks than prepared, for messages.
PMI_HINT = (
    "under srun, the mpich wheel's MPI needs srun --mpi=pmi2 (or SLURM_MPI_TYPE=pmi2; "
    "srun --mpi=list shows what this Slurm offers), else every task runs alone as rank 0 of 1"
)


# run.cfg keys a result never repeats: whoever has the token may join the run's TCP mesh.
SECRET_KEYS = frozenset({"tcp_token"})

# run.cfg keys repeated at the top of a result, beside its figures.
_HEADLINE = ("mode", "protocol", "schedule", "credits", "in_flight", "fragment_bytes", "meta_bytes")


def _nodes(cfg: dict[str, str]) -> tuple[bool, int]:
    """Whether run.cfg is a time-frames run, and its nodes: its ranks, over
    processes_per_node in event-manager mode (time frames have one unit per rank)."""
    frames = cfg.get("mode") == "time-frames"
    ranks = int(_typed(cfg.get("ranks", "0")) or 0)
    ppn = 1 if frames else max(1, int(_typed(cfg.get("processes_per_node", "1")) or 1))
    return frames, ranks // ppn


def _mean_fragment(cfg: dict[str, str]) -> dict[str, float]:
    """{"fragment_bytes": the mean over the readout units} when fragment_bytes_per_ru gives
    their sizes (cycled over them): fragment_bytes alone then read 1,048,576 for sizes of
    65,536 and 1,048,576, a mean of 557,056. Empty otherwise."""
    try:
        sizes = [float(v) for v in cfg.get("fragment_bytes_per_ru", "").split(",") if v.strip()]
    except ValueError:
        return {}
    frames, nodes = _nodes(cfg)
    rus = int(_typed(cfg.get("senders", "0")) or 0) if frames else nodes
    if not sizes or rus < 1:
        return {}
    return {"fragment_bytes": sum(sizes[i % len(sizes)] for i in range(rus)) / rus}


def _typed(text: str) -> Any:
    """A run.cfg value as JSON would have it: whole numbers, numbers, booleans, else text."""
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _rank_of(path: Path) -> int | None:
    try:
        return int(path.stem.split("-", 1)[1])
    except (IndexError, ValueError):
        return None


def integrity_errors(corrupt: int, duplicate: int, lost: int = 0) -> list[str]:
    """The errors a run's damaged fragments make (a measured scan keeps such a run as a row,
    with a warning, where other errors stop it)."""
    return [
        f"{n:,} {what} fragment{'s' if n != 1 else ''} ({why})"
        for n, what, why in (
            (corrupt, "corrupt", "wrong length, source, event or checksum"),
            (duplicate, "duplicate", "received twice"),
            (lost, "lost", "never received"),
        )
        if n
    ]


def first_rank_error(out_dir: Path) -> str:
    """The first line of the earliest rank-N.error, or ""."""
    found = []
    for path in out_dir.glob("rank-*.error"):
        try:
            found.append((path.stat().st_mtime, path.read_text(errors="replace").strip()))
        except OSError:
            continue
    lines = [text.splitlines()[0] for _, text in sorted(found) if text]
    return lines[0] if lines else ""


def collect(out_dir: str | Path, expected_ranks: int | None = None) -> BenchResult:
    """The result document of a run directory (complete or not).

    The number of ranks is the one run.cfg was prepared for (else `expected_ranks`, else
    launch.json's); a run that MPI started with another number is refused (DaqnetError).
    """
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        what = "not a directory" if out_dir.exists() else "no such directory"
        raise DaqnetError(f"{out_dir}: {what} (the --out of a daqnet-evb run)")
    cfg = read_run_config(out_dir / "run.cfg")
    launch = read_json(out_dir / "launch.json") or {}
    if not _whole(launch.get("ranks")):  # a launch.json daqnet-evb did not write
        launch.pop("ranks", None)
    text = cfg.get("ranks", "")
    prepared = int(text) if text.isascii() and text.isdigit() else None
    n = prepared or expected_ranks or launch.get("ranks")
    if n and launch.get("ranks") not in (None, n):
        # srun's process manager is the usual cause; by hand it is the rank count given.
        hint = PMI_HINT if launch.get("srun", True) else f"start it with mpiexec -n {n}"
        raise DaqnetError(
            f"{out_dir}: run.cfg was prepared for {n} ranks but daqnet-evb ran with "
            f"{launch['ranks']} (launch.json): not collected; {hint}"
        )
    ranks, corrupt_files = {}, []
    for path in out_dir.glob("rank-*.json"):
        doc = read_json(path)
        if doc is None or not _is_snapshot(doc):
            corrupt_files.append(path)
            continue
        ranks[doc["rank"]] = doc
    if n and any(r >= n for r in ranks):
        raise DaqnetError(
            f"{out_dir}: rank files up to rank-{max(ranks)}.json for a run of {n} ranks "
            "(left from another run?): not collected"
        )
    if not ranks:
        why = (
            f"only corrupt ones ({', '.join(p.name for p in sorted(corrupt_files))})"
            if corrupt_files
            else "daqnet-evb wrote none"
        )
        # A rank that said why it failed (rank-N.error) names the cause: the PMI hint was
        # given for a network interface that did not exist.
        said = first_rank_error(out_dir)
        hint = f"; {said}" if said else f"; {PMI_HINT}" if prepared and not launch else ""
        raise DaqnetError(f"{out_dir}: no rank results (rank-N.json) to collect: {why}{hint}")
    n = n or len(ranks)
    em = next(
        (u | {"rank": r} for r, d in ranks.items() for u in d["units"] if u["unit"] == "em"), None
    )
    failures = _failures(em)
    # Ranks that died and were recovered from: their last snapshot (or none) is no error, and
    # what their builders missed belongs to abandoned events, not to lost fragments.
    dead = {f["rank"] for f in failures}

    units, bu_hists = [], []
    lost = in_flight = duplicate = corrupt = 0
    # Stopped before the event manager opened its window: a unit's own "window" is then
    # part of the warm-up, and its rates (builders at 17-19 Gb/s, labelled "over the
    # window") are none of the window's.
    opened = em is None or (
        em["window_start_seconds"] >= 0 and em["window_end_seconds"] > em["window_start_seconds"]
    )
    for r in sorted(ranks):
        d = ranks[r]
        shared = len(d["units"]) > 1
        for u in d["units"]:
            w = u.get("window") if opened else None
            secs = u.get("window_seconds") or math.nan
            row = {
                "rank": r,
                "host": d["host"],
                "unit": u["unit"],
                "index": u["index"],
                "status": d["status"],
                "gbps_in": w["bytes_in"] * 8 / secs / 1e9 if w else None,
                "gbps_out": w["bytes_out"] * 8 / secs / 1e9 if w else None,
                "bytes_per_second_in": w["bytes_in"] / secs if w else None,
                "bytes_per_second_out": w["bytes_out"] / secs if w else None,
                "bytes_in": u["counters"]["bytes_in"],
                "bytes_out": u["counters"]["bytes_out"],
                "fragments_in": u["counters"]["fragments_in"],
                "fragments_out": u["counters"]["fragments_out"],
                "events_built": u["counters"]["events_built"],
                "built_bytes": u["counters"]["built_bytes"],
                "events_per_second": w["events_built"] / secs if w else None,
                "cpu_seconds": d["cpu_seconds"],
                "cpu_shared_with": ",".join(x["unit"] for x in d["units"] if x is not u)
                if shared
                else "",
            }
            if u["unit"] == "bu":
                # Fragments the builder gave up on (fragment_timeout_seconds) are lost.
                # The others of events under way: in flight if the run was interrupted,
                # the rank never finished (killed: it cannot tell) or it failed on a lost
                # fragment; lost if it ended.
                given_up = u.get("lost_fragments", 0)
                missing = u["missing_fragments"] - given_up
                # A rank declared dead that lived on, cut off, gave up on fragments too:
                # they belong to abandoned events, as the rest of what it missed.
                lost += 0 if r in dead else given_up
                if r in dead:
                    pass
                elif d["status"] in ("running", "interrupted") or given_up or _cut_off(d):
                    in_flight += missing
                else:
                    lost += missing
                duplicate += u["duplicate_fragments"]
                corrupt += u["corrupt_fragments"]
                bu_hists.append(u["latency_histogram"])
                row["latency_p50_seconds"] = latency_percentiles([u["latency_histogram"]])["p50"]
            units.append(row)

    statuses = {r: ranks[r]["status"] for r in ranks if r not in dead}
    corrupt_ranks = {_rank_of(p) for p in corrupt_files} - {None}
    missing = sorted(set(range(n)) - set(ranks) - corrupt_ranks - dead)
    # A rank declared dead may have lived on, cut off, and failed on its own: no error of the run.
    errors = _by_message(
        {r: ranks[r]["error"] for r in ranks if ranks[r]["status"] == "error" and r not in dead}
    )
    errors += [f"rank {r}: no result file" for r in missing]
    errors += [
        f"rank {_rank_of(p)}: result file {p.name} is corrupt (not a rank snapshot)"
        for p in sorted(corrupt_files)
    ]
    errors += [
        f"rank {r}: stopped without finishing (last report at {ranks[r]['time_seconds']:.1f} s)"
        for r in sorted(ranks)
        if ranks[r]["status"] == "running" and r not in dead
    ]
    # Damaged data is a failed run, in result.json as on the exit status: it read "finished"
    # with no error beside 150 corrupt fragments, and a script reading the status took it.
    # Lost ones are the builders' errors already, which say from which RU; said here when
    # no rank said anything.
    errors += integrity_errors(corrupt, duplicate, 0 if errors else lost)
    if any(s == "interrupted" for s in statuses.values()):
        status = "interrupted"
    elif errors or any(s != "finished" for s in statuses.values()):
        status = "failed"
    elif failures:
        status = "degraded"
    else:
        status = "finished"

    result = BenchResult(
        status=status,
        interrupted=status == "interrupted",
        errors=errors,
        ranks=n,
        transport=launch.get("transport"),
        mpi_library=launch.get("mpi_library"),
        fabric_endpoint=launch.get("fabric_endpoint") or None,
        # What was run, from run.cfg: every result says its protocol, credits, sizes ...
        **({k: _typed(cfg[k]) for k in _HEADLINE if k in cfg} | _mean_fragment(cfg)),
        run_config={k: _typed(v) for k, v in cfg.items() if k not in SECRET_KEYS},
        lost_fragments=lost,
        in_flight_fragments=in_flight,
        duplicate_fragments=duplicate,
        corrupt_fragments=corrupt,
        failures=failures,
        abandoned_events=em["abandoned_events"] if em and _whole(em.get("abandoned_events")) else 0,
        incomplete_events=em["incomplete_events"]
        if em and _whole(em.get("incomplete_events"))
        else 0,
        builder_latency_seconds=latency_percentiles(bu_hists),
        units=units,
        timeseries=_timeseries(out_dir),
        memory=[m for r in sorted(ranks) if (m := _memory_row(r, ranks[r]))],
        config=_scenario_as_run(out_dir, cfg),
        provenance=provenance(),
    )
    if em is not None:
        seconds = em["window_end_seconds"] - em["window_start_seconds"]
        result.events_built = em["window_events"]
        # Stopped in the warm-up: the window never opened, and no rate was measured (null,
        # not a rate of 0 over a window of NaN seconds).
        if seconds > 0 and em["window_start_seconds"] >= 0:
            result.throughput_gbps = em["window_bytes"] * 8 / seconds / 1e9
            result.bytes_per_second = em["window_bytes"] / seconds
            result.events_per_second = em["window_events"] / seconds
            result.measured_seconds = seconds
            result.warmup_seconds = em["window_start_seconds"]
        result.latency_seconds = latency_percentiles([em["latency_histogram"]])
        result.events_assigned = em["events_assigned"]
    base = read_json(out_dir / "baseline.json")
    if base and _number(base.get("throughput_gbps")):
        result.baseline = {**base, **_baseline_ratio(result.throughput_gbps, base, cfg)}
    return result


def _baseline_ratio(
    gbps: float | None, base: dict[str, Any], cfg: dict[str, str]
) -> dict[str, Any]:
    """The event builder's throughput over the baseline's, per receiving node of each: the
    totals over different receivers read a p2p baseline (half the nodes receive) at 1.44×
    where each builder took 0.72× of what a p2p receiver took, and a time-frames run (one of
    four ranks receives) against an all-to-all (all four do) at 0.89× where 0.25× was the
    most a 3 → 1 gather could reach. Also the two receiving node counts."""
    frames, nodes = _nodes(cfg)
    builders = int(_typed(cfg.get("receivers", "0")) or 0) if frames else nodes
    # p2p: half the nodes receive (from the ranks: an older baseline.json's pairs counted
    # pairs of processes, paired by position).
    receiving = nodes // 2 if base.get("name") == "p2p" else nodes
    ratio = None
    if gbps and base["throughput_gbps"] and builders > 0 and receiving > 0:
        ratio = (gbps / builders) / (base["throughput_gbps"] / receiving)
    return {"ratio": ratio, "receiving_nodes": {"event_builder": builders, "baseline": receiving}}
