"""Subversion through libsvn_repos/libsvn_fs in-process (SWIG bindings), no working copy.

This is how MarkUs writes: ``svn.repos.create``, then a filesystem transaction in which
files are made and their text applied, committed with ``svn.repos.fs_commit_txn``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vcsbench.backends._svn import (
    SvnBackend,
    configure,
    parents_of,
    prop_edits,
    svn_text,
    svn_tool_versions,
)
from vcsbench.backends.changes import Change
from vcsbench.backends.files import Files
from vcsbench.backends.tools import Availability, ToolError


class SvnFs(SvnBackend):
    name = "svn-fs"
    libraries = ("svn.core", "svn.fs", "svn.repos")
    apt_packages = ("python3-subversion", "subversion")
    description = "`svn.repos.create` + fs transaction through the SWIG bindings, no working copy"
    # No gc: the 1.14 SWIG wrappers of svn_repos_fs_pack2 and svn_fs_pack fail with
    # "returned NULL without setting an exception"; svn-cli packs with svnadmin pack.
    capabilities = frozenset({"create", "commit", "checkout", "log", "replay", "revisions"})

    @classmethod
    def available(cls) -> Availability:
        try:
            import svn.fs
            import svn.repos  # noqa: F401
        except ImportError as exc:
            return Availability(
                False,
                f"Subversion SWIG bindings cannot be imported ({exc}); apt install "
                "python3-subversion and use a venv made from /usr/bin/python3 "
                "with --system-site-packages",
            )
        return Availability(True)

    def versions(self) -> dict[str, str]:
        import svn.core

        return {
            "libsvn (SWIG)": f"{svn.core.SVN_VER_MAJOR}.{svn.core.SVN_VER_MINOR}."
            f"{svn.core.SVN_VER_PATCH}",
            **svn_tool_versions(),
        }

    def _fs_config(self) -> dict[str, str]:
        import svn.fs

        config = {svn.fs.CONFIG_FS_TYPE: self.options["fs-type"]}
        if self.options["compatible-version"]:
            config["compatible-version"] = self.options["compatible-version"]
        return config

    def create(self, path: Path) -> None:
        import svn.core
        import svn.repos

        pool = svn.core.Pool()
        try:
            svn.repos.create(str(path), None, None, None, self._fs_config(), pool)
        finally:
            pool.destroy()
        configure(path, self.options)

    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        import svn.core
        import svn.fs
        import svn.repos

        # A pool per commit: the bindings' global pool otherwise grows with every call.
        pool = svn.core.Pool()
        try:
            repos = svn.repos.open(str(path), pool)
            youngest = svn.fs.youngest_rev(svn.repos.fs(repos), pool)
            self._commit_into(repos, youngest, files, message, pool)
        finally:
            pool.destroy()

    def create_commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        """Into the repository ``svn.repos.create`` hands back (r0, as made). With a
        ``compression`` option the repository's configuration is edited after create and
        read when it is opened, so then it is opened again, as :meth:`commit` does."""
        if self.options["compression"] or not self._creates_and_commits_as(SvnFs):
            super().create_commit(path, files, message, scratch)
            return
        import svn.core
        import svn.repos

        pool = svn.core.Pool()
        try:
            repos = svn.repos.create(str(path), None, None, None, self._fs_config(), pool)
            self._commit_into(repos, 0, files, message, pool)
        finally:
            pool.destroy()

    def _commit_into(
        self, repos: Any, youngest: int, files: Files, message: str, pool: Any
    ) -> None:
        import svn.core
        import svn.fs
        import svn.repos

        txn = svn.repos.fs_begin_txn_for_commit2(
            repos, youngest, {"svn:author": b"vcsbench", "svn:log": message.encode()}, pool
        )
        root = svn.fs.txn_root(txn, pool)
        for directory in parents_of(list(files)):
            if svn.fs.check_path(root, directory, pool) == svn.core.svn_node_none:
                svn.fs.make_dir(root, directory, pool)
        for rel, data in files.items():
            if svn.fs.check_path(root, rel, pool) == svn.core.svn_node_none:
                svn.fs.make_file(root, rel, pool)
            stream = svn.fs.apply_text(root, rel, None, pool)
            svn.core.svn_stream_write(stream, data)
            svn.core.svn_stream_close(stream)
        # A conflict raises SubversionException; what returns is the new revision.
        new_rev = svn.repos.fs_commit_txn(repos, txn, pool)
        if not isinstance(new_rev, int) or new_rev <= youngest:
            raise ToolError(f"svn fs commit returned {new_rev!r} after r{youngest}")

    def replay(self, path: Path, change: Change, scratch: Path) -> None:
        """One transaction: gone directories and deleted files removed, new directories
        made, renames copied from the parent revision (Subversion's record of a move),
        contents written, svn:executable / svn:special set as each file's kind is; the
        source's author as svn:author."""
        import svn.core
        import svn.fs
        import svn.repos

        pool = svn.core.Pool()
        try:
            repos = svn.repos.open(str(path), pool)
            fs = svn.repos.fs(repos)
            youngest = svn.fs.youngest_rev(fs, pool)
            props = {"svn:author": change.author_name.encode(), "svn:log": change.message.encode()}
            txn = svn.repos.fs_begin_txn_for_commit2(repos, youngest, props, pool)
            root = svn.fs.txn_root(txn, pool)
            base = svn.fs.revision_root(fs, youngest, pool)
            none = svn.core.svn_node_none
            for rel in [*change.gone_dirs, *change.deletes_outside_gone_dirs()]:
                if svn.fs.check_path(root, rel, pool) != none:
                    svn.fs.delete(root, rel, pool)
            for directory in change.new_dirs:
                if svn.fs.check_path(root, directory, pool) == none:
                    svn.fs.make_dir(root, directory, pool)
            for new, old in change.renames.items():
                svn.fs.copy(base, old, root, new, pool)
            for rel, node in change.writes.items():
                if svn.fs.check_path(root, rel, pool) == none:
                    svn.fs.make_file(root, rel, pool)
                stream = svn.fs.apply_text(root, rel, None, pool)
                svn.core.svn_stream_write(stream, svn_text(node))
                svn.core.svn_stream_close(stream)
                for name, value in prop_edits(change, rel):
                    svn.fs.change_node_prop(root, rel, name, value, pool)
            new_rev = svn.repos.fs_commit_txn(repos, txn, pool)
            if not isinstance(new_rev, int) or new_rev <= youngest:
                raise ToolError(f"svn fs commit returned {new_rev!r} after r{youngest}")
        finally:
            pool.destroy()

    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        """Export the newest revision through the fs API (there is no working copy)."""
        self.checkout_at(path, target, scratch, "HEAD")

    def revision_id(self, path: Path, revision: int) -> str:
        return str(revision)  # r0 is the empty one before the first

    def checkout_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        """Export ``revision`` (a number, or HEAD) through the fs API."""
        import svn.core
        import svn.fs
        import svn.repos

        pool = svn.core.Pool()
        try:
            fs = svn.repos.fs(svn.repos.open(str(path), pool))
            number = svn.fs.youngest_rev(fs, pool) if revision == "HEAD" else int(revision)
            root = svn.fs.revision_root(fs, number, pool)
            target.mkdir()
            self._export_dir(root, "", target, pool)
        finally:
            pool.destroy()

    def _export_dir(self, root: Any, fs_path: str, target: Path, pool: Any) -> None:
        import svn.core
        import svn.fs

        for raw_name, entry in svn.fs.dir_entries(root, fs_path, pool).items():
            name = raw_name.decode() if isinstance(raw_name, bytes) else raw_name
            child = f"{fs_path}/{name}" if fs_path else name
            local = target / name
            if entry.kind == svn.core.svn_node_dir:
                local.mkdir()
                self._export_dir(root, child, local, pool)
            else:
                stream = svn.core.Stream(svn.fs.file_contents(root, child, pool))
                data = stream.read()
                props = {
                    k.decode() if isinstance(k, bytes) else k
                    for k in svn.fs.node_proplist(root, child, pool)
                }  # the bindings give bytes or str names, by release
                if "svn:special" in props and data.startswith(b"link "):
                    os.symlink(data[5:], local)  # as a working copy has it
                    continue
                local.write_bytes(data)
                if "svn:executable" in props:
                    local.chmod(0o755)

    def log(self, path: Path) -> list[str]:
        """Each revision's ``svn:log`` property, youngest to r1, through the fs API."""
        import svn.core
        import svn.fs
        import svn.repos

        pool = svn.core.Pool()
        try:
            fs = svn.repos.fs(svn.repos.open(str(path), pool))
            messages = []
            for rev in range(svn.fs.youngest_rev(fs, pool), 0, -1):
                value = svn.fs.revision_prop(fs, rev, "svn:log", pool)
                messages.append(value.decode() if isinstance(value, bytes) else str(value or ""))
            return messages
        finally:
            pool.destroy()
