"""Reading and compacting result files. The only reader: report, compare, plots and
studies come here.

A result file is JSON, written compactly; a name ending in ``.gz`` is gzip'd JSON (about
a tenth of the size: a 10,000-round benchmark keeps every round). Both are read
transparently. A malformed, truncated, foreign or wrong-typed file is one line naming
the file and what is wrong with it, never a traceback.

Result files travel between machines and people, so the reader treats one as data from
anywhere (:mod:`vcsbench.results.bounded`: bounded before it is read, one line on a bad
value). Nothing read from a file is executed, passed to a shell or to pytest, or used as
a path to delete.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from vcsbench.errors import VcsbenchError, without_secrets
from vcsbench.owned import not_mine_alone
from vcsbench.results import layout
from vcsbench.results.bounded import CHUNK, decode, fail, read_bytes
from vcsbench.results.environment import Machine
from vcsbench.results.load import LOAD_KEY, is_load_document, parse_load
from vcsbench.results.model import Benchmark, Run
from vcsbench.results.schema import SchemaError
from vcsbench.results.spread import Spread


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


MAX_NODE = 256
"""A host name read from a load result, at most (characters)."""


def parse(document: object, path: Path) -> Run:
    """A :class:`Run` from a decoded result document."""
    if is_load_document(document):
        return _parse_load(document, path)
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        raise fail(
            path,
            "is not a vcsbench result file (neither a pytest-benchmark 'benchmarks' list nor "
            "a 'vcsbench load' result)",
        )
    if not isinstance(document.get(layout.OURS) or {}, dict):
        raise fail(path, f"its '{layout.OURS}' section is not an object")
    facts = layout.run_facts(document)
    machine_json, node = layout.machine_facts(document)
    try:
        machine = Machine.from_json(machine_json, f"machine_info.{layout.OURS}")
        entries = layout.benchmark_entries(document)
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
        raise fail(path, str(exc)) from None
    if not benchmarks:
        raise fail(
            path,
            "holds no vcsbench benchmarks (was it written by vcsbench or "
            "'pytest benchmarks --benchmark-json'?)",
        )
    return Run(
        path=str(path),
        benchmarks=benchmarks,
        machine=machine,
        command=without_secrets(str(facts.get("command", ""))),
        datetime=str(document.get("datetime", "")),
        version=str(facts.get("version", "")),
        run_id=str(facts.get("run_id", "")),
        spread=spread,
        node=node,
    )


def _parse_load(document: dict[str, Any], path: Path) -> Run:
    try:
        load, machine, command, run_id = parse_load(document)
        machine_facts = Machine.from_json(machine, "vcsbench_load.machine")
    except SchemaError as exc:
        raise fail(path, str(exc)) from None
    if not load.paths:
        raise fail(path, "is a load result with no access path in it")
    node = document[LOAD_KEY].get("node")  # the host's name, as a benchmark run has it
    return Run(
        path=str(path),
        benchmarks=[],
        machine=machine_facts,
        command=without_secrets(command),
        run_id=run_id,
        load=load,
        node=node[:MAX_NODE] if isinstance(node, str) else "",
    )


def read(path: Path | str) -> Run:
    """Read one result file; a bad file is one clear :class:`VcsbenchError`."""
    return read_whole(path).run


class Whole(NamedTuple):
    """A result file read once: its bytes (what the store digests), its JSON and its run."""

    data: bytes
    document: Any
    run: Run


def read_whole(path: Path | str) -> Whole:
    """:func:`read`, keeping the bytes and the JSON the run was parsed from (a run's
    summary and the store read one file once, not once each)."""
    path = Path(path)
    data = read_bytes(path)
    document = decode(data, path)
    return Whole(data, document, parse(document, path))


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
