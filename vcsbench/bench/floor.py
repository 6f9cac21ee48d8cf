"""The floor: the same directories and files an operation left, written plainly.

What the last round created or changed under its result paths (never the scratch
space) is rewritten with mkdir/open/write/close in the same sandbox, ``FLOOR_ROUNDS``
times; the median is what the filesystem itself needs for that tree, and an operation's
median over it is its distance from the floor.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import stat
import statistics
import time
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

FLOOR_ROUNDS = 5
METHOD = (
    "mkdir + open/write/close of every directory and file the operation created or "
    "changed in its last round (repository and checkout, not scratch), same sandbox, "
    "no fsync"
)

State: TypeAlias = "array[int]"  # of "Q": unsigned 64-bit
"""What a snapshot keeps of each entry: 8 bytes, a digest of its path and identity (a
file: inode, size, mtime; a directory: inode), sorted -- 4.8 MB for a repository of
600,000 objects, where a dict of paths took hundreds of MB."""


NOTHING: State = array("Q")


@dataclass(frozen=True)
class TreeEntry:
    is_dir: bool
    data: bytes = b""


def _key(rel: str, st: os.stat_result, is_dir: bool) -> int:
    what = (
        f"d\0{rel}\0{st.st_ino}"
        if is_dir
        else (f"f\0{rel}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}")
    )
    return int.from_bytes(
        hashlib.blake2b(what.encode(errors="surrogateescape"), digest_size=8).digest(), "little"
    )


def _entries(roots: list[Path], base: Path) -> Iterator[tuple[str, os.stat_result, bool, bool]]:
    """(path relative to ``base``, lstat, is a directory, is a regular file) of everything
    below ``roots``, walked without recursion."""
    for top in roots:
        try:
            st = top.lstat()
        except FileNotFoundError:
            continue
        rel = top.relative_to(base).as_posix()
        todo = [(str(top), rel)]
        yield rel, st, stat.S_ISDIR(st.st_mode), stat.S_ISREG(st.st_mode)
        while todo:
            path, prefix = todo.pop()
            with os.scandir(path) as listing:
                for entry in listing:
                    st = entry.stat(follow_symlinks=False)
                    is_dir = stat.S_ISDIR(st.st_mode)
                    rel = f"{prefix}/{entry.name}"
                    yield rel, st, is_dir, stat.S_ISREG(st.st_mode)
                    if is_dir:
                        todo.append((entry.path, rel))


def snapshot(roots: list[Path], base: Path) -> State:
    """A digest of each entry below ``roots`` (path relative to ``base``, inode; a file's
    size and mtime too), sorted: what :func:`changed` compares against."""
    return array("Q", sorted(_key(rel, st, d) for rel, st, d, _ in _entries(roots, base)))


def _had(before: State, key: int) -> bool:
    at = bisect.bisect_left(before, key)
    return at < len(before) and before[at] == key


def changed(roots: list[Path], base: Path, before: State) -> dict[str, TreeEntry]:
    """Directories and regular files below ``roots`` that are new or changed since ``before``."""
    tree: dict[str, TreeEntry] = {}
    for rel, st, is_dir, regular in _entries(roots, base):
        if _had(before, _key(rel, st, is_dir)):
            continue
        if is_dir:
            tree[rel] = TreeEntry(True)
        elif regular:
            tree[rel] = TreeEntry(False, (base / rel).read_bytes())
    # A changed file inside an existing directory needs that directory in the floor tree
    # (up to the result's own root; what lies above it is the harness's).
    tops = [root.relative_to(base).as_posix() for root in roots]

    def inside(rel: str) -> bool:
        return any(rel == top or rel.startswith(top + "/") for top in tops)

    for rel in list(tree):
        parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
        while parent and inside(parent) and parent not in tree:
            tree[parent] = TreeEntry(True)
            parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
    return tree


def measure(tree: dict[str, TreeEntry], workdir: Path, median_ms: float | None) -> dict[str, Any]:
    """Time writing ``tree`` plainly below ``workdir``; the operation's ratio to it."""
    if not tree:
        return {
            "ms_per_repo": None,
            "ratio": None,
            "reason": "the floor round failed or wrote nothing",
        }
    dirs = sorted((p for p, e in tree.items() if e.is_dir), key=lambda p: p.count("/"))
    files = [(p, e.data) for p, e in tree.items() if not e.is_dir]
    times_ns = []
    for k in range(FLOOR_ROUNDS):
        base = workdir / "floor" / str(k)
        for rel in tree:
            # The containers above the result exist before the timed part, as they did
            # for the operation.
            if "/" in rel and rel.rsplit("/", 1)[0] not in tree:
                (base / rel).parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter_ns()
        for d in dirs:
            os.mkdir(base / d)
        for rel, data in files:
            fd = os.open(base / rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, data)
            os.close(fd)
        times_ns.append(time.perf_counter_ns() - start)
    floor_ms = statistics.median(times_ns) / 1e6
    return {
        "ms_per_repo": floor_ms,
        "ratio": median_ms / floor_ms if median_ms and floor_ms else None,
        "rounds": FLOOR_ROUNDS,
        "dirs": len(dirs),
        "files": len(files),
        "bytes": sum(len(d) for _, d in files),
        "method": METHOD,
    }
