"""Ctrl-C while the daqnet command loads its modules (numpy, the compiled core: 0.2-0.9 s)
ends it as one during a run does, "daqnet: interrupted" and exit 130, not a traceback of
the import it cut. Only in the command's own process (its script, or ``python -m daqnet``)
and only over Python's default handler (an ignored SIGINT stays ignored);
daqnet.cli.main's handlers take over once it runs. Installed when imported."""

from __future__ import annotations

import os
import signal
import sys
import threading


def _is_the_command() -> bool:
    argv = getattr(sys, "orig_argv", sys.argv)
    return os.path.basename(sys.argv[0]) == "daqnet" or argv[1:3] == ["-m", "daqnet"]


def _stop(_signum: int, _frame: object) -> None:
    os.write(2, b"daqnet: interrupted\n")
    os._exit(130)


def install() -> None:
    if (
        _is_the_command()
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, _stop)


install()
