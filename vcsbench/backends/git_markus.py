"""git as MarkUs creates a student's repository, through libgit2 (pygit2 here, Rugged there).

MarkUs's ``app/lib/git_repository.rb`` (``GitRepository.create``) makes, per student:
a bare repository with ``core.logAllRefUpdates`` on (the reflog dates each push) and
``gc.reflogExpire=never``; a non-bare clone of it kept on the server; a first commit of
``.required.json`` (the assignment's required files) in the clone, pushed to the bare
repository; and server-side hooks linked into the bare repository's ``hooks``. A later
commit is made in the clone and pushed, as MarkUs's ``commit`` does.

One repository here is a directory with both: ``bare.git`` (what the server serves and
what ``verify`` reads) and ``work`` (the clone).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from vcsbench.backends._git import git_env, read_with_git_cli
from vcsbench.backends.base import COMMIT_TIME
from vcsbench.backends.files import Files, verify_with, write_tree
from vcsbench.backends.git_pygit2 import GitPygit2
from vcsbench.backends.tools import run_tool

REQUIRED_JSON = json.dumps({"a1": {"required": [], "required_only": False}}).encode()
"""What MarkUs commits first: the required-files list (here one assignment, none required)."""
HOOK = "pre-receive"
"""The server-side hook linked into each bare repository."""


def bare_of(path: Path) -> Path:
    return path / "bare.git"


def work_of(path: Path) -> Path:
    return path / "work"


class GitMarkus(GitPygit2):
    name = "git-markus"
    description = (
        "MarkUs's way (app/lib/git_repository.rb) through libgit2: a bare repository with "
        "reflogs kept, a clone kept beside it, `.required.json` committed and pushed, a "
        "server hook linked; commits made in the clone and pushed"
    )
    verifier = "`git cat-file --batch` on the bare repository; the clone must hold the same HEAD"
    capabilities = frozenset({"create", "commit", "checkout"})
    created_files: ClassVar[Mapping[str, bytes]] = {".required.json": REQUIRED_JSON}

    def check_options(self) -> None:
        super().check_options()
        self._hooks: str | None = None

    def hook(self) -> Path:
        """The one hook script every repository links to, made on first use."""
        if self._hooks is None:
            self._hooks = tempfile.mkdtemp(prefix="vcsbench-markus-hooks-", dir=self.temp_root)
            script = Path(self._hooks) / HOOK
            script.write_text("#!/bin/sh\n# MarkUs's server-side hook stands here.\nexit 0\n")
            script.chmod(0o755)
        return Path(self._hooks) / HOOK

    def ready(self, temp_root: Path) -> None:
        super().ready(temp_root)
        self.hook()

    def close(self) -> None:
        super().close()
        if self._hooks is not None:
            shutil.rmtree(self._hooks, ignore_errors=True)
            self._hooks = None

    def create(self, path: Path) -> None:
        import pygit2

        bare = bare_of(path)
        super().create(bare)
        config = pygit2.Repository(str(bare)).config
        config["core.logAllRefUpdates"] = True
        config["gc.reflogExpire"] = "never"
        pygit2.clone_repository(str(bare), str(work_of(path)))
        self._commit_and_push(path, dict(self.created_files), "Initial commit")
        (bare / "hooks").mkdir(exist_ok=True)
        os.symlink(self.hook(), bare / "hooks" / HOOK)

    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        self._commit_and_push(path, files, message)

    def _commit_and_push(self, path: Path, files: Files, message: str) -> None:
        """As MarkUs's ``do_commit_and_push``: files through the clone's index, a commit on
        HEAD, then a push of the branch to the bare repository (origin)."""
        import pygit2

        work = work_of(path)
        write_tree(work, files)
        repo = pygit2.Repository(str(work))
        index = repo.index
        for rel in files:
            index.add(rel)
        tree = index.write_tree()
        index.write()
        signature = pygit2.Signature("Markus", "markus@markus.com", COMMIT_TIME, 0)
        parents = [] if repo.head_is_unborn else [repo.head.target]
        repo.create_commit("HEAD", signature, signature, message, tree, parents)
        branch = repo.head.name
        repo.remotes["origin"].push([f"{branch}:{branch}"])

    def moved(self, path: Path) -> None:
        """The clone's origin is its bare repository by absolute path: point it at the
        copied one."""
        import pygit2

        pygit2.Repository(str(work_of(path))).remotes.set_url("origin", str(bare_of(path)))

    def kept_by(self) -> str:
        return "git gc of the bare repository and of the server's clone of it"

    def keep(self, path: Path) -> None:
        """Both repositories the server holds, each by git's own maintenance (a git gc in
        the directory that holds both found no repository)."""
        super().keep(bare_of(path))
        super().keep(work_of(path))

    def verify(self, path: Path, files: Files) -> list[str]:
        problems = verify_with(read_with_git_cli, bare_of(path), files)
        heads = []
        for where in (bare_of(path), work_of(path) / ".git"):
            try:
                argv = ["git", "--git-dir", str(where), "rev-parse", "HEAD"]
                heads.append(run_tool(argv, env=git_env()))
            except Exception as exc:  # an unreadable repository is a verification failure
                return [*problems, f"{where}: no HEAD ({exc})"]
        if heads[0] != heads[1]:
            problems.append("the clone's HEAD is not the bare repository's: the push is missing")
        return problems

    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        """What a grader gets: the bare repository's newest revision."""
        super().checkout(bare_of(path), target, scratch)

    def head_file(self, path: Path) -> Path:
        return bare_of(path) / "HEAD"
