"""Overrides of scenario keys: ``section.key=value`` (``--set``) and
``section.key=v1,v2,...`` (the values a scan varies, ``--vary``). Values are read as TOML; a
bare word that is not valid TOML is a string.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from ..errors import DaqnetError
from .schema import SCHEMA

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Axis", "parse_set", "parse_vary", "shown", "split_values"]


def shown(text: str) -> str:
    """`text` for a one-line message: as typed, or escaped as Python writes a string
    literal when it holds a line break or another character that does not print."""
    return text if text.isprintable() else repr(text)


def parse_set(item: str) -> tuple[str, str, Any]:
    """Parse one ``section.key=value`` override."""
    if "=" not in item:
        raise DaqnetError(f"set {shown(item)}: expected section.key=value")
    path, text = item.split("=", 1)
    parts = path.strip().split(".")
    if len(parts) != 2 or not all(parts):
        raise DaqnetError(f"set {shown(item)}: expected section.key=value (e.g. fabric.hosts=64)")
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text  # a bare word: taken as a string
    except RecursionError:
        raise DaqnetError(
            f"set {shown(item)}: not a value daqnet can read: arrays or tables nested too deeply"
        ) from None
    return parts[0], parts[1], value


@dataclass(frozen=True)
class Axis:
    """One ``--vary`` key: its values as parsed (TOML) and as typed (for ``--set``)."""

    key: str
    values: tuple[Any, ...]
    texts: tuple[str, ...]


def split_values(text: str) -> list[str]:
    """Split at commas outside brackets, braces and quotes: ``[1,2],[3]`` is two values."""
    items, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1  # skip the escaped character
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unmatched '{c}'")
        elif c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
        i += 1
    if quote:
        raise ValueError(f"unclosed {quote}")
    if depth:
        raise ValueError("unclosed '[' or '{'")
    items.append(text[start:])
    return [item.strip() for item in items]


def parse_vary(item: str) -> Axis:
    """``section.key=v1,v2,...``: values read like ``--set`` values (TOML, else a bare word)."""
    where = f"vary {shown(item)}"
    if "=" not in item:
        raise DaqnetError(f"{where}: expected section.key=value1,value2,...")
    path, text = item.split("=", 1)
    key = path.strip()
    parts = key.split(".")
    if len(parts) != 2 or not all(parts):
        raise DaqnetError(
            f"{where}: expected section.key=value1,value2,... (e.g. fabric.taper=1:1,2:1)"
        )
    section, name = parts
    if section not in SCHEMA:
        raise DaqnetError(f"{where}: unknown section {section!r} (known: {', '.join(SCHEMA)})")
    if name not in SCHEMA[section]:
        raise DaqnetError(f"{where}: unknown key {key!r} (known: {', '.join(SCHEMA[section])})")
    if key == "simulate.mode":
        raise DaqnetError(
            f"{where}: the two modes give different metrics; run one scan per mode (set simulate.mode=...)"
        )
    if not text.strip():
        raise DaqnetError(f"{where}: no values (give value1,value2,...)")
    try:
        texts = split_values(text)
    except ValueError as err:
        raise DaqnetError(f"{where}: {err}") from None
    values: list[Any] = []
    for n, t in enumerate(texts, 1):
        if not t:
            raise DaqnetError(f"{where}: value {n} is empty")
        value = parse_set(f"{key}={t}")[2]
        if value in values:
            raise DaqnetError(f"{where}: value {t} is given twice")
        values.append(value)
    return Axis(key, tuple(values), tuple(texts))
