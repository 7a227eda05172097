"""Tables as Parquet files (``--format parquet``): the same rows and columns as the CSV files,
written with pandas and pyarrow, the optional ``tables`` extra (docs/tables.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import DaqnetError
from .files import atomic_open

__all__ = ["FORMATS", "check_format", "columns_of", "parquet_cells", "write_parquet"]

#: Formats of the tables a command writes beside its JSON document.
FORMATS = ("csv", "parquet")


def check_format(table_format: str, out: str | None = "") -> None:
    """DaqnetError for an unknown format, for parquet without pandas and pyarrow (said
    before a long run starts, not after it), or for parquet with no directory to write
    (`out` None: the command's --out not given)."""
    if table_format not in FORMATS:
        raise DaqnetError(f"format {table_format!r}: expected one of {', '.join(FORMATS)}")
    if table_format != "csv" and out is None:
        raise DaqnetError(
            f"--format {table_format}: the tables go into --out DIR, which is not given "
            "(without it only the summary, or --json, is printed)"
        )
    if table_format == "parquet":
        try:
            import pandas  # noqa: F401
            import pyarrow  # noqa: F401
        except ImportError as err:
            raise DaqnetError(
                f"format parquet needs pandas and pyarrow ({err.name} is not installed): "
                "pip install 'daqnet[tables]'"
            ) from None


def columns_of(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every key of the rows, in first-seen order (RU and BU rows have different keys)."""
    return list(dict.fromkeys(k for row in rows for k in row))


def parquet_cells(values: list[Any]) -> list[Any]:
    """One column, as Parquet can type it: lists and dicts as JSON text (as the CSV files
    write them), and a column of mixed kinds (numbers and words) as text."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int, float} or (len(kinds) == 1 and not kinds & {list, dict}):
        return values
    return [None if v is None else v if isinstance(v, str) else json.dumps(v) for v in values]


def write_parquet(
    path: str | Path, rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None
) -> Path:
    """`rows` (dicts) as one Parquet file, atomically; columns in the given order."""
    import pandas as pd

    path = Path(path)
    cols = list(columns) if columns is not None else columns_of(rows)
    data = {c: parquet_cells([r.get(c) for r in rows]) for c in cols}
    frame = pd.DataFrame(data, columns=cols)
    try:
        with atomic_open(path, binary=True) as fh:
            frame.to_parquet(fh, engine="pyarrow", index=False)
    except OSError as err:
        raise DaqnetError(f"{path}: cannot write: {err.strerror}") from None
    return path
