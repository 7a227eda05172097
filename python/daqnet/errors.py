"""One error type for bad input, shown to users as one line without a traceback."""

from __future__ import annotations

from ._core import Error as CoreError

__all__ = ["USER_ERRORS", "CoreError", "DaqnetError"]


class DaqnetError(ValueError):
    """Bad input: an impossible fabric, an unknown key, a malformed file.

    The message names the parameter, file or line at fault.
    """


#: Exceptions the command line reports as one line and a non-zero exit.
USER_ERRORS = (DaqnetError, CoreError, OSError)
