"""daqnet.stops: signals end a measurement, then are held while its results are gathered.
Each case runs in a child process: a signal that escaped would otherwise stop pytest."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_CASE = """
import os, signal, sys
from daqnet.stops import Stops
sig = getattr(signal, sys.argv[1])
before = signal.getsignal(sig)
with Stops() as stops:
    try:
        os.kill(os.getpid(), sig)  # measuring: ends it, as Ctrl-C
        print("not raised")
    except KeyboardInterrupt:
        print("raised")
    stops.hold()
    with stops:  # entered again by a part of the run: the hold stays
        os.kill(os.getpid(), sig)  # gathering: noted
    os.kill(os.getpid(), sig)
    print("held", stops.seen)
    try:
        stops.progress(1, 2)
    except KeyboardInterrupt:
        print("progress stops")
    try:
        os.kill(os.getpid(), sig)  # the third: whoever sends it will not wait
        print("not raised")
    except KeyboardInterrupt:
        print("raised")
print("restored", signal.getsignal(sig) is before)
"""


def _printed(case: str, sig: str) -> list[str]:
    """What `case` prints, run in a child process with signal `sig`."""
    done = subprocess.run(
        [sys.executable, "-c", case, sig], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_signals_end_the_measurement_then_are_held(sig):
    assert _printed(_CASE, sig) == [
        "raised",
        "held",
        "2",
        "progress",
        "stops",
        "raised",
        "restored",
        "True",
    ]


_HOLD_FROM_FIRST = """
import os, signal, sys
from daqnet.stops import Stops, noted
sig = getattr(signal, sys.argv[1])
before = signal.getsignal(sig)
with Stops() as stops:
    stops.hold_from_first()  # as daqnet.cli.main runs every command
    with Stops() as part:  # a part of the run with its own (daqnet bench under a scan)
        try:
            os.kill(os.getpid(), sig)  # the first while the run runs: ends it
            print("not raised")
        except KeyboardInterrupt:
            print("raised")
        part.hold()
    # The part's end put back the handler it found: the run stays held.
    os.kill(os.getpid(), sig)  # the second, as the rows are written: noted
    os.kill(os.getpid(), sig)  # the third: noted
    print("held", noted())
    try:
        os.kill(os.getpid(), sig)  # the fourth: whoever sends it will not wait
        print("not raised")
    except KeyboardInterrupt:
        print("raised")
print("restored", signal.getsignal(sig) is before, noted())
"""

_WRITING = """
import os, signal, sys
from daqnet.stops import Stops, noted, writing
sig = getattr(signal, sys.argv[1])
with Stops() as stops:
    stops.hold_from_first()
    with writing():  # a finished run's results: a signal is noted, never raised
        os.kill(os.getpid(), sig)
        print("written", noted())  # and what comes after (a figure) knows
    try:
        os.kill(os.getpid(), sig)  # written: the next one ends the run again
        print("not raised")
    except KeyboardInterrupt:
        print("raised")
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_the_first_signal_ends_the_run_the_next_two_are_held(sig):
    assert _printed(_HOLD_FROM_FIRST, sig) == [
        "raised",
        "held",
        "2",
        "raised",
        "restored",
        "True",
        "0",
    ]
    assert _printed(_WRITING, sig) == ["written", "1", "raised"]


def test_off_the_main_thread_nothing_changes():
    import signal
    import threading

    from daqnet.stops import Stops

    seen = []

    def run():
        with Stops() as stops:
            stops.hold()
            seen.append((stops.seen, signal.getsignal(signal.SIGTERM)))

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert seen == [(False, signal.getsignal(signal.SIGTERM))]


def test_a_closed_terminal_ends_a_run_as_ctrl_c_does(tmp_path):
    # The terminal closes (SIGHUP) under a simulation writing to it: the summary printed after
    # the stop failed (EIO), so did the message of that error, and the run ended with exit 1.
    # Now output to the hung-up terminal is dropped, the files are written, and the status is
    # the interrupted run's.
    main, tty = pty.openpty()
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "daqnet", "simulate", str(ROOT / "examples" / "lhcb-540.toml")]
    cmd += ["--set", "simulate.mode=protocol", "--set", "simulate.events=100000000"]
    p = subprocess.Popen(
        [*cmd, "--progress", "--out", str(out)],
        stdin=tty,
        stdout=tty,
        stderr=tty,
        start_new_session=True,  # then the terminal becomes its controlling one
        preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
    )
    os.close(tty)
    try:
        os.set_blocking(main, False)
        seen, deadline = b"", time.monotonic() + 60
        while b"simulate" not in seen and time.monotonic() < deadline:  # its progress bar
            time.sleep(0.2)
            with contextlib.suppress(BlockingIOError):
                seen += os.read(main, 65536)
        assert p.poll() is None, seen.decode(errors="replace")
        os.close(main)  # hang up
        assert p.wait(timeout=60) == 130
    finally:
        p.kill()
    assert json.loads((out / "result.json").read_text())["interrupted"] is True
