"""What both git access paths share: the tool's environment and independent readers."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from vcsbench.backends._git_loose import NotLoose, git_dir_of, read_loose_objects
from vcsbench.backends.base import COMMIT_TIME, Backend
from vcsbench.backends.changes import GIT_KINDS
from vcsbench.backends.tools import ToolError, run_tool
from vcsbench.errors import VcsbenchError

IDENTITY = {
    "GIT_AUTHOR_NAME": "vcsbench",
    "GIT_AUTHOR_EMAIL": "vcsbench@localhost",
    "GIT_COMMITTER_NAME": "vcsbench",
    "GIT_COMMITTER_EMAIL": "vcsbench@localhost",
}


DATED = {"GIT_AUTHOR_DATE": f"{COMMIT_TIME} +0000", "GIT_COMMITTER_DATE": f"{COMMIT_TIME} +0000"}
"""A benchmark's git commits' dates (``COMMIT_TIME``); a load's clients commit now, as
students do, and a replay with the source's own."""


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


def read_git_objects(repo: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Loose objects read by vcsbench itself (in-process, no git code); ``git cat-file``
    where the repository holds packs."""
    try:
        return read_loose_objects(repo, paths)
    except NotLoose:
        return read_with_git_cli(repo, paths)


def _open_as_reader(repo_path: Path) -> Any:
    """The repository, opened by libgit2 whoever owns it: a remote variant's server
    (Apache) owns what it wrote, and libgit2 refuses another user's repository unless
    told. Only for this open: the backends' own calls keep libgit2's default."""
    import pygit2

    option = getattr(pygit2, "GIT_OPT_SET_OWNER_VALIDATION", None)
    if option is None or repo_path.stat().st_uid == os.geteuid():
        return pygit2.Repository(str(repo_path))
    pygit2.option(option, 0)
    try:
        return pygit2.Repository(str(repo_path))
    finally:
        pygit2.option(option, 1)


def read_with_pygit2(repo_path: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Contents of ``paths`` at HEAD, read by libgit2 (pygit2)."""
    import pygit2

    repo = _open_as_reader(repo_path)
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
    place_options: ClassVar[frozenset[str]] = frozenset({"template"})

    def check_options(self) -> None:
        self.template = TemplateDir(self.options["template"])

    def ready(self, temp_root: Path) -> None:
        super().ready(temp_root)
        self.template.path(temp_root)

    def close(self) -> None:
        self.template.close()

    def head_file(self, path: Path) -> Path:
        return git_dir_of(path) / "HEAD"

    def revision_id(self, path: Path, revision: int) -> str:
        return first_parent_id(path, revision)

    def kept_by(self) -> str:
        return "git gc (git's own maintenance: every object packed, refs packed)"

    def keep(self, path: Path) -> None:
        # The PATH's git whatever wrote the repository: a server's maintenance is git's.
        # safe.directory: a remote variant's server owns what it wrote.
        run_tool(["git", "-c", "safe.directory=*", "-C", str(path), "gc", "--quiet"], env=git_env())

    def storage_problems(self, path: Path) -> list[str]:
        objects = git_dir_of(path) / "objects"
        problems = []
        loose = loose_objects(path)
        if loose:
            problems.append(f"{loose} loose objects left in {objects}")
        if not any((objects / "pack").glob("pack-*.pack")):
            problems.append(f"no pack in {objects / 'pack'}")
        return problems


def fast_import_path(rel: str) -> bytes:
    """A path as ``git fast-import`` takes it: a C-style quoted string (payload paths hold
    no newline)."""
    return b'"' + rel.encode().replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'


def nth_first_parent(commits: list[Any], revision: int, where: Path) -> Any:
    if not 1 <= revision <= len(commits):
        raise ValueError(f"{where} has {len(commits)} revisions, not {revision}")
    return commits[revision - 1]


def first_parent_id(repo: Path, revision: int) -> str:
    """The ``revision``-th commit's id (first parents, from the root): counted by ``git
    rev-list --count`` and named as ``HEAD~K``, so a long history is never listed whole."""
    git = ["git", "--git-dir", str(git_dir_of(repo))]
    count = int(run_tool([*git, "rev-list", "--first-parent", "--count", "HEAD"], env=git_env()))
    if not 1 <= revision <= count:
        raise ValueError(f"{repo} has {count} revisions, not {revision}")
    named = f"HEAD~{count - revision}^{{commit}}"
    return run_tool([*git, "rev-parse", "--verify", named], env=git_env()).decode().strip()


@contextlib.contextmanager
def branch_at(repo: Path, commit: str) -> Iterator[None]:
    """The repository's current branch pointed at ``commit`` while the block runs (a clone
    made then holds nothing newer), and back at its tip afterwards (the branch's reflog,
    where it has one, keeps a line of each move)."""
    git = ["git", "--git-dir", str(git_dir_of(repo))]
    ref = run_tool([*git, "symbolic-ref", "HEAD"], env=git_env()).decode().strip()
    tip = run_tool([*git, "rev-parse", "HEAD"], env=git_env()).decode().strip()
    run_tool([*git, "update-ref", "--no-deref", ref, commit], env=git_env())
    try:
        yield
    finally:
        run_tool([*git, "update-ref", "--no-deref", ref, tip], env=git_env())


def reachable_with_pygit2(repo_path: Path) -> tuple[set[str], set[str]]:
    """Read by libgit2, not git: the id of every commit reachable from a ref, and of every
    object the repository holds (loose or packed)."""
    import pygit2

    repo = _open_as_reader(repo_path)
    commits: set[str] = set()
    for name in repo.references:
        target = repo.references[name].resolve().target
        if isinstance(repo[target], pygit2.Commit):
            commits.update(str(c.id) for c in repo.walk(target))
    return commits, {str(oid) for oid in repo.odb}


def tree_with_git_cli(repo: Path, revision: int) -> dict[str, tuple[str, str]]:
    """The ``revision``-th commit's tree (first parents, from the root), read by ``git
    ls-tree`` and ``git cat-file --batch``: every file's kind and SHA-256, each blob
    hashed as it streams by (a tree of any size is never held whole)."""
    git = ["git", "--git-dir", str(git_dir_of(repo))]
    commit = first_parent_id(repo, revision)
    out = run_tool([*git, "ls-tree", "-r", "-z", "--full-tree", commit], env=git_env())
    entries: list[tuple[str, str, str]] = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, _kind, oid = meta.split()
        if int(mode, 8) in GIT_KINDS:
            entries.append((name.decode(), GIT_KINDS[int(mode, 8)], oid.decode()))
    del out
    tree: dict[str, tuple[str, str]] = {}
    with tempfile.TemporaryFile() as request, tempfile.TemporaryFile() as errors:
        request.writelines(oid.encode() + b"\n" for _, _, oid in entries)
        request.seek(0)
        with subprocess.Popen(
            [*git, "cat-file", "--batch"], stdin=request, stdout=subprocess.PIPE,
            stderr=errors, env=git_env(),
        ) as proc:  # fmt: skip
            assert proc.stdout is not None
            for rel, kind, want in entries:
                header = proc.stdout.readline().split()
                if len(header) != 3 or header[0].decode() != want:
                    break  # git's own message, or the exit status, says why
                digest, left = hashlib.sha256(), int(header[2])
                while left:
                    chunk = proc.stdout.read(min(left, 1 << 20))
                    if not chunk:
                        break
                    digest.update(chunk)
                    left -= len(chunk)
                proc.stdout.read(1)  # the newline after each object
                tree[rel] = (kind, digest.hexdigest())
            proc.stdout.read()
        errors.seek(0)
        if proc.returncode != 0 or len(tree) != len(entries):
            said = errors.read(4096).decode(errors="replace").strip()
            raise ToolError(
                f"git cat-file --batch exited {proc.returncode} after {len(tree)} of "
                f"{len(entries)} objects: {said or 'no message'}"
            )
    return tree


def tree_with_pygit2(repo_path: Path, revision: int) -> dict[str, tuple[str, str]]:
    """The ``revision``-th commit's tree (first parents, from the root), read by libgit2."""
    import pygit2

    repo = _open_as_reader(repo_path)
    chain = []
    commit = repo.head.peel(pygit2.Commit)
    while True:
        chain.append(commit)
        if not commit.parent_ids:
            break
        commit = repo[commit.parent_ids[0]]
    chain.reverse()
    commit = nth_first_parent(chain, revision, repo_path)
    tree: dict[str, tuple[str, str]] = {}

    def walk(node: Any, prefix: str) -> None:
        for entry in node:
            rel = prefix + entry.name
            if entry.type_str == "tree":
                walk(repo[entry.id], rel + "/")
                continue
            kind = GIT_KINDS.get(entry.filemode)
            if kind is not None:
                tree[rel] = (kind, hashlib.sha256(repo[entry.id].data).hexdigest())

    walk(commit.tree, "")
    return tree
