"""scan.csv (or scan.parquet), runs.csv of a measured scan, and scan.json, rewritten whole as
rows arrive."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import DaqnetError
from ..result import Result
from .files import write_text_atomic

__all__ = ["write_scan_files"]


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    if isinstance(value, float):
        return repr(value)  # every digit: the CSV reads back to the same float
    return value


def _csv(columns: list[str], rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for row in rows:
        w.writerow([_cell(row.get(c)) for c in columns])
    return buf.getvalue()


def write_scan_files(
    doc: Mapping[str, Any], out: Path, stem: str = "scan", table_format: str = "csv"
) -> None:
    """STEM.csv (one row per point, floats to the last digit) or STEM.parquet, and
    STEM.json, atomically (scan.* for daqnet scan, study.* for daqnet study); a measured
    scan also has runs.csv or runs.parquet (one row per run)."""
    tables = [(stem, doc["columns"], doc["rows"])]
    if doc.get("runs") is not None:
        tables.append(("runs", doc["run_columns"], doc["runs"]))
    try:
        for name, columns, rows in tables:
            if table_format == "parquet":
                from .table_files import write_parquet

                write_parquet(out / f"{name}.parquet", rows, columns)
            else:
                write_text_atomic(out / f"{name}.csv", _csv(columns, rows))
        write_text_atomic(
            out / f"{stem}.json",
            json.dumps(doc.to_dict() if isinstance(doc, Result) else dict(doc), indent=1) + "\n",
        )
    except OSError as err:
        raise DaqnetError(f"{out}: cannot write the {stem} files: {err.strerror}") from None
