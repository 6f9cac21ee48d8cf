"""A small git history built for the tests, with every kind of change a replay carries:
adds, modifications, deletions, renames (a file, a directory), a binary file, executable
bits on and off, a symlink retargeted and turned into a file, an empty commit, an empty
message -- ten commits, and an eleventh as the next change."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path
from typing import Any

from vcsbench.backends.changes import digest_tree, tree_differences


def make_history(root: Path) -> Path:
    """A git history with every kind of change a replay must carry (see the messages):
    ten commits to replay and the next change after them."""
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Ada Author",
        "GIT_AUTHOR_EMAIL": "ada@example.org",
        "GIT_COMMITTER_NAME": "C",
        "GIT_COMMITTER_EMAIL": "c@example.org",
    }
    repo = root / "source"

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)

    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)

    def w(rel: str, data: bytes) -> None:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data)

    rng = random.Random(7)
    n = [0]

    def commit(msg: str) -> None:
        n[0] += 1
        git("add", "-A")
        git(
            "commit",
            "-q",
            "--allow-empty",
            "--allow-empty-message",
            "-m",
            msg,
            "--date",
            f"@{1700000000 + n[0] * 60} +0000",
        )

    w("a.txt", b"alpha\n" * 50)
    w("src/main.py", b"#!/usr/bin/env python3\nprint('hi')\n" + b"# pad\n" * 40)
    os.chmod(repo / "src/main.py", 0o755)
    w("bin.dat", rng.randbytes(5000))
    w("docs/readme.md", b"# readme\n")
    os.symlink("a.txt", repo / "link")
    commit("first: files, an executable, a binary, a symlink")
    w("a.txt", b"alpha\n" * 50 + b"beta\n")
    commit("modify a.txt")
    os.makedirs(repo / "lib")
    os.rename(repo / "src/main.py", repo / "lib/main.py")
    os.rmdir(repo / "src")
    with open(repo / "lib/main.py", "ab") as f:
        f.write(b"# moved\n")
    commit("rename src/main.py to lib/main.py, a little changed")
    os.remove(repo / "docs/readme.md")
    os.rmdir(repo / "docs")
    commit("delete docs/readme.md")
    os.chmod(repo / "lib/main.py", 0o644)
    w("bin.dat", rng.randbytes(6000))
    commit("executable bit off; binary changed")
    os.remove(repo / "link")
    os.symlink("lib/main.py", repo / "link")
    w("deep/x/y/z.txt", b"deep\n" * 30)
    w("deep/x/w.txt", b"w\n" * 30)
    commit("symlink retargeted; a deep directory")
    os.remove(repo / "link")
    w("link", b"now a regular file\n")
    commit("the symlink becomes a file")
    os.rename(repo / "deep", repo / "deeper")
    commit("rename a directory")
    commit("an empty commit")
    w("a.txt", b"alpha\n" * 50 + b"gamma\n")
    commit("")
    os.remove(repo / "bin.dat")
    w("new.txt", b"new\n")
    os.chmod(repo / "lib/main.py", 0o755)
    commit("the next change: a deletion, an addition, an executable bit on")
    return repo


def replay_and_check(payload: Any, reference: Any, backend: Any, root: Path) -> dict[str, Any]:
    """Replay the ten-commit ``payload`` with ``backend`` below ``root``; every revision's
    whole tree, read back by the backend's own reader, must be ``reference``'s (a source
    history) at that commit, and then the next change's. Returns the replay's cost."""
    (root / "scratch").mkdir()
    repo = root / "repo"
    cost: dict[str, Any] = payload.replay_into(backend, repo, root / "scratch")
    assert 10 == cost["commits"] and cost["seconds"] > 0
    for revision in range(1, 11):
        want = digest_tree(reference.tree(revision - 1))
        assert [] == tree_differences(want, dict(backend.tree(repo, revision)), limit=50)
    assert payload.next is not None
    backend.replay(repo, payload.next, root / "scratch")
    assert [] == tree_differences(payload.next_tree, dict(backend.tree(repo, 11)))
    return cost
