"""Reading and compacting result files. The only reader: report, compare, plots and
studies come here.

A result file is JSON, written compactly; a name ending in ``.gz`` is gzip'd JSON (about
a tenth of the size: a 10,000-round benchmark keeps every round). Both are read
transparently. A malformed, truncated, foreign or wrong-typed file is one line naming
the file and what is wrong with it, never a traceback.

Result files travel between machines and people, so the reader treats one as data from
anywhere: it reads at most ``VCSBENCH_READ_LIMIT`` bytes of JSON (1 GiB unless set; a
small gzip file can expand to any size), names a damaged or truncated gzip file as such,
and refuses NaN, infinities, nesting past the interpreter's limit and control characters
(a name holding a terminal escape) in one line. Nothing read from a file is executed,
passed to a shell or to pytest, or used as a path to delete.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import os
import re
import secrets
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from vcsbench.errors import VcsbenchError
from vcsbench.owned import not_mine_alone
from vcsbench.results.environment import Machine
from vcsbench.results.load import is_load_document, parse_load
from vcsbench.results.model import Benchmark, Run
from vcsbench.results.schema import SchemaError
from vcsbench.results.spread import Spread

GZIP_MAGIC = b"\x1f\x8b"
READ_LIMIT_ENV = "VCSBENCH_READ_LIMIT"
DEFAULT_READ_LIMIT = 1 << 30
CHUNK = 1 << 20
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _dumps(value: object) -> bytes:
    """Compact JSON; a NaN or an infinity is a bug here, never written (it is not JSON)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[BinaryIO]:
    """A new file for ``path``: written beside it and renamed over it when the block ends
    (removed if it raises), so a reader never sees half a file, and a symlink at ``path``
    is replaced, never followed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _replace(path: Path, data: bytes) -> None:
    """``path`` holds ``data``, replaced whole (:func:`_replacing`)."""
    with _replacing(path) as handle:
        handle.write(data)


def result_stem(path: Path | str) -> str:
    """A result file's name without ``.json`` or ``.json.gz``."""
    return Path(path).name.removesuffix(".gz").removesuffix(".json")


def beside(out: Path, suffix: str) -> Path:
    """A file or directory written beside the result ``out`` (``.md``, ``-logs``)."""
    return out.with_name(result_stem(out) + suffix)


def writable_target(path: Path, option: str) -> None:
    """Refuse, in one line, a path vcsbench would write that a symlink or a directory
    holds: a file it writes is never written through a link to somewhere else."""
    if path.is_symlink():
        raise VcsbenchError(
            f"{option} {path}: is a symlink; vcsbench writes its files only where no link "
            "leads elsewhere: remove it, or give another path"
        )
    if path.exists() and not path.is_file():
        raise VcsbenchError(f"{option} {path}: is a directory, not a file; give a file's path")


def write_file(path: Path, data: bytes | str, option: str = "") -> None:
    """Write a file vcsbench makes beside a result (a table, a report, a plot, an
    export), atomically; a symlink or a directory at ``path`` is refused in one line."""
    writable_target(path, option or "file")
    try:
        _replace(path, data.encode() if isinstance(data, str) else data)
    except OSError as exc:
        raise VcsbenchError(
            f"{option or 'file'} {path}: cannot be written ({exc.strerror or exc})"
        ) from None


def own_directory(path: Path, option: str = "") -> Path:
    """A directory vcsbench writes its side files in (plots, server logs), made if it is
    missing. One already there must be a real directory of this user's that nobody else
    can write (a symlink, or a directory others write in, could send the files, written
    as root, anywhere); otherwise one clear line."""
    what = option or "directory"
    try:
        path.mkdir(mode=0o755, parents=True)
    except FileExistsError:
        pass
    except OSError as exc:
        raise VcsbenchError(
            f"{what} {path}: cannot be written (the directory cannot be made: "
            f"{exc.strerror or exc}); give a directory you can write"
        ) from None
    why = not_mine_alone(path)
    if why:
        raise VcsbenchError(
            f"{what} {path}: {why}; vcsbench writes files there (as root, perhaps), so it "
            "must be a directory of yours alone: give another path"
        )
    return path


def write_document(document: object, path: Path) -> None:
    """Write ``document`` to ``path`` compactly and atomically (gzip'd if it ends in .gz)."""
    data = _dumps(document)
    _replace(path, _gzip(data) if path.suffix == ".gz" else data)


