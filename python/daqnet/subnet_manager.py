"""OpenSM as a real component: the forwarding tables a real subnet manager computes.

No InfiniBand hardware is needed: ibsim (Debian ``ibsim-utils``) simulates the fabric from
an ibsim net file, and OpenSM (``opensm``) runs against it through ``libumad2sim.so``
(``libumad2sim0``), which redirects its management datagrams to ibsim. OpenSM then writes
``opensm-lfts.dump`` and ``opensm-subnet.lst``, which :func:`daqnet.routing.from_lft_dump`
reads back.

An OpenSM routing engine that fails (e.g. ``ftree`` on a fabric that is not a fat tree)
silently falls back to ``minhop``; :func:`run_opensm` reads OpenSM's log and fails loudly
unless the engine asked for configured every switch.
"""

from __future__ import annotations

import glob
import math
import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from .errors import DaqnetError
from .fabric import Fabric
from .io.files import ensure_dir

__all__ = ["OPENSM_ENGINES", "OpensmRun", "dump_lfts_gap", "find_tools", "run_opensm"]

#: OpenSM routing engines daqnet runs (opensm -R), name → what it does.
OPENSM_ENGINES: dict[str, str] = {
    "ftree": "fat-tree routing (D-mod-K over the tree's levels)",
    "updn": "up/down routing from the root switches (any topology, deadlock-free)",
    "minhop": "fewest hops, balanced over ports (OpenSM's default)",
    "dfsssp": "deadlock-free single-source shortest paths, balanced over links",
}

_PACKAGES = "opensm ibsim-utils libumad2sim0"


@dataclass(frozen=True)
class OpensmRun:
    """What one OpenSM run wrote, and how long it took."""

    engine: str
    out: Path
    net_file: Path
    lft_dump: Path
    subnet_list: Path
    log: Path
    seconds: float
    version: str


def dump_lfts_gap(path: str | Path) -> int | None:
    """The top LID that `path` (dump_lfts or ibroute output) announces but leaves out, or None.

    ibroute reads a table in blocks of 64 LIDs and rounds the last block down, so a top LID
    that begins a block (0x40, 0x540) is never printed, though the header announces it and
    the switch routes it: such a dump routes no host there. OpenSM gives every switch the
    same top, so the first table tells."""
    top, highest = None, 0
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("Unicast lids"):
                if top is not None:
                    break
                m = re.match(r"Unicast lids \[0x[0-9a-fA-F]+-0x([0-9a-fA-F]+)\]", line)
                if m is None:
                    return None
                top = int(m.group(1), 16)
            elif top is not None and line.startswith("0x"):
                try:
                    highest = max(highest, int(line.split(maxsplit=1)[0], 16))
                except ValueError:  # not an entry: the importer says what is wrong
                    continue
    # A table with no entry at all is no sign of the cut.
    return top if top and top % 64 == 0 and 0 < highest < top else None


def find_tools() -> tuple[str, str, str]:
    """Paths of ibsim, opensm and libumad2sim.so; a DaqnetError naming the packages if one
    is missing. ``DAQNET_UMAD2SIM`` overrides where the library is looked for."""
    ibsim, opensm = shutil.which("ibsim"), shutil.which("opensm")
    if opensm is None:
        opensm = next(
            (p for p in ("/usr/sbin/opensm", "/sbin/opensm") if os.access(p, os.X_OK)), None
        )
    patterns = ("/usr/lib/*/umad2sim/libumad2sim.so", "/usr/lib*/umad2sim/libumad2sim.so",
                "/usr/local/lib*/umad2sim/libumad2sim.so")  # fmt: skip
    found = sorted(p for pattern in patterns for p in glob.glob(pattern))
    lib = os.environ.get("DAQNET_UMAD2SIM") or (found[0] if found else None)
    missing = [
        n for n, p in (("ibsim", ibsim), ("opensm", opensm), ("libumad2sim.so", lib)) if not p
    ]
    if missing or ibsim is None or opensm is None or lib is None:
        raise DaqnetError(
            f"OpenSM under ibsim needs {', '.join(missing)}: install the Debian packages "
            f"{_PACKAGES} (apt-get install {_PACKAGES})"
        )
    # Absolute: OpenSM and the diagnostics run in a scratch directory (run_opensm).
    return os.path.abspath(ibsim), os.path.abspath(opensm), os.path.abspath(lib)


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])


