"""git through its command line: ``git init``, ``git add``, ``git commit`` with a work tree.

This is how a script writes. Every call is a subprocess without a shell, with the
user's and the system's git configuration shut out (see ``_git.git_env``).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from vcsbench.backends._git import (
    DATED,
    GitBackend,
    branch_at,
    fast_import_path,
    git_env,
    read_index_with_pygit2,
    read_with_pygit2,
    tree_with_pygit2,
)
from vcsbench.backends._git_loose import git_dir_of, head_oid
from vcsbench.backends.base import COMMIT_TIME
from vcsbench.backends.changes import GIT_MODES, Change, DigestTree, apply_to_work_tree
from vcsbench.backends.files import Files, verify_with, write_tree
from vcsbench.backends.reach import REMOTE_OPTIONS
from vcsbench.backends.tools import (
    Availability,
    run_tool,
    tool_availability,
    tool_version,
    tools_in,
)
from vcsbench.errors import VcsbenchError

GIT_BIN_HINT = "an install's bin/, a build's bin-wrappers/"

FSYNC_COMPONENTS = (
    "none",
    "loose-object",
    "pack",
    "pack-metadata",
    "commit-graph",
    "index",
    "reference",
    "objects",
    "derived-metadata",
    "committed",
    "added",
    "all",
)
"""git 2.39's ``core.fsync`` components (one per variant: ``,`` separates options)."""
FSYNC_METHODS = ("fsync", "writeout-only", "batch")
OBJECT_STORES = ("loose", "packed")


