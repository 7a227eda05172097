"""The launcher's clean-up of MPI segments in /dev/shm, on its own (daqnet.bench.shm)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from daqnet.bench import shm

pytestmark = pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm here")


def test_looks_stop_once_the_ranks_are_past_mpi_init(tmp_path, monkeypatch):
    # Under srun the ranks may all run on other nodes: once rank 0 wrote launch.json, one
    # more look and no more, rather than a scan of /proc every poll for the whole run.
    scans = []
    monkeypatch.setattr(shm, "rank_pids", lambda out: scans.append(out) or [])
    seg = shm.RankSegments(tmp_path)
    seg.look()
    seg.look()
    assert len(scans) == 2  # MPI_Init may still be under way: keep looking
    (tmp_path / "launch.json").write_text("{}")
    for _ in range(5):
        seg.look()
    assert len(scans) == 3


def test_segments_left_by_the_run_are_removed_and_others_kept(tmp_path, monkeypatch):
    tag = uuid.uuid4().hex[:8]
    older = Path(f"/dev/shm/mpich_shm_test_{tag}_old")
    older.write_bytes(b"\0" * 64)  # there before the launch: not the run's
    try:
        seg = shm.RankSegments(tmp_path)
        noted = Path(f"/dev/shm/mpich_shm_test_{tag}_0")  # a rank mapped it
        late = Path(f"/dev/shm/mpich_shar_tmp_test_{tag}")  # made late, mapped by no one
        busy = Path(f"/dev/shm/mpich_shar_tmp_test_{tag}_busy")  # another job's, mapped
        other = Path(f"/dev/shm/unrelated_test_{tag}")  # not an MPI segment
        for p in (noted, late, busy, other):
            p.write_bytes(b"\0" * 4096)
        seg.paths = {str(noted)}
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import mmap, sys, time\n"
                f"f = open('{busy}', 'r+b'); m = mmap.mmap(f.fileno(), 4096)\n"
                "print('mapped', flush=True); time.sleep(60)",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout.readline().strip() == "mapped"
            monkeypatch.setattr(shm, "rank_pids", lambda out: [])  # the run's ranks are gone
            removed = seg.release()
        finally:
            holder.kill()
            holder.communicate()
        assert sorted(removed) == sorted([str(noted), str(late)])
        assert older.exists() and busy.exists() and other.exists()
        assert not noted.exists() and not late.exists()
    finally:
        for p in Path("/dev/shm").glob(f"*test_{tag}*"):
            p.unlink()


def test_nothing_is_removed_while_a_rank_lives(tmp_path, monkeypatch):
    tag = uuid.uuid4().hex[:8]
    seg = shm.RankSegments(tmp_path)
    late = Path(f"/dev/shm/mpich_shar_tmp_test_{tag}")
    late.write_bytes(b"\0")
    try:
        seg.paths = {"/dev/shm/mpich_shm_gone"}
        monkeypatch.setattr(shm, "rank_pids", lambda out: [os.getpid()])
        assert seg.release() == []
        assert late.exists()
    finally:
        late.unlink(missing_ok=True)
