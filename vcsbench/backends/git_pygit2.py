"""git through libgit2 in-process (pygit2): a bare repository, objects written directly.

This is how a server writes: no work tree, no index; blobs, trees and the commit are
created in the object database and HEAD's branch is moved.
"""

from __future__ import annotations

import functools
import importlib.metadata
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from vcsbench.backends._git import GitBackend, branch_at, read_git_objects, tree_with_git_cli
from vcsbench.backends.base import COMMIT_TIME
from vcsbench.backends.changes import GIT_MODES, Change, DigestTree
from vcsbench.backends.files import Files, verify_with
from vcsbench.backends.tools import Availability, parse_bool, tool_version

_BEFORE_ENUMS = {
    "Option.ENABLE_FSYNC_GITDIR": "GIT_OPT_ENABLE_FSYNC_GITDIR",
    "RepositoryInitFlag.MKPATH": "GIT_REPOSITORY_INIT_MKPATH",
    "RepositoryInitFlag.EXTERNAL_TEMPLATE": "GIT_REPOSITORY_INIT_EXTERNAL_TEMPLATE",
    "FileMode.TREE": "GIT_FILEMODE_TREE",
    "FileMode.BLOB": "GIT_FILEMODE_BLOB",
    "CheckoutStrategy.FORCE": "GIT_CHECKOUT_FORCE",
    "CheckoutStrategy.DONT_UPDATE_INDEX": "GIT_CHECKOUT_DONT_UPDATE_INDEX",
    "SortMode.TOPOLOGICAL": "GIT_SORT_TOPOLOGICAL",
    "FileStatus.WT_NEW": "GIT_STATUS_WT_NEW",
    "FileStatus.WT_MODIFIED": "GIT_STATUS_WT_MODIFIED",
    "FileStatus.INDEX_MODIFIED": "GIT_STATUS_INDEX_MODIFIED",
    "FileStatus.INDEX_NEW": "GIT_STATUS_INDEX_NEW",
    "FileStatus.WT_DELETED": "GIT_STATUS_WT_DELETED",
    "FileStatus.INDEX_DELETED": "GIT_STATUS_INDEX_DELETED",
}


@functools.cache
def _const(name: str) -> Any:
    """``pygit2.enums.<name>`` (pygit2 1.14 on), or the ``GIT_*`` constant older releases
    have (a ``git-pygit2[version=1.12.2]`` variant runs on them; 1.13 has ``enums`` with
    some of its groups only); looked up once."""
    import pygit2

    group, member = name.split(".")
    found = getattr(getattr(getattr(pygit2, "enums", None), group, None), member, None)
    return found if found is not None else getattr(pygit2, _BEFORE_ENUMS[name])


def _nest(files: Files) -> dict[str, Any]:
    """``{"a/b.txt": data}`` -> ``{"a": {"b.txt": data}}``."""
    root: dict[str, Any] = {}
    for rel, data in files.items():
        *dirs, name = rel.split("/")
        node = root
        for part in dirs:
            node = node.setdefault(part, {})
        node[name] = data
    return root


def _place(edits: dict[str, Any], rel: str, value: Any) -> None:
    """Put ``value`` at ``rel`` in nested edits, a directory's entry becoming a dict."""
    *dirs, name = rel.split("/")
    node = edits
    for part in dirs:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[name] = value


