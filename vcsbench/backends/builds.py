"""Versions of a command-line access path built from commits of a local source checkout,
for ``vcsbench bisect --source``: each commit checked out in a tree of its own and built
with the command the user gives, installed into a directory that a ``git-cli[bin=DIR]``
or ``svn-cli[bin=DIR]`` variant then runs.

The checkout is data, as a history source is: each commit's tree is a clone of it that
shares its objects (``git clone --shared --no-checkout``, no template), checked out with
no hook, no fsmonitor and no configuration but git's defaults (not the system's, the
user's, or the checkout's own: its filters and hooks are never run), and nothing is
registered in the checkout. The trees live in a directory the caller owns (a ``dir:``
sandbox: removed after, and by ``vcsbench cleanup`` after a SIGKILL).

The build command is the user's (their own ``make``), run by a shell in the commit's tree
with ``VCSBENCH_PREFIX`` naming the install directory, through the caller's ``run``
(contained, with a time limit); what it must leave is ``$VCSBENCH_PREFIX/bin`` with the
tools. A commit that does not build is skipped and said. The installs stay beside the
results (what each step ran).
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


QUIET_GIT = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
"""What every git command on the checkout runs with: no hook, no fsmonitor."""


def _env() -> dict[str, str]:
    """git's environment: no system or user configuration (a hook path, an fsmonitor, a
    filter of the user's would run with vcsbench's privileges)."""
    return {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _git(source: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *QUIET_GIT, "-C", str(source), *args],
        capture_output=True,
        text=True,
        check=False,
        env=_env(),
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
    for flag, rev in (("--good", good), ("--bad", bad)):
        if not rev or rev.startswith("-") or any(c in rev for c in "\0\n"):
            raise VcsbenchError(
                f"{flag} {rev!r} is not a revision (a commit id, a tag, a branch); git would "
                "read one beginning with - as an option"
            )
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


Run = Callable[[list[str], Path, dict[str, str], Path, float], int | None]
"""How a build command runs: (argv, its directory, its environment, its log, its time
limit) -> its exit status, or None when it ran past the limit (and was ended)."""


class Builds:
    """Each commit built once, on demand: its tree under ``trees``, its install and log
    under ``installs``."""

    def __init__(
        self, source: Path, command: str, trees: Path, installs: Path, made: list[Commit], run: Run
    ) -> None:
        self.source = source
        self.command = command
        self.trees = trees
        self.installs = installs
        self.commits = made
        """The versions, oldest first: the good commit, then each to the bad one."""
        self._run = run
        self._built: dict[str, Path] = {}

    def checkout(self, commit: Commit) -> Path:
        """A tree of ``commit``, as data: a clone sharing the checkout's objects, checked
        out with nothing of the checkout's own run (:data:`QUIET_GIT`, :func:`_env`)."""
        tree = self.trees / f"src-{commit.sha[:12]}"
        empty = self.trees / "no-template"
        empty.mkdir(exist_ok=True)
        for argv in (
            ["clone", "--quiet", "--shared", "--no-checkout", f"--template={empty}",
             str(self.source), str(tree)],
            ["-C", str(tree), "checkout", "--quiet", "--detach", commit.sha],
        ):  # fmt: skip
            done = subprocess.run(
                ["git", *QUIET_GIT, *argv], capture_output=True, text=True, check=False, env=_env()
            )
            if done.returncode != 0:
                raise BuildFailed(f"could not check it out: {done.stderr.strip()[-200:]}")
        return tree

    def bin_dir(self, commit: Commit) -> Path:
        """The commit's install's ``bin/``, building it first; :class:`BuildFailed`."""
        if commit.sha in self._built:
            return self._built[commit.sha]
        tree = self.checkout(commit)
        prefix = self.installs / f"install-{commit.sha[:12]}"
        log = self.installs / f"build-{commit.sha[:12]}.log"
        prefix.mkdir(parents=True, exist_ok=True)
        code = self._run(
            ["/bin/sh", "-c", self.command],
            tree,
            {**os.environ, "VCSBENCH_PREFIX": str(prefix)},
            log,
            BUILD_TIMEOUT_S,
        )
        if code is None:
            raise BuildFailed(f"the build ran over {BUILD_TIMEOUT_S} s and was ended; see {log}")
        if code != 0:
            raise BuildFailed(f"the build failed (exit {code}); see {log}")
        if not (prefix / "bin").is_dir():
            raise BuildFailed(f"the build left no $VCSBENCH_PREFIX/bin ({prefix}/bin); see {log}")
        self._built[commit.sha] = prefix / "bin"
        return prefix / "bin"

    def spec_of(self, backend: str) -> Callable[[int], str]:
        """The variant that runs version ``index``: ``backend[bin=...]`` of its build."""
        return lambda index: f"{backend}[bin={self.bin_dir(self.commits[index])}]"