class ResultWriter:
    """A result file written again after each benchmark, at the cost of that benchmark
    alone, and holding none of the earlier ones in memory: the file is their store.

    The file is ``{"benchmarks": [...], <facts>}`` (the run's facts after the list, as
    JSON readers do not mind the order). Each write copies the bytes of the benchmarks
    already written from the file itself, appends the new ones and the facts (which may
    have changed) to a file beside it, and renames that over the old one, so a reader
    or a killed run sees the old file or the new one, whole. A ``.gz`` file is a series
    of gzip members: the opening, one per benchmark, then the facts (a reader joins
    them, as gzip does), so the earlier members are copied without decompressing."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.gz = path.suffix == ".gz"
        self._written = 0
        """Benchmarks in the file, and the offset where the last one began and ended."""
        self._last = (0, 0)

    def _chunk(self, data: bytes) -> bytes:
        return _gzip(data) if self.gz else data

    def write(self, benchmarks: list[object], facts: dict[str, Any], amend: bool = False) -> None:
        """Add ``benchmarks`` (JSON values) after those written before, then ``facts``;
        ``amend``: the first of them replaces the last one written (it was written before
        something about it was known)."""
        keep = self._last[0] if amend and self._written else self._last[1]
        count = self._written - (1 if amend and self._written else 0)
        with _replacing(self.path) as out:
            if count:
                with open(self.path, "rb") as old:
                    left = keep
                    while left > 0:
                        chunk = old.read(min(CHUNK, left))
                        if not chunk:
                            raise OSError(f"{self.path} was cut short under vcsbench")
                        out.write(chunk)
                        left -= len(chunk)
            else:
                out.write(self._chunk(b'{"benchmarks":['))
            last = (out.tell(), out.tell())
            for value in benchmarks:
                start = out.tell()
                out.write(self._chunk((b"," if count else b"") + _dumps(value)))
                last = (start, out.tell())
                count += 1
            tail = _dumps(facts)
            out.write(self._chunk(b"]" + (b"," + tail[1:] if facts else b"}")))
        if benchmarks:
            self._last = last
        self._written = count


def _fail(path: Path, why: str) -> VcsbenchError:
    return VcsbenchError(f"{path}: {why}")


def parse(document: object, path: Path) -> Run:
    """A :class:`Run` from a decoded result document."""
    if is_load_document(document):
        return _parse_load(document, path)
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        raise _fail(
            path,
            "is not a vcsbench result file (neither a pytest-benchmark 'benchmarks' list nor "
            "a 'vcsbench load' result)",
        )
    facts: dict[str, Any] = document.get("vcsbench") or {}
    if not isinstance(facts, dict):
        raise _fail(path, "its 'vcsbench' section is not an object")
    try:
        machine_info = document.get("machine_info") or {}
        machine = Machine.from_json(
            machine_info.get("vcsbench") if isinstance(machine_info, dict) else None,
            "machine_info.vcsbench",
        )
        entries: list[tuple[str, object]] = []
        for i, entry in enumerate(document["benchmarks"]):
            info = (
                (entry.get("extra_info") or {}).get("vcsbench") if isinstance(entry, dict) else None
            )
            if info is not None:
                entries.append((f"benchmarks[{i}].extra_info.vcsbench", info))
        for i, info in enumerate(facts.get("failed_benchmarks") or []):
            entries.append((f"vcsbench.failed_benchmarks[{i}]", info))
        benchmarks = [Benchmark.from_json(info, where, str(path)) for where, info in entries]
        for bench in benchmarks:
            bench.machine = f"{machine.description}, kernel {machine.kernel or '?'}"
        spread = (
            None
            if facts.get("spread") is None
            else Spread.from_json(facts["spread"], "vcsbench.spread")
        )
        if spread is not None:
            for bench in benchmarks:
                bench.spread = spread.cell(bench.backend.name, bench.op, bench.filesystem.fstype)
    except SchemaError as exc:
        raise _fail(path, str(exc)) from None
    if not benchmarks:
        raise _fail(
            path,
            "holds no vcsbench benchmarks (was it written by vcsbench or "
            "'pytest benchmarks --benchmark-json'?)",
        )
    return Run(
        path=str(path),
        benchmarks=benchmarks,
        machine=machine,
        command=str(facts.get("command", "")),
        datetime=str(document.get("datetime", "")),
        version=str(facts.get("version", "")),
        run_id=str(facts.get("run_id", "")),
        spread=spread,
    )


def _parse_load(document: dict[str, Any], path: Path) -> Run:
    try:
        load, machine, command, run_id = parse_load(document)
        machine_facts = Machine.from_json(machine, "vcsbench_load.machine")
    except SchemaError as exc:
        raise _fail(path, str(exc)) from None
    if not load.paths:
        raise _fail(path, "is a load result with no access path in it")
    return Run(
        path=str(path),
        benchmarks=[],
        machine=machine_facts,
        command=command,
        run_id=run_id,
        load=load,
    )


def read(path: Path | str) -> Run:
    """Read one result file; a bad file is one clear :class:`VcsbenchError`."""
    path = Path(path)
    return parse(read_document(path), path)


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
    return _fail(
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
            raise _fail(path, f"is a damaged gzip file ({exc})") from None
        raise _fail(path, f"cannot be read ({exc.strerror or exc})") from None
    except zlib.error as exc:
        raise _fail(path, f"is a damaged gzip file (its data does not decompress: {exc})") from None
    except EOFError:
        raise _fail(path, "is a truncated gzip file: it ends before its data does") from None


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
        raise _fail(path, "is not UTF-8 text; expected a vcsbench result file (JSON)") from None
    control = _control_character(text)
    if control is not None:
        raise _fail(
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
        raise _fail(
            path,
            f"is not valid JSON (truncated or damaged? {exc.msg} at line "
            f"{exc.lineno}); expected a vcsbench/pytest-benchmark result file",
        ) from None
    except RecursionError:
        raise _fail(path, "is nested too deeply to be a result file") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise _fail(path, f"is not a result file ({exc})") from None
    if constants or _BIG_EXPONENT.search(text):
        where = _first_not_finite(document)
        if where is not None:
            raise _fail(path, f"{where}; result files hold finite numbers only")
    return document


def read_document(path: Path) -> Any:
    """The decoded JSON of a result file (gzip'd or not), or one clear error."""
    return decode(read_bytes(path), path)


def read_many(paths: Iterable[Path | str]) -> list[Run]:
    return [read(p) for p in paths]


def read_json_file(path: Path, limit: int) -> Any:
    """A small JSON file vcsbench keeps beside its results (a machine's calibration),
    read as data from anywhere: at most ``limit`` bytes, checked as a result file is."""
    return decode(read_bytes(path, limit), path)


def write_json_file(path: Path, value: object) -> None:
    """``value`` as compact JSON at ``path``, replaced whole (a link there is refused)."""
    write_file(path, _dumps(value), str(path))
