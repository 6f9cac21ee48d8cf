"""What a tree takes on disk, counted the way ``du`` counts: content, directory and
allocated bytes and inodes, each inode once; large trees walked in several processes."""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import stat
from dataclasses import dataclass, field
from pathlib import Path

from vcsbench.process import as_helper


@dataclass(frozen=True)
class Footprint:
    """What a tree takes on disk, counted the way ``du`` counts (each inode once).

    File content (regular files and symlinks) and directory sizes are apart: directory
    ``st_size`` is the filesystem's (4 KiB per directory on ext4, 0 or entry-sized on
    tmpfs), so only ``content_bytes`` compares across filesystems.
    """

    content_bytes: int
    dir_bytes: int
    allocated_bytes: int
    inodes: int

    @property
    def apparent_bytes(self) -> int:
        return self.content_bytes + self.dir_bytes


PARALLEL_MIN = 256
"""Entries below the given paths from which :func:`footprint` walks in several processes."""


@dataclass
class _Tally:
    """A walk's running count; a file with several links is kept by inode, to be counted
    once however many walks meet it."""

    content: int = 0
    dirs: int = 0
    allocated: int = 0
    inodes: int = 0
    linked: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)

    def count(self, st: os.stat_result) -> None:
        if stat.S_ISDIR(st.st_mode):  # a directory has one name: it is met once
            self.dirs += st.st_size
            self.allocated += st.st_blocks * 512
            self.inodes += 1
        elif st.st_nlink > 1:
            self.linked[(st.st_dev, st.st_ino)] = (st.st_size, st.st_blocks * 512)
        else:
            self.content += st.st_size
            self.allocated += st.st_blocks * 512
            self.inodes += 1

    def add(self, other: _Tally) -> None:
        self.content += other.content
        self.dirs += other.dirs
        self.allocated += other.allocated
        self.inodes += other.inodes
        self.linked.update(other.linked)

    def footprint(self) -> Footprint:
        linked_content = sum(size for size, _ in self.linked.values())
        linked_allocated = sum(blocks for _, blocks in self.linked.values())
        return Footprint(
            self.content + linked_content,
            self.dirs,
            self.allocated + linked_allocated,
            self.inodes + len(self.linked),
        )


def _walk(units: list[str]) -> _Tally:
    """Each of ``units`` and everything below it (no symlink followed)."""
    tally = _Tally()
    stack: list[str] = []
    for unit in units:
        try:
            st = os.lstat(unit)
        except FileNotFoundError:
            continue
        tally.count(st)
        if stat.S_ISDIR(st.st_mode):
            stack.append(unit)
        while stack:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    st = entry.stat(follow_symlinks=False)
                    tally.count(st)
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(entry.path)
    return tally


def _walk_in_processes(units: list[str], processes: int) -> _Tally:
    """:func:`_walk` of ``units`` split among this process and ``processes - 1`` forked
    ones (a tree of many repositories: the kernel's lookups are most of the cost, and they
    run on every core). A walker that fails fails the whole count."""
    chunks = [units[i::processes] for i in range(processes)]
    children: list[tuple[int, int]] = []
    for chunk in chunks[1:]:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the walker: its count down the pipe, then gone (no cleanup of others)
            code = 1
            try:
                os.close(read_end)
                as_helper()
                try:
                    answer: object = _walk(chunk)
                except OSError as exc:
                    answer = f"{exc.strerror or exc}: {exc.filename}"
                with os.fdopen(write_end, "wb") as pipe:
                    pipe.write(pickle.dumps(answer))
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        children.append((pid, read_end))
    total = _Tally()
    finished = False
    try:
        total.add(_walk(chunks[0]))
        finished = True
    finally:
        failure = ""
        for pid, read_end in children:
            if not finished:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            with os.fdopen(read_end, "rb") as pipe:
                data = pipe.read()
            os.waitpid(pid, 0)
            if not finished:
                continue
            answer = pickle.loads(data) if data else "a walker ended without its count"
            if isinstance(answer, _Tally):
                total.add(answer)
            else:
                failure = failure or str(answer)
    if failure:
        raise OSError(failure)
    return total


def footprint(*paths: Path, roots: bool = True, processes: int | None = None) -> Footprint:
    """Content, directory and allocated bytes and inodes below ``paths``.

    ``paths`` themselves are counted too unless ``roots`` is false (a container whose
    entries are what is measured). Counts each inode once, as ``du`` does, so
    hard-linked objects are not doubled. A path that does not exist counts nothing.
    The entries below ``paths`` are walked in ``processes`` processes (by default one per
    core when there are :data:`PARALLEL_MIN` of them or more).
    """
    total = _Tally()
    units: list[str] = []
    for path in dict.fromkeys(paths):
        try:
            top = os.lstat(path)
        except FileNotFoundError:
            continue
        if roots:
            total.count(top)
        if stat.S_ISDIR(top.st_mode):
            with os.scandir(path) as entries:
                units.extend(entry.path for entry in entries)
    if processes is None:
        processes = len(os.sched_getaffinity(0)) if len(units) >= PARALLEL_MIN else 1
    processes = max(1, min(processes, len(units)))
    total.add(_walk(units) if processes == 1 else _walk_in_processes(units, processes))
    return total.footprint()
