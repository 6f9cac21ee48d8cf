"""The repositories a load works on, on the server's side: made before the load (the
students', the one every clone-storm client clones, the shared one), untimed, and read
back after each step through a path independent of the clients'.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vcsbench.backends import REGISTRY, make_backend
from vcsbench.backends._git import git_env, read_git_objects
from vcsbench.backends._hg import hg_env
from vcsbench.backends.files import Files, compare_files
from vcsbench.backends.svn_verifier import SvnVerifier
from vcsbench.load.paths import AccessPath
from vcsbench.servers.apache import apache_ids, as_server_user, give_tree
from vcsbench.workload.age import fill
from vcsbench.workload.operation import COMMIT_MESSAGE, HISTORY_FILE, RoundPaths
from vcsbench.workload.population import Population

SESSION_FILE = "vcsbench-session.txt"
STORM = "storm"
"""The repository every clone-storm client clones."""
SHARED = "shared"
"""The repository every committer of the shared scenario commits to."""
BUILDERS = {
    "svn": ("svn-fs", "svn-cli"),
    "git": ("git-pygit2", "git-cli"),
    "hg": ("hg-lib", "hg-cli"),
}
"""Backends that build a server path's repository before the load (the first available)."""


def repo_name(student: int) -> str:
    return f"s{student:06d}"


def submission(payload: Mapping[str, bytes], student: int, visit: int) -> dict[str, bytes]:
    """The files a student submits at a visit: the payload and a line that changes."""
    return {**payload, SESSION_FILE: f"student {student} visit {visit}\n".encode()}


def shared_file(committer: int) -> str:
    """The file committer ``committer`` rewrites in the shared repository (its own: a
    rejected or out-of-date commit is then retried as a real client would, no merge)."""
    return f"committer-{committer:03d}.txt"


def shared_content(committer: int, n: int) -> bytes:
    return f"committer {committer} commit {n}\n".encode()


def server_side_create(path: AccessPath, repo: Path) -> tuple[list[str], dict[str, str]]:
    """The command (and its environment) that makes a repository on the server's side as
    the path's server makes it: ``svnadmin create``, ``git init --bare``, ``hg init``; as
    Apache's user for Apache, whose repositories are that user's."""
    if path.vcs == "svn":
        argv, env = ["svnadmin", "create", str(repo)], dict(os.environ)
    elif path.vcs == "git":
        argv, env = ["git", "init", "-q", "--bare", "-b", "main", str(repo)], git_env()
    else:
        argv, env = ["hg", "init", str(repo)], hg_env()
    if path.served_as_apache:
        argv = as_server_user(argv)
    return argv, env


def _create_server_side(path: AccessPath, repo: Path) -> None:
    argv, env = server_side_create(path, repo)
    subprocess.run(argv, check=True, capture_output=True, env=env)


PROGRESS_S = 5.0
"""Seconds between the lines that say how far the precreation is."""


class ProgressLines:
    """A line on standard error every few seconds while repositories are made before a
    load: how far, at what rate, and how long is left."""

    def __init__(self, name: str, unit: str) -> None:
        self.name, self.unit = name, unit
        self.last = time.perf_counter()

    def __call__(self, done: int, total: int, elapsed: float, unit: str = "") -> None:
        now = time.perf_counter()
        if done < total and now - self.last < PROGRESS_S:
            return
        self.last = now
        rate = done / elapsed if elapsed > 0 else 0.0
        left = (total - done) / rate if rate else 0.0
        print(
            f"vcsbench load: {self.name}: {done:,}/{total:,} {unit or self.unit}, "
            f"{rate:,.0f}/s, {left:.0f}s left",
            file=sys.stderr,
            flush=True,
        )


def make_student_repositories(path: AccessPath, repos: Path, students: int) -> None:
    """Every student's repository, made the way the path's server side makes them; a
    line on standard error every few seconds says how far, at what rate, and how long
    is left (10,000 repositories take a minute)."""
    start = time.perf_counter()
    say = ProgressLines(path.name, "student repositories made")
    if path.local:
        with make_backend(path.backend) as backend:
            for student in range(students):
                backend.create(repos / repo_name(student))
                say(student + 1, students, time.perf_counter() - start)
        return
    for student in range(students):
        _create_server_side(path, repos / repo_name(student))
        say(student + 1, students, time.perf_counter() - start)


