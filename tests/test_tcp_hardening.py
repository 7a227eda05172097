"""The TCP transport against hostile input: strangers connecting while the mesh is built, a
rank of the run breaking the protocol, a peer flooding unexpected messages, and the run's
token in run.cfg. None may crash, hang or corrupt the run."""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import subprocess
import sysconfig
import time
from pathlib import Path

import pytest
from daqnet.bench import mpiexec
from test_bench import EXAMPLE, bench, daqnet

SELFTEST = Path(sysconfig.get_path("scripts")) / "daqnet-transport-selftest"
MAGIC = 0x544E5144  # "DQNT", the first field of a greeting and of every message header


def selftest(*args: str, ranks: int = 2, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [mpiexec(), "-n", str(ranks), str(SELFTEST), "tcp", "sleep", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def listeners(name: str = "daqnet-transport-selftest") -> list[tuple[str, int]]:
    """(address, port) of the TCP sockets that processes running `name` listen on, from
    /proc (no ss or netstat needed)."""
    inodes = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if name not in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue  # the process ended meanwhile
    found = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state, inode = fields[1], fields[3], fields[9]
        if state == "0A" and inode in inodes:  # 0A: LISTEN
            addr, port = local.split(":")
            ip = socket.inet_ntoa(struct.pack("<I", int(addr, 16)))
            found.append((ip, int(port, 16)))
    return found


def test_strangers_are_refused_and_the_run_goes_on():
    # Rank 1 waits 4 s before connecting to rank 0: meanwhile rank 0 listens and strangers
    # come, each of a kind a real network sees.
    proc = subprocess.Popen(
        [
            mpiexec(),
            "-n",
            "2",
            str(SELFTEST),
            "tcp",
            "sleep",
            "--address=127.0.0.2",
            "--connect-delay=4",
            "--greeting-seconds=1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The transport listens on the address it is given (127.0.0.2 here), not on all
        # interfaces; MPI's own bootstrap sockets are the MPI library's.
        found: list[tuple[str, int]] = []
        deadline = time.monotonic() + 3
        while len(found) < 2 and time.monotonic() < deadline:  # both ranks listen
            time.sleep(0.05)
            found = [x for x in listeners() if x[0] == "127.0.0.2"]
        assert len(found) == 2, (
            f"the selftest's ranks did not listen on 127.0.0.2 within 3 s: {found}"
        )
        for _, port in found:
            with pytest.raises(ConnectionRefusedError):  # the same port on another address
                socket.create_connection(("127.0.0.1", port), timeout=2)
        held = []

        def stranger(data: bytes = b"", close: bool = True) -> None:
            # To both listeners: which one is rank 0's (the one accepting) /proc does not say.
            for addr in found:
                s = socket.create_connection(addr, timeout=2)
                if data:
                    s.sendall(data)
                if close:
                    s.close()
                else:
                    held.append(s)

        stranger()  # connects and leaves (a port scan)
        stranger(b"GET / HTTP/1.0\r\n\r\n" + b"x" * 8)  # another protocol
        stranger(struct.pack("<II16s", MAGIC, 1, bytes(16)))  # right magic, wrong token
        stranger(b"\x44\x51\x4e", close=False)  # slow loris: 3 bytes, then nothing
        time.sleep(1.5)  # its greeting time (1 s) runs out
        for _ in range(70):  # more unidentified connections than rank 0 keeps
            stranger(close=False)
        out, err = proc.communicate(timeout=120)
    finally:
        for s in held if "held" in locals() else []:
            s.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out + err
    assert "selftest OK" in out  # every check of the selftest passed after the strangers
    assert "closed before greeting" in err
    assert "not a daqnet-evb greeting" in err
    assert "wrong token" in err
    assert "no greeting within" in err
    assert "too many connections still to greet" in err or "further refusals are not logged" in err
    assert "refused" in out  # the count of refusals at the end


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("huge", "announced a message of 1099511627776 bytes, more than the longest"),
        ("garbage", "out of step"),
    ],
)
def test_a_rank_breaking_the_protocol_is_one_clear_error(kind, message):
    p = selftest(f"--hostile={kind}")
    assert p.returncode == 0, p.stdout + p.stderr
    assert message in p.stdout
    assert "terminate" not in p.stderr and "bad_alloc" not in p.stderr


def test_unexpected_messages_are_held_to_the_cap():
    cap = 4 << 20
    p = selftest(f"--max-unexpected={cap}")
    assert p.returncode == 0, p.stdout + p.stderr
    line = next(x for x in p.stdout.splitlines() if "unexpected bytes (cap" in x)
    held = int(line.split("held at most ")[1].split()[0])
    assert 0 < held <= cap  # 24 x 1 MiB were sent before any receive was posted


def test_a_control_message_is_not_held_behind_bulk_data():
    # Rank 1 sends 2 x 4 MiB on tag 1000, then 64 bytes on tag 9; rank 0, capped at 1 MiB of
    # unexpected data, receives only the small one first. With a control connection (tags
    # below 500) it arrives; on one shared connection it waits behind the bulk data that rank 0
    # stopped reading, so the check runs into its 20 s timeout: the check can fail.
    cap = "--max-unexpected=1048576"
    p = selftest("--control-lane=500", "--overtake=1000", cap)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ok  a control message overtakes bulk data held back" in p.stdout
    shared = selftest("--overtake=1000", cap)
    assert shared.returncode != 0
    assert "timed out" in shared.stdout + shared.stderr


def test_run_cfg_holds_a_token_that_results_never_repeat(tmp_path):
    p, r = bench(tmp_path, "bench.transport='tcp'")
    assert p.returncode == 0, p.stderr
    cfg = tmp_path / "out" / "run.cfg"
    tokens = [
        x.split("=")[1].strip() for x in cfg.read_text().splitlines() if x.startswith("tcp_token")
    ]
    assert len(tokens) == 1 and len(tokens[0]) == 32
    int(tokens[0], 16)  # hexadecimal
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o600  # owner only
    for f in (tmp_path / "out").iterdir():
        if f.name != "run.cfg" and f.is_file():
            assert tokens[0] not in f.read_text(errors="replace"), f.name
    assert "tcp_token" not in json.dumps(r)
    # A second run draws another token.
    p2, _ = bench(tmp_path / "again", "bench.transport='tcp'")
    assert p2.returncode == 0, p2.stderr
    assert tokens[0] not in (tmp_path / "again" / "out" / "run.cfg").read_text()


def test_a_malformed_token_is_named(tmp_path):
    out = tmp_path / "out"
    p = daqnet(
        "bench", str(EXAMPLE), "--prepare", "--out", str(out), "--set", "bench.transport='tcp'"
    )
    assert p.returncode == 0, p.stderr
    cfg = out / "run.cfg"
    lines = cfg.read_text().splitlines()
    ranks = next(x.split("=")[1].strip() for x in lines if x.startswith("ranks"))
    cfg.write_text(
        "\n".join("tcp_token = nothex" if x.startswith("tcp_token") else x for x in lines) + "\n"
    )
    evb = Path(sysconfig.get_path("scripts")) / "daqnet-evb"
    q = subprocess.run(
        [mpiexec(), "-n", ranks, str(evb), str(cfg), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert q.returncode != 0
    assert "tcp_token" in q.stderr and "32 hexadecimal digits" in q.stderr, q.stderr
    assert "terminate" not in q.stderr
