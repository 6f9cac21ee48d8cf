"""Files as every backend writes and checks them: a tree written from a payload, a file
read or digested, a revision's files compared with what was committed, a file: URL."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

Files = Mapping[str, bytes]
"""Relative POSIX paths (``dir/name.txt``) to file contents."""

Digest = tuple[int, str]
"""A file's size and SHA-256 (hex), as a reader in another process reports it."""

Reader = Callable[[Path, list[str]], Mapping[str, bytes | Digest | None]]
"""Reads the given paths at the newest revision; ``None`` for a path that is absent."""


def write_tree(root: Path, files: Files) -> None:
    """Write ``files`` below ``root``, making directories as needed."""
    for rel, data in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def digest(data: bytes) -> Digest:
    return len(data), hashlib.sha256(data).hexdigest()


def read_file(path: Path | str) -> bytes:
    """A file's bytes through os.open/os.read: a third of ``Path.read_bytes``'s cost, which
    counts in a verifier that runs every round."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def compare_files(expected: Files, actual: Mapping[str, bytes | Digest | None]) -> list[str]:
    """Describe every path whose content in ``actual`` (the bytes, or their digest)
    differs from ``expected``."""
    problems: list[str] = []
    for rel in sorted(expected):
        got = actual.get(rel)
        if got is None:
            problems.append(f"{rel}: missing")
        elif got != (digest(expected[rel]) if isinstance(got, tuple) else expected[rel]):
            size = got[0] if isinstance(got, tuple) else len(got)
            problems.append(f"{rel}: content differs ({size} bytes, expected {len(expected[rel])})")
    return problems


def verify_with(reader: Reader, path: Path, files: Files) -> list[str]:
    """Run ``reader(path, paths)`` and compare; a reader failure is itself a difference."""
    try:
        actual = reader(path, sorted(files))
    except Exception as exc:  # any failure to read back is a verification failure
        return [f"could not read the newest revision: {type(exc).__name__}: {exc}"]
    return compare_files(files, actual)


def file_url(path: Path) -> str:
    """``file://`` URL of a local repository, percent-encoded as Subversion wants."""
    from urllib.parse import quote

    return "file://" + quote(os.path.abspath(path))
