"""The bare calls and the filesystem the yardstick times (``tools/bareloop.py``): a fresh
tmpfs or loop-mounted ext4, made as vcsbench makes one; one operation's library calls and
nothing else (pygit2, Subversion's bindings); vcsbench's canary, done the same way. It
imports no vcsbench code: it is the yardstick's work, not the instrument."""

from __future__ import annotations

import ctypes
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

BACKENDS = ("git-pygit2", "svn-fs")
OPS = ("create", "create+commit", "commit")
FIRST = {"test.txt": b"hello world"}
CHANGE = {
    "test.txt": b"replaced by vcsbench\n" + b"hello world"[::-1],
    "vcsbench-added.txt": b"added by vcsbench\n",
}
IMAGE_BYTES = 8 << 30  # vcsbench's default image size, made and formatted the same way
EXT4_MKFS = ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"]


@contextmanager
def filesystem(kind: str) -> Iterator[Path]:
    """A fresh tmpfs or a fresh loop-mounted ext4, removed after."""
    top = Path(tempfile.mkdtemp(prefix="bareloop-"))
    mnt = top / "mnt"
    mnt.mkdir()
    device = None
    try:
        if kind == "tmpfs":
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2G", "bareloop", mnt], check=True)
        else:
            image = top / "ext4.img"
            with open(image, "wb") as handle:
                handle.truncate(IMAGE_BYTES)
            subprocess.run([*EXT4_MKFS, image], check=True)
            device = subprocess.run(
                ["losetup", "--find", "--show", image], check=True, capture_output=True, text=True
            ).stdout.strip()
            subprocess.run(["mount", device, mnt], check=True)
        try:
            yield mnt
        finally:
            subprocess.run(["umount", mnt], check=True)
    finally:
        if device:
            subprocess.run(["losetup", "-d", device], check=True)
        for leftover in (top / "ext4.img", mnt):
            if leftover.is_file():
                leftover.unlink()
            elif leftover.is_dir():
                leftover.rmdir()
        top.rmdir()


def syncfs(path: Path) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.syncfs(fd) != 0:
            raise OSError(ctypes.get_errno(), "syncfs")
    finally:
        os.close(fd)


def git_calls() -> dict[str, Callable[[str], object]]:
    import pygit2

    blob_mode = pygit2.enums.FileMode.BLOB

    def init(path: str) -> object:
        return pygit2.init_repository(path, bare=True)

    def commit(
        repo: pygit2.Repository, files: dict[str, bytes], parents: list[object], base: object
    ) -> None:
        builder = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
        for name, data in files.items():
            builder.insert(name, repo.create_blob(data), blob_mode)
        signature = pygit2.Signature("vcsbench", "vcsbench@localhost")
        repo.create_commit("HEAD", signature, signature, "m", builder.write(), parents)

    def create_commit(path: str) -> None:
        commit(init(path), FIRST, [], None)

    def later_commit(path: str) -> None:
        repo = pygit2.Repository(path)
        head = repo.head.peel(pygit2.Commit)
        commit(repo, CHANGE, [head.id], head.tree)

    def check(path: str, files: dict[str, bytes]) -> None:
        tree = pygit2.Repository(path).head.peel(pygit2.Tree)
        found = {entry.name: entry.data for entry in tree}
        if found != files:
            raise SystemExit(f"{path}: HEAD holds {sorted(found)}, not {sorted(files)}")

    return {"create": init, "create+commit": create_commit, "commit": later_commit, "check": check}


def svn_calls() -> dict[str, Callable[..., object]]:
    import svn.core
    import svn.fs
    import svn.repos

    def commit(repos: object, youngest: int, files: dict[str, bytes], pool: object) -> None:
        txn = svn.repos.fs_begin_txn_for_commit2(repos, youngest, {"svn:log": b"m"}, pool)
        root = svn.fs.txn_root(txn, pool)
        for name, data in files.items():
            if svn.fs.check_path(root, name, pool) == svn.core.svn_node_none:
                svn.fs.make_file(root, name, pool)
            stream = svn.fs.apply_text(root, name, None, pool)
            svn.core.svn_stream_write(stream, data)
            svn.core.svn_stream_close(stream)
        svn.repos.fs_commit_txn(repos, txn, pool)

    def init(path: str) -> None:
        pool = svn.core.Pool()
        svn.repos.create(path, None, None, None, {}, pool)
        pool.destroy()

    def create_commit(path: str) -> None:
        pool = svn.core.Pool()
        commit(svn.repos.create(path, None, None, None, {}, pool), 0, FIRST, pool)
        pool.destroy()

    def later_commit(path: str) -> None:
        pool = svn.core.Pool()
        repos = svn.repos.open(path, pool)
        commit(repos, svn.fs.youngest_rev(svn.repos.fs(repos), pool), CHANGE, pool)
        pool.destroy()

    def check(path: str, files: dict[str, bytes]) -> None:
        pool = svn.core.Pool()
        fs = svn.repos.fs(svn.repos.open(path, pool))
        root = svn.fs.revision_root(fs, svn.fs.youngest_rev(fs, pool), pool)
        found = {
            name.decode() if isinstance(name, bytes) else name: svn.core.Stream(
                svn.fs.file_contents(root, name, pool)
            ).read()
            for name in svn.fs.dir_entries(root, "", pool)
        }
        pool.destroy()
        if found != files:
            raise SystemExit(
                f"{path}: youngest revision holds {sorted(found)}, not {sorted(files)}"
            )

    return {"create": init, "create+commit": create_commit, "commit": later_commit, "check": check}


def copy_tree(source: Path, target: Path) -> None:
    """Directories made and files written again, parents first: a copy by plain system
    calls (no times or owners carried over), as vcsbench writes its rounds' repositories."""
    for top, _dirs, names in os.walk(source):
        here = target / Path(top).relative_to(source)
        here.mkdir(mode=Path(top).stat().st_mode & 0o7777)
        for name in names:
            fd = os.open(here / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(fd, (Path(top) / name).read_bytes())
            finally:
                os.close(fd)
            os.chmod(here / name, (Path(top) / name).stat().st_mode & 0o7777)


CANARY_FILES, CANARY_SIZE = 10, 4096
"""vcsbench's canary, done the same way (vcsbench/bench/canary.py): after every round (as
vcsbench's benchmarks of up to 200 rounds), outside its timing, a directory, 10 files of
4 KiB written, then the first opened again and fsync'd."""
CANARY_DATA = b"canary\n" * (CANARY_SIZE // 7) + b"c" * (CANARY_SIZE % 7)
"""The bytes of each of the canary's files, vcsbench's."""


def canary_once(root: Path, index: int) -> float:
    here = root / f"canary-{index}"
    start = time.perf_counter_ns()
    here.mkdir()
    for i in range(CANARY_FILES):
        fd = os.open(here / f"f{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, CANARY_DATA)
        finally:
            os.close(fd)
    fd = os.open(here / "f0", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    took = (time.perf_counter_ns() - start) / 1e6
    for i in range(CANARY_FILES):
        if (here / f"f{i}").stat().st_size != CANARY_SIZE:
            raise SystemExit(f"{here}: the canary's file {i} is not {CANARY_SIZE} bytes")
        (here / f"f{i}").unlink()
    here.rmdir()
    return took
