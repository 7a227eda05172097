"""A simulation's result.json and one CSV per table of its document."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..result import Result
from .files import atomic_open, ensure_dir, write_text_atomic
from .table_files import write_parquet

__all__ = ["write_simulation"]

# Per-row tables of the result document, written as CSV next to result.json.
TABLES = {
    "steps": "steps.csv",
    "link_loads": "link_loads.csv",  # steps mode: bytes per link, per link class
    "units": "units.csv",
    "timeseries": "timeseries.csv",
    "links": "links.csv",
}


def write_simulation(
    r: Mapping[str, Any], out: str | Path, table_format: str = "csv"
) -> list[Path]:
    """result.json and one CSV (or Parquet) file per table of the document; returns the
    files written."""
    out = ensure_dir(out)
    written = [out / "result.json"]
    write_text_atomic(
        written[0], json.dumps(r.to_dict() if isinstance(r, Result) else dict(r), indent=1) + "\n"
    )
    for key, name in TABLES.items():
        rows = r.get(key)
        if not rows:
            continue
        path = out / name
        fields = list(dict.fromkeys(k for row in rows for k in row))  # RU and BU rows differ
        if table_format == "parquet":
            written.append(write_parquet(path.with_suffix(".parquet"), rows, fields))
            continue
        with atomic_open(path, newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
        written.append(path)
    return written
