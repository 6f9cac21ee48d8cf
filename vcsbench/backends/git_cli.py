"""git through its command line: ``git init``, ``git add``, ``git commit`` with a work tree.

This is how a script writes. Every call is a subprocess without a shell, with the
user's and the system's git configuration shut out (see ``_git.git_env``).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from vcsbench.backends._git import GitBackend, git_env, read_with_pygit2
from vcsbench.backends.base import (
    Availability,
    Files,
    run_tool,
    tool_availability,
    tool_version,
    verify_with,
    write_tree,
)


class GitCli(GitBackend):
    name = "git-cli"
    apt_packages = ("git",)
    description = "`git init` / `git add` / `git commit` subprocesses with a work tree"
    verifier = "libgit2 (pygit2)"
    capabilities = frozenset(
        {"create", "commit", "checkout", "clone", "update", "log", "status", "diff", "gc"}
    )
    option_defaults: ClassVar[Mapping[str, str]] = {"template": "", "core.fsync": ""}

    def check_options(self) -> None:
        super().check_options()
        self._env = git_env()

    def durability(self) -> str:
        value = self.options["core.fsync"]
        return f"core.fsync={value}" if value else "git's default core.fsync"

    @classmethod
    def available(cls) -> Availability:
        return tool_availability("git")

    def versions(self) -> dict[str, str]:

        return {
            "git": tool_version(["git", "--version"]),
            "pygit2 (verifier)": importlib.metadata.version("pygit2"),
        }

    def _git(self, *args: str) -> list[str]:
        argv = ["git", "-c", "init.defaultBranch=main"]
        if self.options["core.fsync"]:
            argv += ["-c", f"core.fsync={self.options['core.fsync']}"]
        return [*argv, *args]

    def create(self, path: Path) -> None:
        template = self.template.path(self.temp_root)
        extra = [f"--template={template}"] if template is not None else []
        run_tool(self._git("init", "-q", *extra, str(path)), env=self._env)

    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        write_tree(path, files)
        run_tool(self._git("-C", str(path), "add", "--", *files), env=self._env)
        run_tool(self._git("-C", str(path), "commit", "-q", "-m", message), env=self._env)

    def verify(self, path: Path, files: Files) -> list[str]:
        return verify_with(read_with_pygit2, path, files)

    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        run_tool(
            self._git("-C", str(path), "worktree", "add", "-q", "--detach", str(target)),
            env=self._env,
        )

    def clone(self, path: Path, target: Path, scratch: Path) -> None:
        # A local path: git's own local clone (object files hard-linked where it can).
        run_tool(self._git("clone", "-q", str(path), str(target)), env=self._env)

    def update(self, wc: Path, scratch: Path) -> None:
        run_tool(self._git("-C", str(wc), "pull", "-q", "--ff-only"), env=self._env)

    def log(self, path: Path) -> list[str]:
        out = run_tool(self._git("-C", str(path), "log", "-z", "--format=%B"), env=self._env)
        return [entry.decode().strip() for entry in out.split(b"\0") if entry.strip()]

    def status(self, wc: Path) -> dict[str, str]:
        out = run_tool(
            self._git("-C", str(wc), "status", "--porcelain=v1", "-z", "--untracked-files=all"),
            env=self._env,
        )
        changes: dict[str, str] = {}
        for entry in out.split(b"\0"):
            if not entry:
                continue
            code, rel = entry[:2].decode(), entry[3:].decode()
            changes[rel] = "?" if code == "??" else (code[1] if code[1] != " " else code[0])
        return changes

    def diff(self, path: Path, scratch: Path) -> bytes:
        return run_tool(self._git("-C", str(path), "diff", "HEAD~1", "HEAD"), env=self._env)

    def gc(self, path: Path) -> None:
        run_tool(self._git("-C", str(path), "gc", "-q"), env=self._env)
