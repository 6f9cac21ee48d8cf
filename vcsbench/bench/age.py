"""Pre-aged sandboxes: N repositories of the backend under test before the first round.

"What does the next repository cost when a million exist?" needs the million first. One
repository is made by the backend's own ``create``; its files are read once and written
again at each of the N places the rounds' layout gives (the names the rounds would use,
before theirs), by plain ``mkdir``/``write`` in several processes: a copy costs a few
system calls per file, not a VCS call. Untimed; the results record N, the method and how
long the filling took.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from vcsbench.backends import Backend
from vcsbench.bench.operations import RoundPaths

CHUNK = 2000
"""Repositories per task handed to a filling process."""

Progress = Callable[..., None]
UNIT = "repositories filled in"


@dataclass(frozen=True)
class Entry:
    rel: str
    kind: str
    """``dir``, ``file`` or ``link``."""
    data: bytes
    mode: int


def snapshot(root: Path) -> list[Entry]:
    """Every entry below ``root``, parents before children, as what is needed to write it
    again: directories and their modes, file contents, symlink targets."""
    entries: list[Entry] = []
    for directory, subdirs, names in os.walk(root):
        subdirs.sort()
        base = Path(directory)
        for name in sorted(subdirs) + sorted(names):
            path = base / name
            rel = path.relative_to(root).as_posix()
            st = path.lstat()
            if path.is_symlink():
                entries.append(Entry(rel, "link", os.readlink(path).encode(), 0))
            elif path.is_dir():
                entries.append(Entry(rel, "dir", b"", st.st_mode & 0o7777))
            else:
                entries.append(Entry(rel, "file", path.read_bytes(), st.st_mode & 0o7777))
    entries.sort(key=lambda e: (e.rel.count("/"), e.kind != "dir", e.rel))
    return entries


def write_copy(entries: list[Entry], target: Path, mode: int) -> None:
    """Write ``entries`` below new directory ``target`` (its parents made as needed)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    os.mkdir(target, mode)
    for entry in entries:
        path = os.path.join(target, entry.rel)
        if entry.kind == "dir":
            os.mkdir(path, entry.mode)
        elif entry.kind == "link":
            os.symlink(entry.data.decode(), path)
        else:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, entry.mode)
            try:
                os.write(fd, entry.data)
            finally:
                os.close(fd)


_ENTRIES: list[Entry] = []
_MODE = 0o755


def _fill_chunk(task: tuple[Path, str, int, int]) -> int:
    workdir, layout, first, last = task
    for index in range(first, last):
        write_copy(_ENTRIES, RoundPaths.of(workdir, index, layout).repo, _MODE)
    return last - first


def fill(
    backend: Backend,
    workdir: Path,
    count: int,
    layout: str,
    progress: Progress | None = None,
    processes: int | None = None,
) -> dict[str, object]:
    """Make ``count`` repositories at the layout's places for rounds 0 .. count-1."""
    global _ENTRIES, _MODE
    start = time.perf_counter()
    seed = workdir / "seeds" / "age"
    seed.parent.mkdir(parents=True, exist_ok=True)
    backend.create(seed)
    _ENTRIES = snapshot(seed)
    _MODE = seed.stat().st_mode & 0o7777
    workers = processes or os.cpu_count() or 1
    tasks = [(workdir, layout, i, min(i + CHUNK, count)) for i in range(0, count, CHUNK)]
    done = 0
    if workers > 1 and len(tasks) > 1:
        with get_context("fork").Pool(workers) as pool:
            for made in pool.imap_unordered(_fill_chunk, tasks):
                done += made
                if progress is not None:
                    progress(done, count, time.perf_counter() - start, unit=UNIT)
    else:
        for task in tasks:
            done += _fill_chunk(task)
            if progress is not None:
                progress(done, count, time.perf_counter() - start, unit=UNIT)
    moved = type(backend).moved is not Backend.moved
    if moved:  # a repository that holds its own path (git-markus) is told where it is
        for index in range(count):
            backend.moved(RoundPaths.of(workdir, index, layout).repo)
    return {
        "repos": count,
        "entries_per_repo": len(_ENTRIES) + 1,
        "fill_s": time.perf_counter() - start,
        "processes": workers if len(tasks) > 1 else 1,
        "method": "one repository made by the backend's create, its files written again at "
        "each place (mkdir/write, no VCS call)"
        + ("; each then told its new path (Backend.moved)" if moved else ""),
    }
