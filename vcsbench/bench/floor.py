"""The floor: the same directories and files an operation left, written plainly.

What the last round created or changed under its result paths (never the scratch
space) is rewritten with mkdir/open/write/close in the same sandbox, ``FLOOR_ROUNDS``
times; the median is what the filesystem itself needs for that tree, and an operation's
median over it is its distance from the floor.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FLOOR_ROUNDS = 5
METHOD = (
    "mkdir + open/write/close of every directory and file the operation created or "
    "changed in its last round (repository and checkout, not scratch), same sandbox, "
    "no fsync"
)

State = dict[str, tuple[int, int, int]]


@dataclass(frozen=True)
class TreeEntry:
    is_dir: bool
    data: bytes = b""


def snapshot(roots: list[Path], base: Path) -> State:
    """(inode, size, mtime) of everything below ``roots``, keyed by path relative to ``base``."""
    state: State = {}
    for top in roots:
        if not top.exists():
            continue
        for path in [top, *top.rglob("*")]:
            st = path.lstat()
            state[path.relative_to(base).as_posix()] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return state


def changed(roots: list[Path], base: Path, before: State) -> dict[str, TreeEntry]:
    """Directories and regular files below ``roots`` that are new or changed since ``before``."""
    after = snapshot(roots, base)
    tree: dict[str, TreeEntry] = {}
    for rel, key in after.items():
        if before.get(rel) == key:
            continue
        path = base / rel
        if path.is_symlink():
            continue
        if path.is_dir():
            if rel not in before:
                tree[rel] = TreeEntry(True)
        elif path.is_file():
            tree[rel] = TreeEntry(False, path.read_bytes())
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
