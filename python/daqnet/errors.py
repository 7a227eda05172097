"""One error type for bad input, shown to users as one line without a traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["USER_ERRORS", "CoreError", "DaqnetError"]

# DaqnetError (a ValueError) is made by the compiled core so that its own errors, CoreError,
# are DaqnetErrors too: `except DaqnetError` catches every bad input, from either side.
if TYPE_CHECKING:

    class DaqnetError(ValueError):
        """Bad input: an impossible fabric, an unknown key, a malformed file.

        The message names the parameter, file or line at fault.
        """

    class CoreError(DaqnetError):
        """Bad input found by the compiled core."""

else:
    from ._core import DaqnetError
    from ._core import Error as CoreError

#: Exceptions the command line reports as one line and a non-zero exit.
USER_ERRORS = (DaqnetError, CoreError, OSError)
