"""Removing a tree vcsbench made, never across a mount point.

A directory below the tree that something is mounted on (a bind mount into a killed
run's work directory, a filesystem someone else mounted there) is neither descended into
nor removed: it is reported, and the directories above it stay (they are not empty).
Mount points are known two ways: from the mount table (a bind mount of the same
filesystem has the same device number) and by a device number other than the tree's.

The walk goes by descriptors (``openat`` with ``O_NOFOLLOW``, names removed relative to
their directory), so a symlink in the tree, or a directory swapped for one mid-walk, is
removed as a link and leads nowhere outside the tree. Descriptors are closed as each
directory is done: a long-lived process (the load engine) leaks none.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from vcsbench.sandbox.mounts import mounts_below

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: Path | str, last: str = "") -> list[str]:
    """Remove ``path`` and everything below it on its own filesystem. Returns what was
    left and why (empty: all of it is gone, or was never there). ``last``: a name in
    ``path`` removed only once everything else is (an ownership marker: while anything
    is left, the directory can still be proven, and removed later)."""
    path = Path(os.path.abspath(path))
    mounts = set(mounts_below(str(path)))
    if str(path) in mounts:
        return [f"{path} is a mount point: left as it is, with what is mounted there"]
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return []
    except OSError as exc:
        return [f"{path}: {exc.strerror}"]
    left: list[str] = []
    parent = os.open(path.parent, _DIR_FLAGS)
    try:
        if stat.S_ISDIR(st.st_mode):
            _remove_dir(parent, path.name, path, st.st_dev, mounts, left, last)
        else:
            _remove(parent, path.name, path, left)
    finally:
        os.close(parent)
    return left


def _remove(
    directory: int, name: str, path: Path, left: list[str], remove: Callable[..., None] = os.unlink
) -> bool:
    """``remove`` (unlink, or rmdir) ``name`` of ``directory`` (``path``); whether it went
    (a name already gone did); why not, in ``left``."""
    try:
        remove(name, dir_fd=directory)
    except FileNotFoundError:
        pass
    except OSError as exc:
        left.append(f"{path}: {exc.strerror}")
        return False
    return True


def _remove_dir(
    parent: int,
    name: str,
    path: Path,
    device: int,
    mounts: set[str],
    left: list[str],
    last: str = "",
) -> bool:
    """Remove directory ``name`` of ``parent`` (``path``) and its contents (``last`` of
    them after the others); whether it went."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        return True
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # no longer a directory: a link now
            return _remove(parent, name, path, left)
        left.append(f"{path}: {exc.strerror}")
        return False
    empty = True
    try:
        if os.fstat(fd).st_dev != device or str(path) in mounts:
            left.append(f"{path} is a mount point: left as it is, with what is mounted there")
            return False
        with os.scandir(fd) as listing:
            entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in listing]
        entries.sort(key=lambda entry: entry[0] == last)
        for child, is_dir in entries:
            if child == last and not empty:
                break
            if is_dir:
                empty &= _remove_dir(fd, child, path / child, device, mounts, left)
            else:
                empty &= _remove(fd, child, path / child, left)
    finally:
        os.close(fd)
    return empty and _remove(parent, name, path, left, os.rmdir)
