"""Reference step times from SimGrid, independent of daqnet's code.

simgrid_ref/steps.cpp (a C++ S4U program, see its header for the model and the file
formats) is compiled once per source version into simgrid_ref/.build/ and run as a
subprocess, so this works from any Python. Needs a C++17 compiler and SimGrid's header
and library (Debian: apt-get install libsimgrid-dev).

    times, wall = simgrid_ref.step_times(down=[4, 4], up=[1, 2], hosts=16, link_gbps=100,
                                         latency_seconds=1e-6, steps=[[(0, 5), (1, 6)]],
                                         message_bytes=2**20)

Host i is daqnet's host i (both number hosts in cabling order, leaf 0 first) and SimGrid
routes by D-mod-K like daqnet's dmodk: with the same down/up shape the routes agree.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).parent / "simgrid_ref" / "steps.cpp"
BUILD_DIR = SOURCE.parent / ".build"
_PROBE = (
    "#include <simgrid/s4u.hpp>\nint main() { return simgrid::s4u::Engine::get_clock() > 0; }\n"
)


def _compiler() -> str | None:
    if os.environ.get("CXX"):
        return shutil.which(os.environ["CXX"])
    return shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


def _simgrid_flags() -> list[str]:
    """Compile and link flags from pkg-config, else the plain library name."""
    if shutil.which("pkg-config"):
        r = subprocess.run(
            ["pkg-config", "--cflags", "--libs", "simgrid"], capture_output=True, text=True
        )
        if r.returncode == 0:
            return r.stdout.split()
    return ["-lsimgrid"]


def _compile(source: Path, exe: Path) -> subprocess.CompletedProcess:
    cmd = [_compiler(), "-O2", "-std=c++17", str(source), "-o", str(exe), *_simgrid_flags()]
    return subprocess.run(cmd, capture_output=True, text=True)


@functools.cache
def unavailable_reason() -> str | None:
    """None when a C++ compiler and SimGrid (header and library) are there, else why not."""
    if _compiler() is None:
        return "no C++ compiler (c++, g++ or clang++) on PATH"
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.cpp"
        probe.write_text(_PROBE)
        r = _compile(probe, Path(tmp) / "probe")
    if r.returncode != 0:
        return "SimGrid's C++ header or library is missing (apt-get install libsimgrid-dev)"
    return None


def build(source: Path = SOURCE) -> Path:
    """A compiled program of simgrid_ref/ (steps.cpp by default), rebuilt only when its
    source changed."""
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    exe = BUILD_DIR / f"{source.stem}-{digest}"
    if exe.exists():
        return exe
    BUILD_DIR.mkdir(exist_ok=True)
    # compile to a private name and rename, so concurrent test workers never see half a file
    tmp = BUILD_DIR / f".{source.stem}-{digest}-{os.getpid()}"
    r = _compile(source, tmp)
    if r.returncode != 0:
        raise RuntimeError(f"compiling {source} failed:\n{r.stderr}")
    tmp.replace(exe)
    for old in BUILD_DIR.glob(f"{source.stem}-*"):  # builds of earlier sources
        if old != exe:
            old.unlink(missing_ok=True)
    return exe


PLATFORM_SOURCE = SOURCE.parent / "platform.cpp"


def platform_step_times(
    platform: Path, steps: list[list[tuple[str, str]]], message_bytes: int
) -> tuple[dict[str, int], list[float]]:
    """Load a platform file with SimGrid and time steps of flows between named hosts:
    ({"hosts": N, "links": L} as SimGrid built them, seconds per step)."""
    lines = [f"message_bytes {int(message_bytes)}", f"steps {len(steps)}"]
    for flows in steps:
        lines.append(f"step {len(flows)} " + " ".join(f"{s} {d}" for s, d in flows))
    exe = build(PLATFORM_SOURCE)
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = Path(tmp) / "input.txt", Path(tmp) / "output.txt"
        inp.write_text("\n".join(lines) + "\n")
        r = subprocess.run(
            [str(exe), str(platform), str(inp), str(out)], capture_output=True, text=True
        )
        if r.returncode != 0:
            raise RuntimeError(f"{exe.name} failed ({r.returncode}):\n{r.stderr}")
        counts: dict[str, int] = {}
        times = []
        for line in out.read_text().splitlines():
            key, _, value = line.rpartition(" ")
            if key:
                counts[key] = int(value)
            else:
                times.append(float(value))
    return counts, times


def step_times(
    down: list[int],
    up: list[int],
    hosts: int,
    link_gbps: float,
    latency_seconds: float,
    steps: list[list[tuple[int, int]]],
    message_bytes: float,
    parallel: list[int] | None = None,
) -> tuple[list[float], dict]:
    """Seconds of each step, and {"platform_wall_seconds", "simulation_wall_seconds"}.

    down/up are daqnet's XgftShape (m_1..m_h, w_1..w_h with w_1 = 1), which are SimGrid's
    FAT_TREE parameters as they are; parallel (default all 1) is cables per parent.
    SimGrid builds all m_1·…·m_h hosts; flows must stay within 0..hosts-1 and have
    src != dst (the program rejects others). link_gbps is 10^9 bit/s per direction of a
    cable.
    """
    levels = len(down)
    parallel = [1] * levels if parallel is None else list(parallel)
    if len(up) != levels or len(parallel) != levels:
        raise ValueError("down, up and parallel need one entry per level")
    if not math.isfinite(message_bytes) or message_bytes <= 0:
        raise ValueError(f"message_bytes = {message_bytes}: must be a finite number > 0")
    bytes_per_second = float(link_gbps) * 1e9 / 8
    lines = [
        f"levels {levels}",
        "down " + " ".join(str(int(m)) for m in down),
        "up " + " ".join(str(int(w)) for w in up),
        "parallel " + " ".join(str(int(p)) for p in parallel),
        f"hosts {int(hosts)}",
        f"bandwidth {bytes_per_second!r}",
        f"latency {float(latency_seconds)!r}",
        f"message_bytes {float(message_bytes)!r}",
        f"steps {len(steps)}",
    ]
    for flows in steps:
        lines.append(f"step {len(flows)} " + " ".join(f"{int(s)} {int(d)}" for s, d in flows))
    exe = build()
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = Path(tmp) / "input.txt", Path(tmp) / "output.txt"
        inp.write_text("\n".join(lines) + "\n")
        r = subprocess.run([str(exe), str(inp), str(out)], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{exe.name} failed ({r.returncode}):\n{r.stderr}")
        times, wall = [], {}
        for line in out.read_text().splitlines():
            key, _, value = line.rpartition(" ")
            if key:
                wall[key] = float(value)
            else:
                times.append(float(value))
    if len(times) != len(steps):
        raise RuntimeError(f"{exe.name} returned {len(times)} step times for {len(steps)} steps")
    return times, wall
