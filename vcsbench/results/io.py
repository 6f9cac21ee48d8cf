"""Reading and compacting result files. The only reader: report, compare, plots and
studies come here.

A result file is JSON, written compactly; a name ending in ``.gz`` is gzip'd JSON (about
a tenth of the size: a 10,000-round benchmark keeps every round). Both are read
transparently. A malformed, truncated, foreign or wrong-typed file is one line naming
the file and what is wrong with it, never a traceback.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.results.load import is_load_document, parse_load
from vcsbench.results.model import Benchmark, Machine, Run, SchemaError

GZIP_MAGIC = b"\x1f\x8b"


def _dumps(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True).encode()


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def write_document(document: object, path: Path) -> None:
    """Write ``document`` to ``path`` compactly and atomically (gzip'd if it ends in .gz)."""
    data = _dumps(document)
    _replace(path, _gzip(data) if path.suffix == ".gz" else data)


class Encoded:
    """A JSON value encoded once, for a file written again as values are added to it;
    its gzip member (with the comma before it) is made the first time it is asked for."""

    def __init__(self, value: object) -> None:
        self.json = _dumps(value)
        self._member: bytes | None = None

    def member(self) -> bytes:
        if self._member is None:
            self._member = _gzip(b"," + self.json)
        return self._member


def write_document_with_list(
    head: dict[str, Any], key: str, items: list[Encoded], path: Path
) -> None:
    """Write ``head`` with ``key`` added, the list of ``items``, as :func:`write_document`
    would, but encoding (and compressing) only what was not written before: a ``.gz`` file
    is a series of gzip members, one per item (a reader joins them, as gzip does)."""
    opening = _dumps(head)[:-1] + (b"," if head else b"") + _dumps(key) + b":["
    if path.suffix == ".gz":
        first = _gzip(opening + (items[0].json if items else b""))
        data = b"".join([first, *(item.member() for item in items[1:]), _gzip(b"]}")])
    else:
        data = b"".join([opening, b",".join(item.json for item in items), b"]}"])
    _replace(path, data)


def compact(path: Path) -> None:
    """Rewrite a result file pytest-benchmark wrote (indented JSON) in compact form."""
    document = json.loads(path.read_text())
    write_document(document, path)


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
                entries.append((f"benchmarks[{i}]", info))
        for i, info in enumerate(facts.get("failed_benchmarks") or []):
            entries.append((f"vcsbench.failed_benchmarks[{i}]", info))
        benchmarks = [Benchmark.from_json(info, where, str(path)) for where, info in entries]
        for bench in benchmarks:
            bench.machine = f"{machine.description}, kernel {machine.kernel or '?'}"
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
    )


def _parse_load(document: dict[str, Any], path: Path) -> Run:
    try:
        load, machine, command = parse_load(document)
        machine_facts = Machine.from_json(machine, "vcsbench_load.machine")
    except SchemaError as exc:
        raise _fail(path, str(exc)) from None
    if not load.paths:
        raise _fail(path, "is a load result with no access path in it")
    return Run(path=str(path), benchmarks=[], machine=machine_facts, command=command, load=load)


def load(path: Path | str) -> Run:
    """Read one result file; a bad file is one clear :class:`VcsbenchError`."""
    path = Path(path)
    return parse(read_document(path), path)


def read_document(path: Path) -> Any:
    """The decoded JSON of a result file (gzip'd or not), or one clear error."""
    try:
        raw = path.read_bytes()
        if raw[:2] == GZIP_MAGIC:
            raw = gzip.decompress(raw)
        text = raw.decode()
    except OSError as exc:
        raise _fail(path, f"cannot be read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, EOFError):
        raise _fail(path, "is not text; expected a vcsbench result file (JSON)") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(
            path,
            f"is not valid JSON (truncated or damaged? {exc.msg} at line "
            f"{exc.lineno}); expected a vcsbench/pytest-benchmark result file",
        ) from None
    return document


def load_many(paths: Iterable[Path | str]) -> list[Run]:
    return [load(p) for p in paths]
