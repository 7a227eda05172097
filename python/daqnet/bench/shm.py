"""The MPI library's shared-memory segments in ``/dev/shm`` of a run's ranks on this machine.

MPI_Finalize removes them. A rank that a signal ended, or that MPI_Abort ended, never gets
there, and the segment (4 MiB per run with MPICH) stays in ``/dev/shm``, which is RAM, until
the machine restarts: a scan of failing runs fills it. daqnet-evb removes them itself where
it leaves without MPI_Finalize; this covers the ranks that could not (SIGKILL, the
launcher's clean-up of the others). Removed, once no rank of the run is left: the segments
a rank of this run had mapped, and those that appeared in /dev/shm during the run, are this
user's and no process of this user maps (MPICH creates its collectives' segment late, after
a few collective calls: ranks ended in the final barrier leave it behind).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["RankSegments", "mapped_segments", "rank_pids", "remove_unmapped"]

# MPICH (mpich_shm_*, mpich_shar_tmp*), Open MPI (vader_segment.*, sm_segment.*).
PREFIXES = ("mpich_", "vader_segment.", "sm_segment.")
SHM = "/dev/shm/"


def mapped_segments(maps: str) -> set[str]:
    """The MPI segments in /dev/shm among the mappings of a /proc/PID/maps text."""
    found = set()
    for line in maps.splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) < 6:
            continue
        path = parts[5]
        name = path[len(SHM) :] if path.startswith(SHM) else ""
        if name and "/" not in name and name.startswith(PREFIXES):
            found.add(path)
    return found


def rank_pids(out: Path) -> list[int]:
    """Pids of daqnet-evb processes started for this output directory (their first argument
    is its run.cfg, as launch_command wrote it)."""
    needle = b"\0" + str(out / "run.cfg").encode() + b"\0"
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/comm", "rb") as f:
                if f.read().strip() != b"daqnet-evb":
                    continue
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                if needle not in f.read():
                    continue
        except OSError:  # gone, or not ours to read
            continue
        pids.append(int(entry.name))
    return pids


def _segments_in_shm() -> set[str]:
    """This user's MPI segments in /dev/shm."""
    try:
        entries = list(os.scandir(SHM))
    except OSError:
        return set()
    found = set()
    uid = os.getuid()
    for e in entries:
        if not e.name.startswith(PREFIXES):
            continue
        try:
            if e.stat(follow_symlinks=False).st_uid == uid:
                found.add(SHM + e.name)
        except OSError:
            continue
    return found


def _mapped_by_me() -> set[str]:
    """The MPI segments that this user's processes map (another job's, say)."""
    found: set[str] = set()
    uid = os.getuid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            with open(f"/proc/{entry.name}/maps") as f:
                found |= mapped_segments(f.read())
        except OSError:  # gone, or not ours to read
            continue
    return found


def remove_unmapped(paths: Iterable[str]) -> list[str]:
    """Remove those of `paths` (MPI segments in /dev/shm) that no process of this user maps:
    the segments of a run whose ranks are gone. The paths removed."""
    paths = {p for p in paths if p.startswith(SHM) and p[len(SHM) :].startswith(PREFIXES)}
    return _unlink(paths - _mapped_by_me()) if paths else []


def _unlink(paths: set[str]) -> list[str]:
    removed = []
    for p in sorted(paths):
        try:
            os.unlink(p)
            removed.append(p)
        except OSError:  # gone already (MPI_Finalize), or not ours
            continue
    return removed


class RankSegments:
    """Notes the segments the run's ranks map (`look` while they run), removes what is left
    of them (`release` after the run)."""

    def __init__(self, out: Path, noted: Callable[[set[str]], object] | None = None):
        self.out = out
        self.paths: set[str] = set()
        self.before = _segments_in_shm()  # before the launch: not this run's
        self.done = False
        # Told the segments once found: a caller that may be SIGKILLed (daqnet emulate)
        # keeps them where its clean-up finds them (remove_unmapped).
        self.noted = noted

    def look(self) -> None:
        """Once the ranks are up: the segments they map (each rank has them once MPI_Init is
        done, so the first look that finds one is enough). Rank 0 writes launch.json after
        MPI_Init, which every rank's segments precede: a look after it that finds no rank
        here (under srun, ranks on other nodes) is the last, not one per poll for the run."""
        if self.paths or self.done or not os.path.isdir("/proc"):
            return
        self.done = (self.out / "launch.json").exists()
        for pid in rank_pids(self.out):
            try:
                self.paths |= mapped_segments(Path(f"/proc/{pid}/maps").read_text())
            except OSError:
                continue
        if self.paths and self.noted:
            self.noted(set(self.paths))

    def release(self) -> list[str]:
        """Remove the noted segments still there, and this user's that appeared during the
        run and no process maps, unless a rank of the run still lives; the paths removed.
        Ranks killed inside MPI_Init (bench.recover's start-up death) had made their segment
        but none was noted mapped: it was left behind."""
        if rank_pids(self.out):
            return []
        late = _segments_in_shm() - self.before - self.paths
        return sorted(_unlink(self.paths) + remove_unmapped(late))
