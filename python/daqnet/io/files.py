"""Reading users' text files strictly, and writing result files atomically.

Inputs (scenarios, host lists) must be UTF-8; a byte-order mark, as some Windows editors
write, is accepted and dropped. Anything else stops with one line naming the file, line and
column. Outputs are written to a temporary file in the same directory and renamed over the
target, so a reader (or a second Ctrl-C) never sees a half-written file that looks whole.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import CoreError, DaqnetError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "RESULT_TABLES",
    "atomic_open",
    "check_out_dir",
    "check_writable",
    "earlier_tables",
    "ensure_dir",
    "read_text",
    "read_toml",
    "save_figure",
    "write_text_atomic",
]

_BOM = b"\xef\xbb\xbf"


#: The most a pipe given as a file may hold (a regular file's size is known before reading).
STREAM_LIMIT = 1 << 30


def _read_stream(f: IO[bytes]) -> bytes:
    """A pipe's bytes, up to just past STREAM_LIMIT, a block at a time (one read of the
    limit reserved a GiB up front, which a login node's memory limit refused)."""
    parts, total = [], 0
    while total <= STREAM_LIMIT and (block := f.read(1 << 20)):
        parts.append(block)
        total += len(block)
    return b"".join(parts)


def read_text(path: str | Path, what: str) -> str:
    """The UTF-8 text of `path` (`what` names it in messages, e.g. "scenario"): a regular
    file, or a pipe (a shell's <(...)) of at most STREAM_LIMIT bytes. A device is refused:
    /dev/zero given as a scenario grew to 24 GB before the kernel killed the reader."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
            raise DaqnetError(f"cannot read {what} {path}: not a regular file (a device or socket)")
        with open(path, "rb") as f:
            data = f.read() if stat.S_ISREG(mode) else _read_stream(f)
    except OSError as err:
        raise DaqnetError(f"cannot read {what} {path}: {err.strerror}") from None
    if len(data) > STREAM_LIMIT and not stat.S_ISREG(mode):
        raise DaqnetError(
            f"cannot read {what} {path}: a stream of over {STREAM_LIMIT >> 20:,} MiB, more "
            "than any such file holds"
        )
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise DaqnetError(
            f"{path}:{line}:{column}: {what} is not UTF-8 text (byte 0x{data[err.start]:02x}); "
            "save it as UTF-8"
        ) from None


def read_toml(path: str | Path, what: str) -> dict[str, Any]:
    """The TOML document in `path` (read as :func:`read_text`); one line naming the file if
    it is no TOML, or nests arrays or tables deeper than the reader's recursion allows."""
    text = read_text(path, what)
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise DaqnetError(f"{path}: not valid TOML: {err}") from None
    except RecursionError:
        raise DaqnetError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None
    return data


def ensure_dir(path: str | Path, what: str = "output directory") -> Path:
    """Create a directory for results (and its parents), and make sure a file can be made
    in it; one line naming it if either fails. `what` names it in the message (the command
    line passes its option, e.g. "--csv"). Called before a long run: an existing directory
    that takes no file (/proc, /sys/fs, another user's) failed only once the run was over."""
    path = _dir_name(path, what)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DaqnetError(f"{what} {path}: cannot create directory: {err.strerror}") from None
    check_writable(path, what)
    return path


def check_out_dir(path: str | Path, what: str = "output directory") -> None:
    """That `path` can become a results directory, without making it yet (a run that then
    fails on its scenario leaves no empty directory): not a file, and its nearest existing
    ancestor takes files. An empty name is refused."""
    path = _dir_name(path, what)
    existing = next((p for p in (path, *path.absolute().parents) if p.exists()), Path("/"))
    if not existing.is_dir():
        raise DaqnetError(f"{what} {path}: {existing} is a file, not a directory")
    check_writable(existing, what if existing == path else f"{what} {path}: its directory")


def _dir_name(path: str | Path, what: str) -> Path:
    """`path` as a directory to be: not empty, not a file (that read "cannot create
    directory: File exists")."""
    if not str(path):
        raise DaqnetError(f"{what}: empty directory name")
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise DaqnetError(f"{what} {path}: is a file, not a directory")
    return path


def check_writable(path: str | Path, what: str = "output directory") -> None:
    """That a file can be made in the directory `path`: one line naming it if not."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".daqnet-probe-", dir=path)
    except OSError as err:
        raise DaqnetError(f"{what} {path}: cannot write into it: {err.strerror}") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


@contextlib.contextmanager
def atomic_path(path: str | Path, mode: int | None = None) -> Iterator[str]:
    """The name of a temporary file beside `path`, renamed over it once the block ends (with
    `mode` if given, e.g. 0o600 for a secret, else what the umask allows), removed if the
    block raises (KeyboardInterrupt included): `path` is written whole or keeps what it held.
    For writers that open files themselves (the C++ core's); others use atomic_open."""
    path = Path(path)
    # Named as the user gave it: the temporary file's name in the message would puzzle.
    if path.is_dir():
        raise DaqnetError(f"{path}: is a directory (give a file name)")
    # /dev/stdout, a pipe: written as it is (a rename would replace the device's link).
    if str(path).startswith(("/dev/", "/proc/")) or (path.exists() and not path.is_file()):
        yield str(path)
        return
    given, path = path, Path(os.path.realpath(path))  # a link: the file it names is replaced
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise DaqnetError(f"{given}: cannot write here: {err.strerror}") from None
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask() if mode is None else mode)
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(err, (DaqnetError, CoreError)) and tmp in str(err):  # the writer named it
            raise DaqnetError(str(err).replace(tmp, str(given))) from None
        if isinstance(err, OSError):
            # A full disk read "[Errno 28] No space left on device", naming no file.
            raise DaqnetError(f"{given}: cannot write: {err.strerror or err}") from None
        raise


@contextlib.contextmanager
def atomic_open(
    path: str | Path, newline: str | None = None, binary: bool = False, mode: int | None = None
) -> Iterator[IO[Any]]:
    """A file to write through a temporary one beside `path` (see atomic_path)."""
    with atomic_path(path, mode) as tmp:
        if binary:
            with open(tmp, "wb") as fh:
                yield fh
        else:
            with open(tmp, "w", newline=newline, encoding="utf-8") as fh:
                yield fh


def write_text_atomic(path: str | Path, text: str, mode: int | None = None) -> None:
    with atomic_open(path, mode=mode) as fh:
        fh.write(text)


def save_figure(fig: Figure, path: str | Path, dpi: int) -> None:
    """``fig.savefig`` through a temporary file; the format comes from the file's suffix."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower() or None
    with atomic_open(path, binary=True) as fh:
        fig.savefig(fh, format=fmt, dpi=dpi)


#: Tables that daqnet conflicts and simulate write beside result.json (CSV or Parquet).
RESULT_TABLES = (
    "steps",
    "links",
    "levels",
    "conflicts",
    "link_loads",
    "units",
    "timeseries",
)


def earlier_tables(directory: str | Path, written: list[Path]) -> list[str]:
    """Result tables in `directory` that this run did not write: an earlier run's (another
    mode or command), which a reader would take for this run's."""
    d = Path(directory)
    mine = {p.name for p in written}
    return [
        f"{name}.{ext}"
        for name in RESULT_TABLES
        for ext in ("csv", "parquet")
        if f"{name}.{ext}" not in mine and (d / f"{name}.{ext}").is_file()
    ]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
