"""Ctrl-C, SIGTERM and SIGHUP over a run that measures something real (daqnet bench,
daqnet emulate): while it measures, each ends the measurement as Ctrl-C does (raised as
KeyboardInterrupt, so that the ranks are stopped and what they measured is gathered);
once it is in, they are noted instead, so that gathering it, writing it and tearing down
what the run built go to their end."""

from __future__ import annotations

import signal
import threading
from typing import Any

__all__ = ["Stops"]


class Stops:
    """The signals of a run, as a context manager; `hold()` starts the second phase.

    Signal handlers belong to the main thread: from any other, nothing changes (and `seen`
    stays false)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.seen = False  #: a signal came while held
        self._old: dict[int, Any] = {}

    def __enter__(self) -> Stops:
        if threading.current_thread() is threading.main_thread():
            self._old = {s: signal.getsignal(s) for s in self.SIGNALS}
            for s in (signal.SIGTERM, signal.SIGHUP):
                signal.signal(s, self._end)
        return self

    def __exit__(self, *_exc: object) -> None:
        for s, h in self._old.items():
            signal.signal(s, h)

    def hold(self) -> None:
        """From now on, note the signals rather than end the run."""
        for s in self._old:
            signal.signal(s, self._note)

    def progress(self, _done: int, _total: int) -> None:
        """A progress callback for the core (a simulation after the measurement): it stops
        the core once a signal was noted."""
        if self.seen:
            raise KeyboardInterrupt

    def _end(self, _signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    def _note(self, _signum: int, _frame: object) -> None:
        self.seen = True
