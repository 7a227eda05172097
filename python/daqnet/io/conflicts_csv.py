"""Writing the results of ``daqnet conflicts``: result.json (the ``--json`` document) and tidy
CSV tables (one row per step, link, class/load or conflict)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis import ConflictReport
from .files import atomic_open, ensure_dir, write_text_atomic
from .table_files import write_parquet

__all__ = ["write_conflict_csv", "write_conflict_files"]


def _write(
    path: Path, header: list[str], rows: Iterable[Iterable[Any]], table_format: str = "csv"
) -> Path:
    """One table as path (CSV) or, `table_format` "parquet", path with suffix .parquet."""
    if table_format == "parquet":
        records = [dict(zip(header, row, strict=True)) for row in rows]
        return write_parquet(path.with_suffix(".parquet"), records, header)
    with atomic_open(path, newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def _columns(table: dict[str, Any]) -> tuple[list[str], Iterable[Iterable[Any]]]:
    header = list(table)
    cols = [v.tolist() if isinstance(v, np.ndarray) else v for v in table.values()]
    return header, zip(*cols, strict=True)


def write_conflict_csv(
    report: ConflictReport,
    directory: str | Path,
    detail_steps: int | None = 20,
    detail_flows: int | None = 100,
    table_format: str = "csv",
) -> list[Path]:
    """Write steps.csv, links.csv, levels.csv and conflicts.csv (or .parquet) into `directory`.

    conflicts.csv lists, for the `detail_steps` steps with most conflicts (all steps when
    None), every link with more than one flow and up to `detail_flows` of the flows on it
    (all when None; the load column always gives the full count).
    """
    d = ensure_dir(directory, "CSV directory")
    written = []

    written.append(_write(d / "steps.csv", *_columns(report.steps()), table_format))
    written.append(_write(d / "links.csv", *_columns(report.links()), table_format))

    path = d / "levels.csv"
    rows = []
    for lv in report.levels():
        for load, count in sorted(lv["histogram"].items()):
            rows.append([lv["class"], load, count])
    written.append(_write(path, ["class", "load", "link_steps"], rows, table_format))

    path = d / "conflicts.csv"
    steps = report.worst_steps(report.steps_done if detail_steps is None else detail_steps)

    def detail_rows() -> Iterator[list[Any]]:
        for step in sorted(steps):
            for c in report.step_details(step, max_flows_per_link=detail_flows):
                for f in c["flows"]:
                    yield [
                        step,
                        c["link"],
                        c["from"],
                        c["from_port"],
                        c["to"],
                        c["to_port"],
                        c["load"],
                        f["src_rank"],
                        f["dst_rank"],
                        f["src_host"],
                        f["dst_host"],
                    ]

    path = _write(
        path,
        [
            "step",
            "link",
            "from",
            "from_port",
            "to",
            "to_port",
            "load",
            "src_rank",
            "dst_rank",
            "src_host",
            "dst_host",
        ],
        detail_rows(),
        table_format,
    )
    written.append(path)
    return written


def write_conflict_files(
    doc: Mapping[str, Any],
    report: ConflictReport,
    directory: str | Path,
    detail_steps: int | None = 20,
    detail_flows: int | None = 100,
    table_format: str = "csv",
) -> list[Path]:
    """result.json (`doc`, the document ``--json`` prints) and the CSV tables of
    :func:`write_conflict_csv` in `directory`; returns the files written."""
    d = ensure_dir(directory, "output directory")
    write_text_atomic(d / "result.json", json.dumps(dict(doc), indent=1) + "\n")
    return [
        d / "result.json",
        *write_conflict_csv(report, d, detail_steps, detail_flows, table_format),
    ]
