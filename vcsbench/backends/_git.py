"""What both git access paths share: the tool's environment and independent readers."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from vcsbench.backends.base import Backend, run_tool
from vcsbench.errors import VcsbenchError

IDENTITY = {
    "GIT_AUTHOR_NAME": "vcsbench",
    "GIT_AUTHOR_EMAIL": "vcsbench@localhost",
    "GIT_COMMITTER_NAME": "vcsbench",
    "GIT_COMMITTER_EMAIL": "vcsbench@localhost",
}


def git_env() -> dict[str, str]:
    """Environment for git subprocesses: no system or user config, a fixed identity.

    A user's ~/.gitconfig (hooks, fsync, gc settings) would silently change what is
    measured; only the backend's own options apply.
    """
    env = dict(os.environ)
    env.update(IDENTITY)
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"})
    return env


class TemplateDir:
    """The ``template`` option: a directory path, ``empty`` (no sample hooks) or default."""

    def __init__(self, value: str) -> None:
        self.value = value
        self._empty: str | None = None
        if value not in ("", "empty") and not Path(value).is_dir():
            raise VcsbenchError(
                f"option template={value!r}: not a directory; use a directory path, "
                "'empty' (no sample hooks) or leave it unset for the default"
            )

    def path(self, temp_root: Path | None = None) -> str | None:
        if self.value == "":
            return None
        if self.value == "empty":
            if self._empty is None:
                self._empty = tempfile.mkdtemp(prefix="vcsbench-empty-template-", dir=temp_root)
            return self._empty
        return self.value

    def close(self) -> None:
        if self._empty is not None:
            shutil.rmtree(self._empty, ignore_errors=True)
            self._empty = None


def git_dir_of(path: Path) -> Path:
    """The git directory of a bare repository or of a clone with a work tree."""
    return path / ".git" if (path / ".git").is_dir() else path


def loose_objects(path: Path) -> int:
    """Loose object files in the repository, counted in its object directory."""
    objects = git_dir_of(path) / "objects"
    return sum(
        1 for fan in objects.iterdir() if len(fan.name) == 2 and fan.is_dir() for _ in fan.iterdir()
    )


def read_with_git_cli(repo: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Contents of ``paths`` at HEAD, read by ``git cat-file --batch`` (one process)."""
    git_dir = git_dir_of(repo)
    request = b"".join(b"HEAD:" + p.encode() + b"\n" for p in paths)
    out = run_tool(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"], env=git_env(), stdin=request
    )
    contents: dict[str, bytes | None] = {}
    pos = 0
    for rel in paths:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if header[-1] == b"missing" or header[1] != b"blob":
            contents[rel] = None
            continue
        size = int(header[2])
        contents[rel] = out[pos : pos + size]
        pos += size + 1
    return contents


def read_with_pygit2(repo_path: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Contents of ``paths`` at HEAD, read by libgit2 (pygit2)."""
    import pygit2

    repo = pygit2.Repository(str(repo_path))
    if repo.head_is_unborn:
        return dict.fromkeys(paths)
    tree = repo.head.peel(pygit2.Commit).tree
    contents: dict[str, bytes | None] = {}
    for rel in paths:
        try:
            obj = repo[tree[rel].id]
        except KeyError:
            contents[rel] = None
            continue
        contents[rel] = obj.data if isinstance(obj, pygit2.Blob) else None
    return contents


def read_index_with_pygit2(wc: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Contents of ``paths`` as staged in the index of ``wc``, read by libgit2 (pygit2)."""
    import pygit2

    repo = pygit2.Repository(str(wc))
    index = repo.index
    contents: dict[str, bytes | None] = {}
    for rel in paths:
        try:
            blob = repo.get(index[rel].id)
        except KeyError:
            blob = None
        contents[rel] = blob.data if isinstance(blob, pygit2.Blob) else None
    return contents


class GitBackend(Backend):
    """What both git access paths share: the ``template`` option and its cleanup."""

    vcs = "git"

    def check_options(self) -> None:
        self.template = TemplateDir(self.options["template"])

    def ready(self, temp_root: Path) -> None:
        super().ready(temp_root)
        self.template.path(temp_root)

    def close(self) -> None:
        self.template.close()

    def head_file(self, path: Path) -> Path:
        return git_dir_of(path) / "HEAD"

    def storage_problems(self, path: Path) -> list[str]:
        objects = git_dir_of(path) / "objects"
        problems = []
        loose = loose_objects(path)
        if loose:
            problems.append(f"{loose} loose objects left in {objects}")
        if not any((objects / "pack").glob("pack-*.pack")):
            problems.append(f"no pack in {objects / 'pack'}")
        return problems
