"""Copies of a repository made once: what a round's preparation and a pre-aged sandbox
write instead of calling the VCS again.

The repository is read once (:func:`snapshot`) and written again at each place
(:func:`write_copy`) by plain ``mkdir``/``write``: a few system calls per file, not a VCS
call. Each copy holds the backend's own bytes; what differs from a repository the backend
made in place is what no VCS reads as content (inode numbers, times) and what the copies
share (a Subversion repository's UUID). A backend whose repository holds its own path, or
stat data of its files, is told where the copy is (``Backend.moved``).

What else differs is the kernel's memory of the paths: a library that has just made a
repository has looked up its names (those there and those not), and a copy has not. The
first operation on a copy pays those lookups: on ext4 (one process, 400 rounds each,
alternating) a git-pygit2 commit into a copy took 0.941 ms, into a repository made in
place 0.887 ms, into a copy opened once untimed 0.897 ms; svn-fs +2.7 %, tmpfs +1.7 %.
Rounds measure the copy as it is written -- a repository met by a process that has not
looked at it yet, as a server meets one of thousands.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vcsbench.backends.base import Backend
    from vcsbench.workload.payloads import Payload


@dataclass(frozen=True)
class Entry:
    rel: str
    kind: str
    """``dir``, ``file`` or ``link``."""
    data: bytes
    mode: int


SEED_MEMORY_BYTES = 64 << 20
"""What a seed may hold in memory (its files' bytes, and about 200 bytes an entry); a
larger one -- a replay of many thousands of commits -- is copied from its directory on
disk at each round, so memory stays flat in a history's length."""
ENTRY_COST = 200


def _over(root: Path, budget: int) -> bool:
    """Whether ``root``'s entries would take more than ``budget`` bytes held, counted from
    their sizes alone (nothing kept while counting: a seed too large costs no memory)."""
    held = 0
    for directory, subdirs, names in os.walk(root):
        for name in subdirs + names:
            st = os.lstat(os.path.join(directory, name))
            held += ENTRY_COST + len(directory) + len(name)
            held += st.st_size if stat.S_ISREG(st.st_mode) else 0
            if held > budget:
                return True
    return False


def snapshot(root: Path, budget: int = SEED_MEMORY_BYTES) -> list[Entry] | None:
    """Every entry below ``root``, parents before children, as what is needed to write it
    again: directories and their modes, file contents, symlink targets. None when they
    would take more than ``budget`` bytes of memory (counted from their sizes before a
    file is read)."""
    if _over(root, budget):
        return None
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


def copy_tree(root: Path, target: Path, mode: int) -> None:
    """What :func:`write_copy` writes, read from ``root`` as it goes (no recursion; a
    file's bytes through the kernel's copy, never whole in memory)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    os.mkdir(target, mode)
    todo = [""]
    while todo:
        here = todo.pop()
        with os.scandir(root / here) as listing:
            found = sorted(listing, key=lambda e: e.name)
        for entry in found:
            rel = f"{here}/{entry.name}" if here else entry.name
            st = entry.stat(follow_symlinks=False)
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), target / rel)
            elif entry.is_dir(follow_symlinks=False):
                os.mkdir(target / rel, st.st_mode & 0o7777)
                todo.append(rel)
            else:
                with open(entry.path, "rb") as src:
                    fd = os.open(target / rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                                 st.st_mode & 0o7777)  # fmt: skip
                    with open(fd, "wb") as dst:
                        shutil.copyfileobj(src, dst)


@dataclass(frozen=True)
class Seed:
    """A repository read into memory, to be written again at each round's place; one
    larger than ``SEED_MEMORY_BYTES`` is copied from its directory each time."""

    entries: list[Entry] | None
    mode: int
    root: Path

    @classmethod
    def read(cls, root: Path) -> Seed:
        return cls(snapshot(root), root.stat().st_mode & 0o7777, root)

    @classmethod
    def held(cls, root: Path) -> Seed:
        """Read into memory whatever its size: for a directory that changes after."""
        return cls(snapshot(root, budget=sys.maxsize), root.stat().st_mode & 0o7777, root)

    @property
    def count(self) -> int:
        """The entries a copy writes (counted on disk when they are not held)."""
        if self.entries is not None:
            return len(self.entries)
        return sum(len(dirs) + len(files) for _, dirs, files in os.walk(self.root))

    def copy_to(self, target: Path) -> None:
        if self.entries is None:
            copy_tree(self.root, target, self.mode)
        else:
            write_copy(self.entries, target, self.mode)


REPLAY_FILE = "replay.json"
SHARED_SEEDS = "VCSBENCH_SHARED_SEEDS"
"""The environment variable naming where a run keeps the seeds its benchmarks built, for
its later benchmarks of the same backend variant: a directory of the run's own (a marked
sandbox the session makes, removes at its end, and ``cleanup`` removes after a SIGKILL),
set by the session, which replaces any value it finds, and inherited by the workers that
run rounds."""


REPLAY_PROGRESS: list[Callable[[int, int, float, str], None]] = []
"""The running benchmark's progress display (done, total, seconds, unit), where the session
set one: a replay of thousands of commits takes minutes before the first round."""


def shared_seed(backend: Backend, payload: Payload, name: str) -> Path | None:
    """Where the run keeps seed ``name`` of ``payload`` built by ``backend`` (its label,
    options and library versions), if the run keeps seeds."""
    where = os.environ.get(SHARED_SEEDS)
    if not where:
        return None
    key = json.dumps([backend.label, backend.versions(), payload.name, name], sort_keys=True)
    return Path(where) / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def publish(seed: Path, shared: Path) -> None:
    """Copy a seed just built (repository and replay figures) where the run keeps seeds:
    written aside and renamed, so a reader never meets half of one; the first of two
    builders to finish is kept."""
    aside = shared.with_name(f".{shared.name}-{os.getpid()}")
    Seed.read(seed / "building").copy_to(aside / "repo")
    if (seed / REPLAY_FILE).exists():
        (aside / REPLAY_FILE).write_bytes((seed / REPLAY_FILE).read_bytes())
    try:
        os.rename(aside, shared)
    except OSError:  # another process of the run published it first
        shutil.rmtree(aside, ignore_errors=True)
