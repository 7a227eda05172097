"""daqnet.stops: signals end a measurement, then are held while its results are gathered.
Each case runs in a child process: a signal that escaped would otherwise stop pytest."""

from __future__ import annotations

import subprocess
import sys

import pytest

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


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_signals_end_the_measurement_then_are_held(sig):
    done = subprocess.run(
        [sys.executable, "-c", _CASE, sig], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "raised",
        "held",
        "2",
        "progress",
        "stops",
        "raised",
        "restored",
        "True",
    ]


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