def _start_ibsim(
    ibsim: str, fabric: Fabric, net: Path, env: dict[str, str], log: Path, timeout: float
) -> subprocess.Popen[bytes]:
    ports = int(fabric.nodes()["ports"].sum())
    # ibsim's default limits (2,048 nodes, 256 switches) are raised to the fabric's size.
    cmd = [
        ibsim,
        "-s",
        "-n",  # no console: ibsim would spin on a closed standard input
        "-N", str(max(2048, fabric.num_hosts + fabric.num_switches + 16)),
        "-S", str(max(256, fabric.num_switches + 16)),
        "-P", str(max(13312, ports + 2 * fabric.num_hosts + 64)),
        str(net),
    ]  # fmt: skip
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env
        )
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if "Network simulator ready" in log.read_text(errors="replace"):
                return proc
            if proc.poll() is not None:
                raise DaqnetError(
                    f"ibsim could not load {net} (exit {proc.returncode}): {_tail(log)}"
                )
            time.sleep(0.05)
        raise DaqnetError(f"ibsim did not get ready within {timeout:.3g} s: {_tail(log)}")
    except BaseException:  # a Ctrl-C while it starts too: no ibsim outlives daqnet
        proc.kill()
        proc.wait()
        raise


def run_opensm(fabric: Fabric, engine: str, out: str | Path, timeout: float = 600.0) -> OpensmRun:
    """Compute OpenSM's forwarding tables for `fabric` with routing engine `engine`.

    Writes into `out`: ``fabric.net`` (the ibsim net file), ``opensm-lfts.dump``,
    ``opensm-subnet.lst``, ``opensm.log`` and ``ibsim.log``; with infiniband-diags
    installed, also what a cluster's tools report of the routed subnet:
    ``ibnetdiscover.out`` and ``dump_lfts.out``. Each run talks to its own
    ibsim (a private ``IBSIM_SOCKNAME``), so runs in parallel do not collide.
    """
    if engine not in OPENSM_ENGINES:
        raise DaqnetError(f"OpenSM engine {engine!r}: expected one of {', '.join(OPENSM_ENGINES)}")
    if not (math.isfinite(timeout) and timeout > 0):  # 0 failed every run, nan never ended one
        raise DaqnetError(f"OpenSM timeout {timeout!r}: must be a finite number of seconds > 0")
    ibsim, opensm, lib = find_tools()
    outdir = ensure_dir(out, "OpenSM output directory")
    net = outdir / "fabric.net"
    fabric.write_ibsim_net(net)
    _remove_tables(outdir)
    (outdir / "opensm.log").unlink(missing_ok=True)
    try:
        return _route(fabric, engine, outdir, net, timeout, ibsim, opensm, lib)
    except BaseException:
        # Ctrl-C while OpenSM wrote its dump left a quarter of opensm-lfts.dump, under the
        # name the docs say to import, which then read as a naming error: only logs stay.
        _remove_tables(outdir)
        raise


#: What OpenSM (-D 0x43: opensm-lfts.dump, opensm-subnet.lst, opensm-*.dump, opensm.fdbs,
#: opensm.mcfdbs) and the diagnostics write: an earlier run's go before a run, and a run that
#: fails or is interrupted leaves none of its own half-written.
def _remove_tables(outdir: Path) -> None:
    for pattern in (
        "opensm-*.dump",
        "opensm-subnet.lst",
        "opensm.*fdbs",
        "ibnetdiscover.out",
        "dump_lfts.out",
    ):
        for path in outdir.glob(pattern):
            path.unlink(missing_ok=True)


