"""A benchmark's result.json, units.csv and timeseries.csv (or .parquet)."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import DaqnetError
from ..result import Result
from .files import atomic_open, write_text_atomic
from .table_files import columns_of, write_parquet

__all__ = ["clean", "write_tables"]


def clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value


def write_tables(result: Mapping[str, Any], out_dir: str | Path, table_format: str = "csv") -> None:
    """result.json plus units.csv, timeseries.csv and memory.csv (or the same as .parquet).
    A write that fails (a full disk) is an error naming the directory: OSError alone said
    "[Errno 28] No space left on device", and not where."""
    try:
        _write_tables(result, Path(out_dir), table_format)
    except OSError as err:
        if err.filename:  # it names its file already
            raise
        raise DaqnetError(f"writing the results into {out_dir}: {err.strerror or err}") from None


def _write_tables(result: Mapping[str, Any], out_dir: Path, table_format: str) -> None:
    doc = clean(result.to_dict() if isinstance(result, Result) else dict(result))
    write_text_atomic(out_dir / "result.json", json.dumps(doc, indent=1) + "\n")
    tables = [("units", doc["units"]), ("timeseries", doc["timeseries"])]
    if doc.get("memory"):
        tables.append(("memory", doc["memory"]))
    for name, rows in tables:
        keys = columns_of(rows)
        if table_format == "parquet":
            write_parquet(out_dir / f"{name}.parquet", rows, keys)
            continue
        with atomic_open(out_dir / f"{name}.csv", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
