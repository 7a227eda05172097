"""The ``daqnet`` command line: a thin layer over the Python API, one module per command.

Only this package sees argparse. Bad input ends with one line and exit status 2, Ctrl-C with
what was measured and 130, a broken pipe quietly with 141.
"""

from __future__ import annotations

import os
import sys

from ..errors import USER_ERRORS
from ..stops import Stops
from . import common
from .common import EXIT_INTERRUPTED, note
from .parser import parser

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    from .bench import run_bench, run_collect
    from .conflicts import run_conflicts, run_tables
    from .emulate import run_emulate
    from .export import run_export
    from .opensm import run_opensm_command
    from .plan import run_plan
    from .repair import run_repair
    from .report import run_report
    from .scan import run_scan_command
    from .simulate import run_simulate
    from .study import run_study
    from .uplinks import run_uplinks

    common.stdout_closed = False  # main() runs more than once in a process (tests)

    args = parser().parse_args(argv)
    handlers = {
        "conflicts": run_conflicts,
        "tables": run_tables,
        "export": run_export,
        "opensm": run_opensm_command,
        "repair": run_repair,
        "uplinks": run_uplinks,
        "bench": run_bench,
        "simulate": run_simulate,
        "collect": run_collect,
        "emulate": run_emulate,
        "scan": run_scan_command,
        "plan": run_plan,
        "study": run_study,
        "report": run_report,
    }
    # SIGTERM and SIGHUP (kill, scancel, a closed terminal) end a command as Ctrl-C does:
    # what it finished is written and its worker processes are stopped. The next two
    # signals are noted (daqnet.stops), up to the exit status: a second one as the run
    # ends (`timeout -s INT` signals the command, then its group) cut the writing short,
    # or the last message, killing the process. A fourth ends what is left.
    try:
        with Stops() as stops:
            stops.hold_from_first()
            try:
                status = handlers[args.command](args)
                return 141 if common.stdout_closed and status == 0 else status
            except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return 141
            except USER_ERRORS as err:
                msg = (
                    str(err)
                    if not isinstance(err, OSError) or not err.filename
                    else f"{err.filename}: {err.strerror}"
                )
                note(f"error: {msg}")
                return 2
            except MemoryError:  # std::bad_alloc from the core: a line, not a traceback
                note(
                    f"error: daqnet {args.command} ran out of memory: the scenario needs more "
                    "than this machine has (fewer ranks, or smaller steps)"
                )
                return 2
            except KeyboardInterrupt as stop:  # with what it left, if it says so
                note(f"interrupted {stop}" if stop.args else "interrupted")
                return EXIT_INTERRUPTED
    except KeyboardInterrupt:  # the first signal, as a command's error was reported
        note("interrupted")
        return EXIT_INTERRUPTED
