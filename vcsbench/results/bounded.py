"""A result file's bytes read as data from anywhere: at most ``VCSBENCH_READ_LIMIT`` bytes
of JSON (1 GiB unless set; a small gzip file can expand to any size), a damaged or
truncated gzip file named as such, and NaN, infinities, nesting past the interpreter's
limit and control characters (a name holding a terminal escape) refused, each in one
line naming the file. :mod:`vcsbench.results.io` reads and writes result files with it."""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import zlib
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError

GZIP_MAGIC = b"\x1f\x8b"
READ_LIMIT_ENV = "VCSBENCH_READ_LIMIT"
DEFAULT_READ_LIMIT = 1 << 30
CHUNK = 1 << 20
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def fail(path: Path, why: str) -> VcsbenchError:
    return VcsbenchError(f"{path}: {why}")


def read_limit() -> int:
    """The most bytes of JSON a result file may hold: ``$VCSBENCH_READ_LIMIT`` or 1 GiB."""
    text = os.environ.get(READ_LIMIT_ENV, "").strip()
    if not text:
        return DEFAULT_READ_LIMIT
    match = re.fullmatch(r"(\d+)([KMGT]?)i?B?", text, re.IGNORECASE)
    if not match or int(match.group(1)) == 0:
        raise VcsbenchError(
            f"{READ_LIMIT_ENV}={text!r} is not a size like 512M or 4G (the most bytes of "
            "JSON a result file may expand to)"
        )
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def _size_text(size: int) -> str:
    return f"{size / (1 << 30):g} GiB" if size >= 1 << 30 else f"{size / (1 << 20):g} MiB"


def _too_big(path: Path, limit: int, what: str) -> VcsbenchError:
    return fail(
        path,
        f"{what} more than {_size_text(limit)} of JSON, the limit for a result file; if it "
        f"is a result you trust, raise the limit, e.g. {READ_LIMIT_ENV}={2 * limit >> 30 or 1}G",
    )


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The JSON bytes of a result file, gzip'd or not, at most ``limit`` of them."""
    limit = read_limit() if limit is None else limit
    try:
        with open(path, "rb") as handle:
            if handle.read(2) != GZIP_MAGIC:
                handle.seek(0)
                if os.fstat(handle.fileno()).st_size > limit:
                    raise _too_big(path, limit, "holds")
                return handle.read()
            handle.seek(0)
            parts: list[bytes] = []
            total = 0
            with gzip.GzipFile(fileobj=handle) as unpacked:
                while chunk := unpacked.read(CHUNK):
                    total += len(chunk)
                    if total > limit:
                        raise _too_big(path, limit, "expands to")
                    parts.append(chunk)
            return b"".join(parts)
    except OSError as exc:
        if isinstance(exc, gzip.BadGzipFile):
            raise fail(path, f"is a damaged gzip file ({exc})") from None
        raise fail(path, f"cannot be read ({exc.strerror or exc})") from None
    except zlib.error as exc:
        raise fail(path, f"is a damaged gzip file (its data does not decompress: {exc})") from None
    except EOFError:
        raise fail(path, "is a truncated gzip file: it ends before its data does") from None


# A control character in a JSON string is written \u00XX (C0, DEL) or as itself (C1):
# a name holding a terminal escape. Tab, newline and carriage return are text.
_CONTROL_CODES = frozenset(f"{c:02x}" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]) - {
    "09",
    "0a",
    "0d",
}
_RAW_C1 = re.compile(r"[\x7f-\x9f]")


def _control_character(text: str) -> tuple[str, int] | None:
    """The first control character in a JSON text and its offset, or None (a scan at
    the speed of ``str.find``: most files have no escape at all)."""
    if not text.isascii():
        raw = _RAW_C1.search(text)
        if raw is not None:
            return raw.group(0), raw.start()
    at = text.find("\\u00")
    while at >= 0:
        before = at
        while before > 0 and text[before - 1] == "\\":
            before -= 1
        if (at - before) % 2 == 0 and text[at + 4 : at + 6].lower() in _CONTROL_CODES:
            return text[at : at + 6], at
        at = text.find("\\u00", at + 1)
    return None


# Only a decimal exponent of three digits or more can overflow a float to infinity.
_BIG_EXPONENT = re.compile(r"[eE]\+?\d{3}")


def _first_not_finite(value: object, where: str = "") -> str | None:
    """Where the first NaN or infinity in a decoded document is, or None."""
    stack: list[tuple[object, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{at or 'the document'} is {item}"
        if isinstance(item, dict):
            stack.extend((v, f"{at}.{k}" if at else str(k)) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in reversed(list(enumerate(item))))
    return None


def decode(data: bytes, path: Path) -> Any:
    """The decoded JSON of a result file's bytes, checked as data from anywhere."""
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise fail(path, "is not UTF-8 text; expected a vcsbench result file (JSON)") from None
    control = _control_character(text)
    if control is not None:
        raise fail(
            path,
            f"holds a control character ({control[0]!r} at character {control[1]:,}); "
            "result files hold printable text only",
        )
    constants: list[str] = []

    def constant(name: str) -> float:
        constants.append(name)
        return float(name)

    try:
        document = json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise fail(
            path,
            f"is not valid JSON (truncated or damaged? {exc.msg} at line "
            f"{exc.lineno}); expected a vcsbench/pytest-benchmark result file",
        ) from None
    except RecursionError:
        raise fail(path, "is nested too deeply to be a result file") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise fail(path, f"is not a result file ({exc})") from None
    if constants or _BIG_EXPONENT.search(text):
        where = _first_not_finite(document)
        if where is not None:
            raise fail(path, f"{where}; result files hold finite numbers only")
    return document