def fill_present(
    path: AccessPath, workdir: Path, count: int, population: Population | None, sandbox: str
) -> dict[str, Any]:
    """The repositories the server holds before the load: ``count`` of them, alike or a
    term's ``population`` with histories, made by the code ``vcsbench run --age`` fills a
    sandbox with (at ``repos/r0000000`` ...; each student's deadline repository is its
    own, as before). Built by the path's backend, or for a server path the first
    available of its VCS's; a line on standard error every few seconds says how far."""
    builder = path.backend or next(n for n in BUILDERS[path.vcs] if REGISTRY[n].available().ok)
    start = time.perf_counter()
    say = ProgressLines(path.name, "repositories")
    with make_backend(builder) as backend:
        about = fill(
            backend,
            workdir,
            count,
            "flat",
            say,
            sandbox=sandbox,
            population=population,
            kept=population is not None,  # a term's repositories as the server keeps them
        )
    return {
        "repositories": count,
        "built_by": builder,
        "fill_s": time.perf_counter() - start,
        **about,
    }


def give_students_their_term(
    path: AccessPath, workdir: Path, students: int, population: Population
) -> list[int]:
    """Each student's deadline repository is its own of the term: the term's first
    ``students`` repositories (``repos/r0000000`` ...) renamed to the students' names
    (``repos/s000000`` ...), made the server user's where it writes as its own. Returns
    each one's revisions before the load (the commits its history was drawn with)."""
    commits = population.commits()[:students]
    for student in range(students):
        term = RoundPaths.of(workdir, student).repo
        own = term.parent / repo_name(student)
        os.rename(term, own)
        if path.served_as_apache and os.geteuid() == 0:
            give_tree(own, apache_ids())
    return commits


def build_history(
    path: AccessPath, repos: Path, payload: Files, history: int, name: str = STORM
) -> dict[str, bytes]:
    """The repository every clone-storm client clones (or the shared one: ``name``):
    the payload, then ``history - 1`` revisions that each rewrite one small file (as the
    benchmarks' history seeds). Returns the files its newest revision holds."""
    builder = path.backend or next(n for n in BUILDERS[path.vcs] if REGISTRY[n].available().ok)
    scratch = repos.parent / f"{name}-scratch"
    scratch.mkdir()
    files = dict(payload)
    repo = repos / name
    with make_backend(builder) as backend:
        backend.create(repo)
        backend.commit(repo, payload, COMMIT_MESSAGE, scratch)
        for i in range(1, history):
            files[HISTORY_FILE] = f"history {i}\n".encode()
            backend.commit(repo, {HISTORY_FILE: files[HISTORY_FILE]}, f"history {i}", scratch)
    if path.served_as_apache and os.geteuid() == 0:  # its user serves it
        give_tree(repo, apache_ids())
    return files


def _revisions_git(repo: Path) -> int:
    proc = subprocess.run(
        ["git", "--git-dir", str(repo), "rev-list", "--count", "HEAD"],
        capture_output=True,
        env=git_env(),
        check=False,
    )
    return int(proc.stdout) if proc.returncode == 0 else 0


class Reader:
    """Reads repositories of one VCS back: svn by a reader process of the bindings, git
    by vcsbench's own object reader, hg by Mercurial's API in this process. Use in a
    ``with`` block."""

    def __init__(self, vcs: str) -> None:
        self.vcs = vcs
        self._svn = SvnVerifier() if vcs == "svn" else None

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._svn is not None:
            self._svn.close()

    def read(self, repo: Path, files: Files) -> tuple[int, list[str]]:
        """A repository's revisions (svn: the youngest; git: HEAD's commits; hg: its
        changesets) and how its newest files differ from ``files``; one that cannot be
        read: -1 and why."""
        try:
            if self._svn is not None:
                revisions, actual = self._svn.read(repo, sorted(files))
                return revisions, compare_files(files, actual)
            if self.vcs == "hg":
                from vcsbench.backends._hg import changesets, read_with_mercurial

                found_hg = read_with_mercurial(repo, sorted(files))
                return changesets(repo), compare_files(files, found_hg)
            found = read_git_objects(repo, sorted(files))
            return _revisions_git(repo), compare_files(files, found)
        except Exception as exc:
            return -1, [f"could not be read: {type(exc).__name__}: {exc}"]
