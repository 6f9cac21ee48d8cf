"""Versions of a command-line access path built from commits of a local source checkout,
for ``vcsbench bisect --source``: each commit checked out in a worktree of its own and
built with the command the user gives, installed into a directory that a
``git-cli[bin=DIR]`` or ``svn-cli[bin=DIR]`` variant then runs.

The build command is the user's (their own checkout, their own ``make``), run by a shell
in the commit's worktree with ``VCSBENCH_PREFIX`` naming the install directory; what it
must leave is ``$VCSBENCH_PREFIX/bin`` with the tools. A commit that does not build is
skipped and said. Worktrees are made under the bisection's own directory and removed
after (``git worktree remove``, then ``prune``), whatever happened; the installs stay
beside the results (what each step ran).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vcsbench.errors import VcsbenchError

MAX_COMMITS = 1000
BUILD_TIMEOUT_S = 3600


class BuildFailed(Exception):
    """A commit that could not be checked out or built, with the reason."""


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str


def _git(source: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(source), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise VcsbenchError(f"--source {source}: git {' '.join(args[:2])} failed: {last}")
    return done.stdout


def commits(source: Path, good: str, bad: str) -> list[Commit]:
    """``good``, then every commit on the first-parent line from it to ``bad``, oldest
    first."""
    if not (source / ".git").exists():
        raise VcsbenchError(f"--source {source}: not a git checkout (no .git there)")
    good_sha = _git(source, "rev-parse", "--verify", f"{good}^{{commit}}").strip()
    _git(source, "rev-parse", "--verify", f"{bad}^{{commit}}")
    listed = _git(
        source, "log", "--first-parent", "--reverse", "--format=%H %s", f"{good}..{bad}"
    ).splitlines()
    if not listed:
        raise VcsbenchError(f"--good {good} --bad {bad}: no commit from the one to the other")
    if len(listed) + 1 > MAX_COMMITS:
        raise VcsbenchError(
            f"--good {good} --bad {bad}: {len(listed) + 1:,} commits, at most {MAX_COMMITS:,}; "
            "give a nearer good one"
        )
    subject = _git(source, "log", "-1", "--format=%s", good_sha).strip()
    found = [Commit(good_sha, subject)]
    for line in listed:
        sha, _, text = line.partition(" ")
        found.append(Commit(sha, text))
    return found


class Builds:
    """Each commit built once, on demand, under ``where``."""

    def __init__(self, source: Path, command: str, where: Path, made: list[Commit]) -> None:
        self.source = source
        self.command = command
        self.where = where
        self.commits = made
        """The versions, oldest first: the good commit, then each to the bad one."""
        self._made: list[Path] = []
        self._built: dict[str, Path] = {}

    def bin_dir(self, commit: Commit) -> Path:
        """The commit's install's ``bin/``, building it first; :class:`BuildFailed`."""
        if commit.sha in self._built:
            return self._built[commit.sha]
        tree = self.where / f"src-{commit.sha[:12]}"
        prefix = self.where / f"install-{commit.sha[:12]}"
        log = self.where / f"build-{commit.sha[:12]}.log"
        added = subprocess.run(
            ["git", "-C", str(self.source), "worktree", "add", "--detach", str(tree), commit.sha],
            capture_output=True,
            text=True,
            check=False,
        )
        if added.returncode != 0:
            raise BuildFailed(f"could not check it out: {added.stderr.strip()[-200:]}")
        self._made.append(tree)
        prefix.mkdir(parents=True, exist_ok=True)  # where made the worktree: ours
        with log.open("w") as into:
            try:
                done = subprocess.run(
                    ["/bin/sh", "-c", self.command],
                    cwd=tree,
                    env={**os.environ, "VCSBENCH_PREFIX": str(prefix)},
                    stdout=into,
                    stderr=subprocess.STDOUT,
                    timeout=BUILD_TIMEOUT_S,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise BuildFailed(f"the build ran over {BUILD_TIMEOUT_S} s; see {log}") from None
        if done.returncode != 0:
            raise BuildFailed(f"the build failed (exit {done.returncode}); see {log}")
        if not (prefix / "bin").is_dir():
            raise BuildFailed(f"the build left no $VCSBENCH_PREFIX/bin ({prefix}/bin); see {log}")
        self._built[commit.sha] = prefix / "bin"
        return prefix / "bin"

    def spec_of(self, backend: str) -> Callable[[int], str]:
        """The variant that runs version ``index``: ``backend[bin=...]`` of its build."""
        return lambda index: f"{backend}[bin={self.bin_dir(self.commits[index])}]"

    def close(self) -> None:
        """Remove the worktrees made (each ours: made here, under ``where``)."""
        for tree in self._made:
            subprocess.run(
                ["git", "-C", str(self.source), "worktree", "remove", "--force", str(tree)],
                capture_output=True,
                check=False,
            )
        if self._made:
            subprocess.run(
                ["git", "-C", str(self.source), "worktree", "prune"],
                capture_output=True,
                check=False,
            )
        self._made = []
