"""Every result table of daqnet as a pandas DataFrame (docs/tables.md).

A result document holds its tables as lists of rows (``scan.json``'s ``rows`` and
``runs``, a benchmark's ``units`` and ``timeseries``, ...). :func:`dataframes` gives all of
them, :func:`to_dataframe` one, from a result object (what ``run_scan``, ``simulate``,
``bench.run`` and ``conflicts`` return), a document read from JSON, or a directory written
with ``--out`` (:func:`read_tables`). Columns are those of the CSV files, in their order;
values are the JSON document's (lists stay lists here; CSV and Parquet hold them as JSON
text).

pandas (and pyarrow, for Parquet) are the optional ``tables`` extra:
``pip install 'daqnet[tables]'``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import DaqnetError
from .io.table_files import FORMATS, check_format, columns_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FORMATS", "TABLES", "check_format", "dataframes", "read_tables", "to_dataframe"]

#: The tables of each kind of result document (daqnet.io.result_files.KINDS), first the
#: main one: table name → (key of the rows, key of the column list or None: the rows' keys).
TABLES: dict[str, dict[str, tuple[str, str | None]]] = {
    "scan": {"scan": ("rows", "columns"), "runs": ("runs", "run_columns")},
    "bench": {
        "units": ("units", None),
        "timeseries": ("timeseries", None),
        "memory": ("memory", None),
    },
    "simulate-steps": {"steps": ("steps", None), "link_loads": ("link_loads", None)},
    "simulate-protocol": {
        "units": ("units", None),
        "timeseries": ("timeseries", None),
        "links": ("links", None),
    },
    # result.json of daqnet conflicts: per step, per link class, the worst links
    "conflicts": {
        "steps": ("steps", None),
        "classes": ("levels", None),
        "worst_links": ("worst_links", None),
    },
    "study": {"study": ("rows", "columns")},
    # repair.json: what else was weighed (orders, node counts or schedules)
    "repair": {"candidates": ("candidates", None)},
    # daqnet plan --json: one tree per taper
    "plan": {"candidates": ("candidates", None)},
}


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise DaqnetError(
            "DataFrames need pandas, which is not installed: pip install 'daqnet[tables]'"
        ) from None
    return pd


def _kind(doc: Mapping[str, Any]) -> str:
    from .io.result_files import recognise

    kind = recognise(dict(doc))
    if kind is None:
        raise DaqnetError(
            "not a daqnet result document (scan, bench, simulate, conflicts, study, repair, plan)"
        )
    return kind


def _conflict_tables(report: Any) -> dict[str, pd.DataFrame]:
    """A ConflictReport's tables: those of steps.csv, links.csv and levels.csv of daqnet
    conflicts, and one row per link class (result.json's levels)."""
    pd = _pandas()
    levels = [
        {"class": lv["class"], "load": load, "link_steps": n}
        for lv in report.levels()
        for load, n in sorted(lv["histogram"].items())
    ]
    return {
        "steps": pd.DataFrame(report.steps()),
        "links": pd.DataFrame(report.links()),
        "levels": pd.DataFrame(levels, columns=["class", "load", "link_steps"]),
        "classes": pd.DataFrame(report.levels()),
    }


def dataframes(result: Any) -> dict[str, pd.DataFrame]:
    """Every table of a result (object or document) as a DataFrame, by table name; tables
    the document does not hold (a simulated scan has no runs) are left out."""
    # A ConflictReport (known by its methods: importing daqnet.analysis here would make a
    # cycle, as ConflictReport.dataframes() comes here).
    if callable(getattr(result, "worst_links", None)):
        return _conflict_tables(result)
    pd = _pandas()
    doc = result.to_dict() if hasattr(result, "to_dict") else dict(result)
    out = {}
    for name, (rows_key, columns_key) in TABLES[_kind(doc)].items():
        rows = doc.get(rows_key)
        if rows is None:
            continue
        columns = doc[columns_key] if columns_key else columns_of(rows)
        out[name] = pd.DataFrame.from_records(
            [[r.get(c) for c in columns] for r in rows], columns=columns
        )
    return out


def to_dataframe(result: Any, table: str | None = None) -> pd.DataFrame:
    """One table of a result as a DataFrame: `table` by name (see TABLES), else the main one
    (a scan's rows, a benchmark's units, a simulation's steps or units)."""
    tables = dataframes(result)
    if table is None:
        return next(iter(tables.values()))
    if table not in tables:
        raise DaqnetError(f"table {table!r}: this result has {', '.join(tables) or 'no tables'}")
    return tables[table]


def read_tables(path: str | Path) -> dict[str, pd.DataFrame]:
    """The tables of the result in a directory written with ``--out`` (or of a result JSON
    file), read from its JSON document."""
    from .io.result_files import read_results

    found = read_results([path])
    if len(found) > 1:
        raise DaqnetError(
            f"{path}: {len(found)} results ({', '.join(str(r.path) for r in found)}); give one file"
        )
    return dataframes(found[0].doc)
