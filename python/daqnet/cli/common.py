"""What every command shares: loading the scenario with its overrides, the progress bar, and
the end of a run (JSON or summary on stdout, notes on stderr, the exit status)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import CoreError, DaqnetError
from ..result import Result
from ..scenario import Scenario, unused

__all__ = [
    "EXIT_INTERRUPTED",
    "Progress",
    "draw_unless_stopped",
    "emit",
    "load",
    "note",
    "routes_progress",
    "warn",
    "warn_earlier_tables",
]

#: Exit status of a run stopped by Ctrl-C (128 + SIGINT), after what was measured is written.
EXIT_INTERRUPTED = 130


def note(text: str) -> None:
    print(f"daqnet: {text}", file=sys.stderr)


def warn(text: str) -> None:
    note(f"warning: {text}")


def warn_earlier_tables(out: str, written: list[Any]) -> None:
    """A warning naming the tables of an earlier run left in --out (another mode or command
    wrote them): the directory then mixes two runs."""
    from ..io.files import earlier_tables

    left = earlier_tables(out, written)
    if left:
        warn(f"{out} also holds {', '.join(left)} of an earlier run, which this run does not write")


def keep_earlier(out: str, command: str, interrupted: bool) -> str:
    """Before a run's files are written into `out`: an interrupted run moves a complete
    earlier result of `command` into OUT/previous/ rather than replace it; a complete run
    removes what an earlier interrupted one kept there. Returns the words to add to the
    "interrupted" note ("" when nothing was kept)."""
    from ..io.files import RESULT_TABLES
    from ..io.previous import keep_if_interrupted, kept

    tables = [f"{t}.{ext}" for t in RESULT_TABLES for ext in ("csv", "parquet")]
    keep_if_interrupted(out, command, interrupted, tables)
    return kept(out) if interrupted else ""


def draw_unless_stopped(draw: Callable[[], Any]) -> tuple[Any, bool]:
    """The figure a run ends with, drawn once its results are written, and whether a Ctrl-C
    came meanwhile: it skips the figure (loading matplotlib alone takes seconds), not the
    summary of what was written."""
    from ..stops import noted, optional

    try:
        if noted():  # a second signal came as the results were written
            raise KeyboardInterrupt
        with optional():  # held or not, a signal now skips the figure
            return draw(), False
    except KeyboardInterrupt:
        note("interrupted while the figure was drawn: no figure; the results are written")
        return None, True


def load(path: str, overrides: list[str], command: str) -> Scenario:
    """The scenario with its --set overrides; a warning for each one the command ignores."""
    scenario = Scenario.load(path, overrides)
    for key in sorted(scenario.overridden):
        why = unused(scenario, command, key)
        if why:
            warn(f"set {key}: {why}")
    return scenario


class Progress:
    """A progress bar on stderr with rate and time left (tqdm), fed with (done, total).

    Shown on a terminal once a run lasts over a second, or always with ``--progress`` (then
    also into a pipe or a log). The core calls it about four times a second.
    """

    def __init__(self, label: str, always: bool = False, unit: str = "step", scale: bool = False):
        self.label, self.unit, self.always, self.scale = label, unit, always, scale
        self.enabled = always or sys.stderr.isatty()
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc=self.label,
                unit=self.unit,
                unit_scale=self.scale,  # k/M suffixes for big counts (routes)
                file=sys.stderr,
                delay=0 if self.always else 1.0,
                dynamic_ncols=True,
                mininterval=0.25,
            )
        if total != self._bar.total:
            self._bar.total = total
        self._bar.update(done - self._bar.n)

    def text(self, line: str) -> None:
        """A line of free text instead of a count (the benchmark's live figures)."""
        if not self.enabled:
            return
        if self._bar is None:
            from tqdm import tqdm

            # The line is the description: tqdm's postfix would lead it with ", ".
            self._bar = tqdm(desc=self.label, bar_format="{desc}", file=sys.stderr, delay=0)
        self._bar.set_description_str(f"{self.label}: {line}", refresh=True)

    def close(self, complete: bool = False) -> None:
        """Take the bar down; `complete` first fills it (the core's last report may be a
        quarter of a second before the end, and a run that finished should not show 96 %)."""
        if self._bar is not None:
            if complete and self._bar.total:
                self._bar.update(self._bar.total - self._bar.n)
            self._bar.close()
            self._bar = None


def routes_progress(scenario: Scenario, always: bool) -> Progress:
    """The bar of route building. Reading a subnet manager's dump counts its bytes, then the
    routes walked: no one unit fits both."""
    if scenario["routing"]["engine"] == "lft-dump":
        return Progress("tables", always, unit="", scale=True)
    return Progress("routes", always, unit="route", scale=True)


def emit(
    result: Mapping[str, Any],
    as_json: bool,
    summary: Callable[[Mapping[str, Any]], str],
    clean: Callable[[Any], Any] | None = None,
) -> None:
    """One JSON object, or the human summary, on stdout; flushed so that a failing file write
    after it cannot lose the results. A reader gone (`| head`, `| true`) loses the rest of
    the summary, not the files the command writes after it: stdout goes to /dev/null from
    there on, and the command ends with 141 (SIGPIPE's status) once it has written them."""
    global stdout_closed
    try:
        if as_json:
            doc = result.to_dict() if isinstance(result, Result) else dict(result)
            json.dump(clean(doc) if clean else doc, sys.stdout)
            sys.stdout.write("\n")
        else:
            print(summary(result))
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        stdout_closed = True


#: Set by emit() when stdout's reader was gone: main() then ends the command with 141.
stdout_closed = False


@contextlib.contextmanager
def output_file(path: str) -> Iterator[str]:
    """Where a command writes its -o file: `path`, or for "-" a temporary file whose bytes go
    to stdout once written whole (it made a file named "-")."""
    if path != "-":
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="daqnet-") as tmp:
        made = Path(tmp) / "out"
        try:
            yield str(made)
        except (DaqnetError, CoreError) as err:
            # A writer names the file it writes: the temporary one meant nothing to the user.
            if str(made) in str(err):
                raise DaqnetError(str(err).replace(str(made), "stdout (-o -)")) from None
            raise
        if made.exists():  # not when the writer was interrupted (files are written whole)
            with made.open("rb") as f:
                shutil.copyfileobj(f, sys.stdout.buffer)
            sys.stdout.flush()
