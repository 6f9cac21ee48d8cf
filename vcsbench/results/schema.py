"""Checks for values read from a result document, each failing in one line that names the
field (``benchmarks[0].rounds.wall_ns[3] is -1, expected 0 or more``).

A result file is data from somewhere else: every number it gives is checked to be a
number (not a boolean), finite, and not negative where it is a time or a count. The
reader (:mod:`vcsbench.results.io`) refuses NaN and infinities anywhere in a document
before the model reads it; these checks say which field, and hold for documents built
in memory too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


class SchemaError(ValueError):
    """A result document that does not have the shape of this schema; one line."""


Kind = type | tuple[type, ...]
LARGEST = 1e18
"""The largest magnitude a figure of a result may have: 31 years in nanoseconds, an
exabyte; anything larger is a damaged or crafted file (and would overflow or turn into
infinities once summed or divided)."""


def expect(value: object, kind: Kind, where: str) -> Any:
    """``value`` if it is of ``kind``; numbers must also be finite."""
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise SchemaError(f"{where} is a boolean, expected a number")
    if value is None:
        raise SchemaError(f"{where} is missing")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SchemaError(f"{where} is {type(value).__name__}, expected {names}")
    if isinstance(value, float) and not math.isfinite(value):
        raise SchemaError(f"{where} is {value}, expected a finite number")
    if isinstance(value, int | float) and not -LARGEST <= value <= LARGEST:
        shown = (
            f"{value:.3g}"
            if isinstance(value, float)
            else f"{str(value)[:12]}… ({len(str(value))} digits)"
        )
        raise SchemaError(f"{where} is {shown}, beyond the {LARGEST:g} a figure may be")
    return value


def required(data: Mapping[str, Any], key: str, kind: Kind, where: str) -> Any:
    if key not in data:
        raise SchemaError(f"{where} lacks {key!r}")
    return expect(data[key], kind, f"{where}.{key}")


def optional(data: Mapping[str, Any], key: str, kind: Kind, where: str, default: Any) -> Any:
    value = data.get(key, default)
    if value is None:
        return default
    return expect(value, kind, f"{where}.{key}")


def not_negative(value: float, where: str) -> float:
    if value < 0:
        raise SchemaError(f"{where} is {value:g}, expected 0 or more")
    return value


def count(data: Mapping[str, Any], key: str, where: str, default: int | None = None) -> int:
    """A whole number of things (rounds, errors, sessions): an int, 0 or more."""
    if default is None:
        value = required(data, key, int, where)
    else:
        value = optional(data, key, int, where, default)
    return int(not_negative(value, f"{where}.{key}"))


def optional_count(data: Mapping[str, Any], key: str, where: str) -> int | None:
    value = optional(data, key, int, where, None)
    return None if value is None else int(not_negative(value, f"{where}.{key}"))


def number(data: Mapping[str, Any], key: str, where: str, *, signed: bool = False) -> float:
    """A required finite number; 0 or more unless ``signed``."""
    value = float(required(data, key, (int, float), where))
    return value if signed else not_negative(value, f"{where}.{key}")


def optional_number(
    data: Mapping[str, Any], key: str, where: str, *, signed: bool = False
) -> float | None:
    value = optional(data, key, (int, float), where, None)
    if value is None:
        return None
    return float(value) if signed else not_negative(float(value), f"{where}.{key}")


def str_map(value: object, where: str) -> dict[str, str]:
    data = expect(value, dict, where)
    return {str(k): str(v) for k, v in data.items()}


def numbers(value: object, where: str, *, signed: bool = False) -> list[float | None]:
    """A list of finite numbers or nulls; 0 or more unless ``signed``."""
    items = expect(value, list, where)
    out: list[float | None] = []
    for i, item in enumerate(items):
        if item is None:
            out.append(None)
            continue
        value_ = float(expect(item, (int, float), f"{where}[{i}]"))
        out.append(value_ if signed else not_negative(value_, f"{where}[{i}]"))
    return out
