"""Ctrl-C, SIGTERM and SIGHUP over a run that measures something real (daqnet bench,
daqnet emulate): while it measures, each ends the measurement as Ctrl-C does (raised as
KeyboardInterrupt, so that the ranks are stopped and what they measured is gathered);
once it is in, they are noted instead, so that gathering it, writing it and tearing down
what the run built go to their end. The third signal noted ends that too: whoever sends
it would rather leave what is left (daqnet emulate --cleanup removes a fabric) than wait.

Every command runs inside one (daqnet.cli.main) that holds from the first signal on:
SIGTERM and SIGHUP end a command as Ctrl-C does, so that a scan or simulation stopped by
kill or scancel writes what it finished, and the next two signals are noted, not raised
(two Ctrl-C in a row, or `timeout -s INT`, which signals the command and then its process
group, lost every finished row of a study or scan); a fourth ends what is left. What is
only worth waiting for, once a run is stopped (a figure, the wait for other MPI ranks'
last rows, the timing of a repair's candidates), asks noted() and stops at the second."""

from __future__ import annotations

import errno
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ClassVar

__all__ = ["Stops", "noted", "optional", "postponed", "writing"]


class Stops:
    """The signals of a run, as a context manager; `hold()` starts the second phase, and
    `seen` counts the signals noted in it.

    Signal handlers belong to the main thread: from any other, nothing changes (and `seen`
    stays 0)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    #: Signals noted before the next one ends the run even while held.
    PATIENCE = 2

    #: The one that holds from the first signal (daqnet.cli.main's), while it is entered.
    active: ClassVar[Stops | None] = None

    def __init__(self) -> None:
        self.seen = 0  #: signals noted while held
        self._old: dict[int, Any] = {}
        self._depth = 0
        self._held = False

    def __enter__(self) -> Stops:
        # Re-entered by a part of the run (daqnet emulate's benchmark): one set of handlers,
        # so that a hold there lasts to the end of the whole run.
        self._depth += 1
        if self._depth == 1 and threading.current_thread() is threading.main_thread():
            # A signal ignored already stays ignored: nohup's SIGHUP, a background job's
            # SIGINT. Whoever started daqnet so wants the run to go on.
            self._old = {
                s: h for s in self.SIGNALS if (h := signal.getsignal(s)) is not signal.SIG_IGN
            }
            for s in (signal.SIGTERM, signal.SIGHUP):
                if s in self._old:
                    signal.signal(s, self._end)
        return self

    def __exit__(self, *_exc: object) -> None:
        self._depth -= 1
        if self._depth == 0:
            for s, h in self._old.items():
                signal.signal(s, h)
            self._old = {}
            if Stops.active is self:
                Stops.active = None

    def hold(self) -> None:
        """From now on, note the signals rather than end the run."""
        self._held = True
        for s in self._old:
            signal.signal(s, self._note)

    def hold_from_first(self) -> None:
        """From now on the first signal ends the run as Ctrl-C does and holds: those after it
        are noted (see hold()) while the run writes what it finished."""
        if self._old:  # the main thread's
            Stops.active = self
        for s in self._old:
            signal.signal(s, self._first)

    def progress(self, _done: int, _total: int) -> None:
        """A progress callback for the core (a simulation after the measurement): it stops
        the core once a signal was noted."""
        if self.seen:
            raise KeyboardInterrupt

    def _end(self, signum: int, _frame: object) -> None:
        if signum == signal.SIGHUP:
            _drop_output_to_a_hung_up_terminal()
        if Stops.active is not None:  # the whole run is stopped, not only the part raising
            Stops.active._held = True
        raise KeyboardInterrupt

    def _first(self, signum: int, frame: object) -> None:
        # Held already: a part of the run with a Stops of its own (daqnet bench under a
        # measured scan) put this handler back as it ended.
        if self._held:
            self._note(signum, frame)
            return
        self.hold()
        self._end(signum, frame)

    def _note(self, signum: int, _frame: object) -> None:
        if signum == signal.SIGHUP:
            _drop_output_to_a_hung_up_terminal()
        if self.seen >= self.PATIENCE:
            raise KeyboardInterrupt
        self.seen += 1


def _drop_output_to_a_hung_up_terminal() -> None:
    """Writes to a terminal that hung up fail (EIO): the summary printed after the stop, and
    then the message of that error too, which ended the run with a traceback instead of
    its interrupted status. Such output goes to /dev/null; files are written as ever. Only a
    terminal that did hang up: `kill -HUP` with the terminal there keeps it."""
    import termios

    for fd in (1, 2):
        try:
            termios.tcgetattr(fd)
        except termios.error as err:
            if err.args[0] == errno.EIO:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, fd)
                os.close(null)


def noted() -> int:
    """Signals noted since the run's first one by the active Stops (daqnet.cli.main's), or
    while a finished run was written: 0 outside a command."""
    return Stops.active.seen if Stops.active is not None else 0


@contextmanager
def _handled_by(handler: Any) -> Iterator[None]:
    """`handler` for every stop signal not ignored, the previous ones back afterwards; in
    the main thread only (elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: h for s in Stops.SIGNALS if (h := signal.getsignal(s)) is not signal.SIG_IGN}
    for s in old:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def writing() -> AbstractContextManager[None]:
    """Results of a finished run being gathered and written, as a context: the signals that
    come meanwhile are noted, not raised (the third still ends it), so that a Ctrl-C as a
    study or scan ends does not throw away every row it finished. Nothing is raised
    afterwards: the run is whole, and ends in a moment anyway; noted() tells what comes
    after (a figure)."""
    counter = Stops.active if Stops.active is not None else Stops()
    return _handled_by(counter._note)


def optional() -> AbstractContextManager[None]:
    """What a run ends with once its results are written (a figure that loads matplotlib
    for seconds), as a context: any signal raises KeyboardInterrupt meanwhile, held or not,
    since nothing is left to lose."""
    return _handled_by(Stops()._end)


@contextmanager
def postponed() -> Iterator[list[int]]:
    """A step that must not be cut in two, as a context: the signals that come meanwhile are
    kept, in the list it gives, for `signal.raise_signal()` once the step is done. Starting
    the launcher is one: a KeyboardInterrupt raised inside subprocess.Popen, after its fork,
    left mpiexec (in a session of its own) and every rank running for the whole run."""
    got: list[int] = []
    with _handled_by(lambda signum, _frame: got.append(signum)):
        yield got