def _route(
    fabric: Fabric,
    engine: str,
    outdir: Path,
    net: Path,
    timeout: float,
    ibsim: str,
    opensm: str,
    lib: str,
) -> OpensmRun:
    with tempfile.TemporaryDirectory(prefix="daqnet-opensm-") as cache:
        env = dict(os.environ, IBSIM_SOCKNAME=f"daqnet-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        env.pop("LD_PRELOAD", None)
        start = time.monotonic()
        sim = _start_ibsim(ibsim, fabric, net, env, outdir / "ibsim.log", min(timeout, 120.0))
        try:
            osm_env = dict(env, LD_PRELOAD=lib, OSM_TMP_DIR=cache, OSM_CACHE_DIR=cache)
            # -o: configure the subnet once and exit; -D 0x43: errors, info and the routing
            # messages that make OpenSM write its dump files.
            cmd = [
                opensm,
                "-o",
                "-R",
                engine,
                "-D",
                "0x43",
                "--dump_files_dir",
                str(outdir.resolve()),
                "-f",
                str((outdir / "opensm.log").resolve()),
            ]
            try:
                # In the scratch directory: umad2sim makes a ./sys-<pid> tree in the working
                # directory of each tool it is loaded into, and a killed tool leaves it there.
                done = subprocess.run(
                    cmd,
                    cwd=cache,
                    env=osm_env,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=timeout,
                    check=False,
                )
                # What infiniband-diags reports of the routed subnet, as on a real cluster.
                for tool, name in (
                    ("ibnetdiscover", "ibnetdiscover.out"),
                    ("dump_lfts", "dump_lfts.out"),
                ):
                    path = os.path.abspath(shutil.which(tool) or f"/usr/sbin/{tool}")
                    if done.returncode == 0 and os.access(path, os.X_OK):
                        with open(outdir / name, "wb") as f:
                            subprocess.run(
                                [path],
                                cwd=cache,
                                env=osm_env,
                                stdin=subprocess.DEVNULL,
                                stdout=f,
                                stderr=subprocess.DEVNULL,
                                timeout=timeout,
                                check=False,
                            )
            except subprocess.TimeoutExpired:
                raise DaqnetError(
                    f"OpenSM ({engine}) did not finish within {timeout:.0f} s; see {outdir / 'opensm.log'}"
                ) from None
        finally:
            sim.terminate()
            try:
                sim.wait(10)
            except subprocess.TimeoutExpired:
                sim.kill()
                sim.wait()
        seconds = time.monotonic() - start
    log = outdir / "opensm.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    if done.returncode != 0:
        err = done.stderr.decode(errors="replace").strip().splitlines()
        raise DaqnetError(
            f"OpenSM ({engine}) failed (exit {done.returncode}): {' | '.join(err[-3:]) or _tail(log)}"
        )
    configured = [ln for ln in text.splitlines() if "tables configured on all switches" in ln]
    if not any(f" {engine} tables configured" in ln for ln in configured):
        used = (
            configured[-1].split("-> osm_ucast_mgr_process:")[-1].split()[0]
            if configured
            else "no engine"
        )
        # The engine's own lines ("updn:", and its functions' "updn_lid_matrices: ...
        # no root nodes were found", which says why) and OpenSM's errors.
        errors = [
            ln.split("-> ", 1)[-1]
            for ln in text.splitlines()
            if f"{engine}:" in ln or f"{engine}_" in ln or " ERR " in ln
        ]
        # ftree takes only trees it recognises (every switch of a level alike) and updn needs
        # root switches (a tree's top level: none on a direct network); dfsssp and minhop
        # route any topology.
        trees = "; updn routes trees" if engine == "ftree" and not fabric.units else ""
        raise DaqnetError(
            f"OpenSM's {engine} engine did not route this fabric (OpenSM fell back to {used}): "
            f"{'; '.join(errors[:3]) or 'see ' + str(log)}"
            + (
                f" (--engine dfsssp or minhop route any topology{trees})"
                if engine in ("ftree", "updn")
                else ""
            )
        )
    for written in ("opensm-lfts.dump", "opensm-subnet.lst"):
        if not (outdir / written).exists():
            raise DaqnetError(f"OpenSM wrote no {written} in {outdir}; see {log}")
    version = next(
        (ln.split("-> OpenSM ", 1)[1].strip() for ln in text.splitlines() if "-> OpenSM " in ln), ""
    )
    return OpensmRun(
        engine=engine,
        out=outdir,
        net_file=net,
        lft_dump=outdir / "opensm-lfts.dump",
        subnet_list=outdir / "opensm-subnet.lst",
        log=log,
        seconds=seconds,
        version=version,
    )