class GitPygit2(GitBackend):
    name = "git-pygit2"
    libraries = ("pygit2",)
    pypi = "pygit2"
    apt_packages = ("git",)
    description = "libgit2 in-process (pygit2), bare repository, objects written directly"
    verifier = (
        "vcsbench's own reader of the loose objects (zlib, each SHA-1 recomputed); "
        "`git cat-file --batch` where objects are packed"
    )
    capabilities = frozenset(
        {
            "create", "commit", "checkout", "clone", "update", "log", "status", "diff",
            "replay", "revisions",
        }
    )  # fmt: skip
    option_defaults: ClassVar[Mapping[str, str]] = {"template": "", "fsync": "false"}
    converts_on: ClassVar[frozenset[str]] = frozenset({"clone", "update"})
    """libgit2's checkout applies the attributes; its ``checkout`` writes blobs as they are."""

    def check_options(self) -> None:
        super().check_options()
        import pygit2

        # libgit2 ignores core.fsync; fsync is a process-wide library option, set here
        # once rather than inside every timed call.
        pygit2.option(
            _const("Option.ENABLE_FSYNC_GITDIR"), parse_bool("fsync", self.options["fsync"])
        )

    def durability(self) -> str:
        if parse_bool("fsync", self.options["fsync"]):
            return "fsync (libgit2 ENABLE_FSYNC_GITDIR on)"
        return "no fsync (libgit2's default)"

    @classmethod
    def available(cls) -> Availability:
        try:
            import pygit2  # noqa: F401
        except ImportError as exc:
            return Availability(False, f"pygit2 cannot be imported ({exc}); pip install pygit2")
        return Availability(True)

    def versions(self) -> dict[str, str]:
        import pygit2

        return {
            "pygit2": importlib.metadata.version("pygit2"),
            "libgit2": pygit2.LIBGIT2_VERSION,
            "git (verifier)": tool_version(["git", "--version"]),
        }

    def create(self, path: Path) -> None:
        self._init(path)

    def _init(self, path: Path) -> Any:
        import pygit2

        template = self.template.path(self.temp_root)
        flags = _const("RepositoryInitFlag.MKPATH")
        if template is not None:
            flags |= _const("RepositoryInitFlag.EXTERNAL_TEMPLATE")
        return pygit2.init_repository(str(path), bare=True, flags=flags, template_path=template)

    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        import pygit2

        repo = pygit2.Repository(str(path))
        try:  # HEAD read once: asking head_is_unborn first read it twice (+2 % on ext4)
            head = repo.head.peel(pygit2.Commit)
        except pygit2.GitError:
            if not repo.head_is_unborn:  # a broken HEAD is an error, not a first commit
                raise
            self._commit_into(repo, None, [], files, message)
            return
        self._commit_into(repo, head.tree, [head.id], files, message)

    def create_commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        """Into the repository ``init_repository`` hands back: a new one, whose HEAD is
        unborn by construction (no parents, no base tree to read)."""
        if not self._creates_and_commits_as(GitPygit2):
            super().create_commit(path, files, message, scratch)
            return
        self._commit_into(self._init(path), None, [], files, message)

    def _commit_into(
        self, repo: Any, base: Any, parents: list[Any], files: Files, message: str
    ) -> None:
        import pygit2

        tree_id = self._write_tree(repo, base, _nest(files))
        signature = pygit2.Signature("vcsbench", "vcsbench@localhost", COMMIT_TIME, 0)
        repo.create_commit("HEAD", signature, signature, message, tree_id, parents)

    def _write_tree(self, repo: Any, base: Any, entries: dict[str, Any]) -> Any:

        builder = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
        for name, value in entries.items():
            if isinstance(value, dict):
                sub_base = None
                name = sys.intern(name)  # see _edit_tree
                if base is not None and name in base and base[name].type_str == "tree":
                    sub_base = repo[base[name].id]
                oid = self._write_tree(repo, sub_base, value)
                builder.insert(name, oid, _const("FileMode.TREE"))
            else:
                builder.insert(name, repo.create_blob(value), _const("FileMode.BLOB"))
        return builder.write()

    def verify(self, path: Path, files: Files) -> list[str]:
        return verify_with(read_git_objects, path, files)

    def replay(self, path: Path, change: Change, scratch: Path) -> None:
        """The change's tree written from the parent's by tree builders (a rename is a
        deletion and an addition, as git records it), committed with the source's author
        and time and vcsbench as the committer."""
        import pygit2

        repo = pygit2.Repository(str(path))
        base, parents = None, []
        if not repo.head_is_unborn:
            head = repo.head.peel(pygit2.Commit)
            base, parents = head.tree, [head.id]
        edits: dict[str, Any] = {}
        for rel in change.deletes:
            _place(edits, rel, None)
        for rel, node in change.writes.items():
            _place(edits, rel, (GIT_MODES[node.kind], node.data))
        tree_id = self._edit_tree(repo, base, edits)
        if tree_id is None:  # every file deleted: git's empty tree
            tree_id = repo.TreeBuilder().write()
        committer = pygit2.Signature("vcsbench", "vcsbench@localhost", COMMIT_TIME, 0)
        if not change.author_email:  # libgit2 refuses it; git records ``name <>``
            _write_commit(repo, change, committer, tree_id, parents)
            return
        author = pygit2.Signature(change.author_name, change.author_email, change.when, 0)
        repo.create_commit("HEAD", author, committer, change.message, tree_id, parents)

    def _edit_tree(self, repo: Any, base: Any, edits: dict[str, Any]) -> Any:
        """The tree ``base`` with ``edits`` (name -> None: removed; -> (mode, data): a
        blob; -> dict: a subtree's edits) applied; None where nothing is left in it."""
        builder = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
        for name, value in edits.items():
            # pygit2 (1.21.0, measured) keeps a reference to the name it is given by
            # `in`, [], TreeBuilder.get and .remove: a fresh string each commit would
            # stay for good (6.5 MiB over a 30,000-commit replay); an interned one is
            # kept once, however often it is named.
            name = sys.intern(name)
            present = base is not None and name in base and base[name].type_str == "tree"
            if value is None:
                if builder.get(name) is not None:
                    builder.remove(name)
            elif isinstance(value, dict):
                sub_base = repo[base[name].id] if present else None
                oid = self._edit_tree(repo, sub_base, value)
                if oid is None:
                    if builder.get(name) is not None:
                        builder.remove(name)
                else:
                    builder.insert(name, oid, _const("FileMode.TREE"))
            else:
                mode, data = value
                builder.insert(name, repo.create_blob(data), mode)
        return builder.write() if len(builder) else None

    def tree(self, path: Path, revision: int) -> DigestTree:
        return tree_with_git_cli(path, revision)

    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        import pygit2

        repo = pygit2.Repository(str(path))
        tree = repo.head.peel(pygit2.Tree)
        target.mkdir()
        repo.checkout_tree(  # type: ignore[no-untyped-call]
            tree,
            directory=str(target),
            strategy=_const("CheckoutStrategy.FORCE")
            | _const("CheckoutStrategy.DONT_UPDATE_INDEX"),
        )

    def checkout_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        import pygit2

        repo = pygit2.Repository(str(path))
        target.mkdir()
        repo.checkout_tree(  # type: ignore[no-untyped-call]
            repo[revision].peel(pygit2.Tree),
            directory=str(target),
            strategy=_const("CheckoutStrategy.FORCE")
            | _const("CheckoutStrategy.DONT_UPDATE_INDEX"),
        )

    def clone(self, path: Path, target: Path, scratch: Path) -> None:
        import pygit2

        pygit2.clone_repository(str(path), str(target))

    def working_copy_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        # libgit2 clones a local path by fetching: only what is reachable then
        with branch_at(path, revision):
            self.clone(path, target, scratch)

    def update(self, wc: Path, scratch: Path) -> None:
        """Fetch from origin and fast-forward the branch and work tree (``pull --ff-only``)."""
        import pygit2

        repo = pygit2.Repository(str(wc))
        repo.remotes["origin"].fetch()
        fetched = repo.lookup_reference(f"refs/remotes/origin/{repo.head.shorthand}").target
        repo.checkout_tree(repo[fetched])  # type: ignore[no-untyped-call]
        repo.head.set_target(fetched)

    def log(self, path: Path) -> list[str]:
        import pygit2

        repo = pygit2.Repository(str(path))
        walker = repo.walk(repo.head.target, _const("SortMode.TOPOLOGICAL"))
        return [commit.message.strip() for commit in walker]

    def status(self, wc: Path) -> dict[str, str]:
        import pygit2

        codes = (
            (_const("FileStatus.WT_NEW"), "?"),
            (_const("FileStatus.WT_MODIFIED") | _const("FileStatus.INDEX_MODIFIED"), "M"),
            (_const("FileStatus.INDEX_NEW"), "A"),
            (_const("FileStatus.WT_DELETED") | _const("FileStatus.INDEX_DELETED"), "D"),
        )
        changes: dict[str, str] = {}
        for rel, flag in pygit2.Repository(str(wc)).status().items():
            changes[rel] = next((code for mask, code in codes if flag & mask), str(int(flag)))
        return changes

    def diff(self, path: Path, scratch: Path) -> bytes:
        import pygit2

        repo = pygit2.Repository(str(path))
        head = repo.head.peel(pygit2.Commit)
        patches = repo.diff(head.parents[0], head)
        return b"".join(patch.data for patch in patches if patch is not None)

    def diff_between(self, path: Path, old: str, new: str, scratch: Path) -> bytes:
        """libgit2's diff of two commits (it finds renames only when asked)."""
        import pygit2

        repo = pygit2.Repository(str(path))
        patches = repo.diff(repo[old].peel(pygit2.Commit), repo[new].peel(pygit2.Commit))
        return b"".join(patch.data for patch in patches if patch is not None)


def _write_commit(repo: Any, change: Change, committer: Any, tree: Any, parents: list[Any]) -> None:
    """A commit whose author has no e-mail, written as git writes one (``author NAME <>
    TIME +0000``) into the object database, and HEAD's branch moved to it."""
    import pygit2

    sign = "-" if committer.offset < 0 else "+"
    hours, minutes = divmod(abs(committer.offset), 60)
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    lines.append(f"author {change.author_name} <> {change.when} +0000")
    lines.append(
        f"committer {committer.name} <{committer.email}> {committer.time} "
        f"{sign}{hours:02d}{minutes:02d}"
    )
    data = ("\n".join(lines) + "\n\n" + change.message).encode()
    oid = repo.odb.write(pygit2.enums.ObjectType.COMMIT, data)
    branch = repo.lookup_reference("HEAD").target
    repo.references.create(branch, oid, force=True)