class GitCli(GitBackend):
    name = "git-cli"
    apt_packages = ("git",)
    description = (
        "`git init` / `git add` / `git commit` subprocesses with a work tree "
        "(`objects=packed`: the commit by `git fast-import`, its objects in one pack)"
    )
    verifier = "libgit2 (pygit2)"
    capabilities = frozenset(
        {
            "create", "commit", "checkout", "clone", "update", "log", "status", "diff", "gc",
            "add", "publish", "replay", "revisions", "walk",
        }
    )  # fmt: skip
    remote_calls = frozenset({"clone", "update", "publish"})
    place_options: ClassVar[frozenset[str]] = frozenset({"template", "bin"})
    converts_on: ClassVar[frozenset[str]] = frozenset({"checkout", "clone", "update", "status"})
    option_defaults: ClassVar[Mapping[str, str]] = {
        "template": "",
        "core.fsync": "",
        "core.fsyncMethod": "",
        "objects": "loose",
        "bin": "",
        "seed-graph": "",
        "seed-pack": "",
        **REMOTE_OPTIONS,
    }

    def check_options(self) -> None:
        super().check_options()
        fsync = self.options["core.fsync"]
        if fsync and fsync.removeprefix("-") not in FSYNC_COMPONENTS:
            raise VcsbenchError(
                f"option core.fsync={fsync!r} is not a component git 2.39 knows; use one of "
                f"{', '.join(FSYNC_COMPONENTS)} (a leading '-' removes one from the default)"
            )
        method = self.options["core.fsyncMethod"]
        if method and method not in FSYNC_METHODS:
            raise VcsbenchError(
                f"option core.fsyncMethod={method!r} is not known; use one of "
                f"{', '.join(FSYNC_METHODS)}"
            )
        if self.options["objects"] not in OBJECT_STORES:
            raise VcsbenchError(
                f"option objects={self.options['objects']!r} is not known; use loose "
                "(git add + git commit) or packed (git fast-import)"
            )
        for key, known in (("seed-graph", ("none", "write")), ("seed-pack", ("full", "bitmap"))):
            if self.options[key] not in ("", *known):
                raise VcsbenchError(
                    f"option {key}={self.options[key]!r} is not known; use {' or '.join(known)}"
                    f" (or leave it out: the seed as the replay or commits left it)"
                )
        self._env = {**git_env(), **DATED}
        self._tool = tools_in(self.options["bin"], ("git",), GIT_BIN_HINT)["git"]

    def durability(self) -> str:
        fsync = self.options["core.fsync"]
        method = self.options["core.fsyncMethod"]
        what = f"core.fsync={fsync}" if fsync else "git's default core.fsync"
        return f"{what}, core.fsyncMethod={method}" if method and fsync != "none" else what

    @classmethod
    def available(cls) -> Availability:
        return tool_availability("git")

    def versions(self) -> dict[str, str]:

        return {
            "git": tool_version([self._tool, "--version"]),
            **({"git from": self.options["bin"]} if self.options["bin"] else {}),
            "pygit2 (verifier)": importlib.metadata.version("pygit2"),
        }

    def _git(self, *args: str) -> list[str]:
        # gc.autoDetach=false: a `git gc --auto` a commit sets off runs inside that commit,
        # timed with it and done before it is checked -- not in the background, where it
        # would race the next round's copy of the repository and outlive the run
        argv = [self._tool, "-c", "init.defaultBranch=main", "-c", "gc.autoDetach=false"]
        for key in ("core.fsync", "core.fsyncMethod"):
            if self.options[key]:
                argv += ["-c", f"{key}={self.options[key]}"]
        return [*argv, *args]

    def create(self, path: Path) -> None:
        template = self.template.path(self.temp_root)
        extra = [f"--template={template}"] if template is not None else []
        run_tool(self._git("init", "-q", *extra, str(path)), env=self._env)

    def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
        write_tree(path, files)
        if self.options["objects"] == "packed":
            self._fast_import(path, files, message)
            return
        run_tool(self._git("-C", str(path), "add", "--", *files), env=self._env)
        run_tool(self._git("-C", str(path), "commit", "-q", "-m", message), env=self._env)

    def moved(self, path: Path) -> None:
        """A copied work tree's files are new inodes with new times, and its index holds
        the stat data of the ones it was made with: the next ``git commit`` would read
        every file again to see it unchanged. The index is refreshed here, untimed, as it
        stands in a repository git made in place."""
        if (path / ".git" / "index").exists():
            run_tool(self._git("-C", str(path), "update-index", "-q", "--refresh"), env=self._env)

    def _fast_import(self, path: Path, files: Files, message: str) -> None:
        """One commit by ``git fast-import``, kept as a pack whatever its object count,
        then the index made to match it (``git reset``) as ``git commit`` leaves it."""
        git = ["-C", str(path)]
        head = head_oid(git_dir_of(path))  # read from the ref files: no process in the timing
        committer = b"committer vcsbench <vcsbench@localhost> %d +0000\n" % COMMIT_TIME
        stream = [b"commit refs/heads/main\n", committer]
        stream.append(b"data %d\n%s\n" % (len(message.encode()), message.encode()))
        if head is not None:  # else the first commit: no parent
            stream.append(b"from " + head.encode() + b"\n")
        for rel, data in files.items():
            stream.append(b"M 100644 inline " + rel.encode() + b"\n")
            stream.append(b"data %d\n" % len(data) + data + b"\n")
        stream.append(b"done\n")
        run_tool(
            self._git(*git, "-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", "--done"),
            env=self._env,
            stdin=b"".join(stream),
        )
        run_tool(self._git(*git, "reset", "-q"), env=self._env)

    def verify(self, path: Path, files: Files) -> list[str]:
        return verify_with(read_with_pygit2, path, files)

    def replay(self, path: Path, change: Change, scratch: Path) -> None:
        """The change written into the work tree, then ``git add -A --force`` (a file
        the tree's own ``.gitignore`` names was committed in the source all the same)
        and ``git commit`` with the source's author and time (git finds renames when it
        reads history, as it does in the source); ``objects=packed``: one ``git
        fast-import`` commit."""
        if self.options["objects"] == "packed":
            self._fast_import_change(path, change)
            return
        apply_to_work_tree(path, change)
        run_tool(self._git("-C", str(path), "add", "-A", "--force"), env=self._env)
        author = f"{change.author_name} <{change.author_email}>"
        when = f"@{change.when} +0000"  # committed then too: every replay the same ids
        run_tool(
            self._git(
                "-C", str(path), "commit", "-q", "--allow-empty", "--no-verify",
                "--author", author, "--date", when, "-F", "-",
            ),
            env={**self._env, "GIT_COMMITTER_DATE": when},
            stdin=change.message.encode(),
        )  # fmt: skip

    def _fast_import_change(self, path: Path, change: Change) -> None:
        head = head_oid(git_dir_of(path))
        author = f"{change.author_name} <{change.author_email}> {change.when} +0000"
        committer = b"committer vcsbench <vcsbench@localhost> %d +0000\n" % change.when
        message = change.message.encode()
        stream = [b"commit refs/heads/main\n", b"author " + author.encode() + b"\n", committer]
        stream.append(b"data %d\n%s\n" % (len(message), message))
        if head is not None:
            stream.append(b"from " + head.encode() + b"\n")
        for rel in change.deletes:
            stream.append(b"D " + fast_import_path(rel) + b"\n")
        for rel, node in change.writes.items():
            mode = b"%o" % GIT_MODES[node.kind]
            stream.append(b"M " + mode + b" inline " + fast_import_path(rel) + b"\n")
            stream.append(b"data %d\n" % len(node.data) + node.data + b"\n")
        stream.append(b"done\n")
        git = ["-C", str(path)]
        run_tool(
            self._git(*git, "-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", "--done"),
            env=self._env,
            stdin=b"".join(stream),
        )
        run_tool(self._git(*git, "reset", "-q", "--hard"), env=self._env)

    def tree(self, path: Path, revision: int) -> DigestTree:
        return tree_with_pygit2(path, revision)

    def checkout(self, path: Path, target: Path, scratch: Path) -> None:
        run_tool(
            self._git("-C", str(path), "worktree", "add", "-q", "--detach", str(target)),
            env=self._env,
        )

    def clone(self, path: Path, target: Path, scratch: Path) -> None:
        # A local path: git's own local clone (object files hard-linked where it can);
        # remote=: over the server's transport.
        run_tool(
            self._git("clone", "-q", self.source(path), str(target)),
            env=self.client_env(self._env),
        )

    def checkout_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        run_tool(
            self._git("-C", str(path), "worktree", "add", "-q", "--detach", str(target), revision),
            env=self._env,
        )

    def working_copy_at(self, path: Path, target: Path, scratch: Path, revision: str) -> None:
        # --no-local: a pack of what is reachable then, not the object files hard-linked
        # (those would hold the newer objects, and the update would fetch nothing)
        with branch_at(path, revision):
            run_tool(
                self._git("clone", "-q", "--no-local", self.source(path), str(target)),
                env=self.client_env(self._env),
            )

    def update(self, wc: Path, scratch: Path) -> None:
        run_tool(
            self._git("-C", str(wc), "pull", "-q", "--ff-only"), env=self.client_env(self._env)
        )

    def receiving(self, path: Path) -> None:
        # its work tree is left as it was, as a bare repository has none
        run_tool(
            self._git("-C", str(path), "config", "receive.denyCurrentBranch", "ignore"),
            env=self._env,
        )

    def publish(self, wc: Path, files: Files, message: str, scratch: Path) -> None:
        write_tree(wc, files)
        run_tool(self._git("-C", str(wc), "add", "--", *files), env=self._env)
        run_tool(self._git("-C", str(wc), "commit", "-q", "-m", message), env=self._env)
        run_tool(
            self._git("-C", str(wc), "push", "-q", "origin", "HEAD"),
            env=self.client_env(self._env),
        )

    def log(self, path: Path) -> list[str]:
        return self.log_messages(self.log_output(path))

    def log_output(self, path: Path) -> bytes:
        return run_tool(self._git("-C", str(path), "log", "-z", "--format=%B"), env=self._env)

    def log_messages(self, output: bytes) -> list[str]:
        return [entry.decode().strip() for entry in output.split(b"\0") if entry.strip()]

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

    def seeded(self, path: Path) -> None:
        """``seed-pack=full|bitmap``: every object in one pack (``git repack -a -d``), with a
        reachability bitmap or without one; ``seed-graph=none|write``: no commit-graph
        file (one an automatic gc wrote during the build is removed), or one written
        (``git commit-graph write --reachable``)."""
        git = ("-C", str(path))
        pack = self.options["seed-pack"]
        if pack:
            bitmap = "--write-bitmap-index" if pack == "bitmap" else "--no-write-bitmap-index"
            run_tool(self._git(*git, "repack", "-a", "-d", "-q", bitmap), env=self._env)
        graph = self.options["seed-graph"]
        info = git_dir_of(path) / "objects" / "info"
        if graph:
            (info / "commit-graph").unlink(missing_ok=True)
            if (info / "commit-graphs").is_dir():  # a split graph: files of the seed's own
                for chain in (info / "commit-graphs").iterdir():
                    chain.unlink()
                (info / "commit-graphs").rmdir()
        if graph == "write":
            run_tool(self._git(*git, "commit-graph", "write", "--reachable"), env=self._env)

    def topo_log(self, path: Path, limit: int) -> bytes:
        return run_tool(
            self._git("-C", str(path), "log", "--oneline", "--topo-order", f"-{limit}"),
            env=self._env,
        )

    def rev_list(self, path: Path) -> bytes:
        return run_tool(self._git("-C", str(path), "rev-list", "--all"), env=self._env)

    def objects(self, path: Path) -> bytes:
        return run_tool(
            self._git("-C", str(path), "rev-list", "--objects", "--all", "--use-bitmap-index"),
            env=self._env,
        )

    def diff_between(self, path: Path, old: str, new: str, scratch: Path) -> bytes:
        return run_tool(self._git("-C", str(path), "diff", "--no-renames", old, new), env=self._env)

    def add(self, wc: Path, paths: list[str]) -> None:
        run_tool(self._git("-C", str(wc), "add", "--", *paths), env=self._env)

    def staged(self, wc: Path, paths: list[str]) -> dict[str, bytes | None]:
        return read_index_with_pygit2(wc, paths)

    def gc(self, path: Path) -> None:
        run_tool(self._git("-C", str(path), "gc", "-q"), env=self._env)
