"""The base of every command's result: documented fields, and the JSON document as a dict.

A result is a dataclass whose fields, in order, are the keys of the JSON document the
command prints with ``--json`` and writes as ``result.json`` / ``scan.json``. ``to_dict()``
gives that document; fields marked ``optional`` appear in it only when set. Results also
read like that dict (``r["throughput_gbps"]``), so scripts written against the JSON work on
the object unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["Result", "optional"]


def optional(default: Any = None) -> Any:
    """A field that appears in the document only when it is not None."""
    return dataclasses.field(default=default, metadata={"optional": True})


def _plain(value: Any) -> Any:
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclasses.dataclass
class Result(Mapping[str, Any]):
    """Fields of a result document; subclasses are dataclasses. A read-only Mapping of the
    document's keys (fields are also attributes, which code should prefer)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: every field in order, optional ones only when set."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.metadata.get("optional") and value is None:
                continue
            out[f.name] = _plain(value)
        return out

    def to_dataframe(self, table: str | None = None) -> Any:
        """One table of the document as a pandas DataFrame (the main one unless `table`
        names another; see daqnet.tables). Needs pandas: pip install 'daqnet[tables]'."""
        from .tables import to_dataframe

        return to_dataframe(self, table)

    def dataframes(self) -> dict[str, Any]:
        """Every table of the document as a pandas DataFrame, by name (daqnet.tables)."""
        from .tables import dataframes

        return dataframes(self)

    # -- read like the document --------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        if key not in self._keys():
            raise KeyError(key)
        return _plain(getattr(self, key))

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def _keys(self) -> dict[str, None]:
        return {
            f.name: None
            for f in dataclasses.fields(self)
            if not (f.metadata.get("optional") and getattr(self, f.name) is None)
        }
