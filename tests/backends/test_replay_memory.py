"""A long replay through libgit2 keeps nothing per commit: pygit2 (1.21.0) keeps a
reference to every name it is asked about (``in``, ``[]``, ``TreeBuilder.get``), so
names made fresh each commit would stay for good."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from vcsbench.backends import make_backend
from vcsbench.backends.changes import Change, Node


def _change(n: int) -> Change:
    rel = "/".join(["".join(["dir", "a"]), "".join(["file", ".txt"])])  # fresh each time
    return Change(
        writes={rel: Node("file", b"%d\n" % n)},
        deletes=(),
        renames={},
        message=f"change {n}",
        author="A <a@example.org>",
        when=1_600_000_000 + n,
        source_id=f"{n:040x}",
    )


def test_a_git_pygit2_replay_keeps_nothing_per_commit(tmp_path: Path) -> None:
    backend = make_backend("git-pygit2")
    repo = tmp_path / "repo"
    backend.create(repo)
    tracemalloc.start()
    try:
        for n in range(200):
            backend.replay(repo, _change(n), tmp_path)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for n in range(200, 1200):
            backend.replay(repo, _change(n), tmp_path)
        gc.collect()
        grew = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # two names a commit kept would be ~100 KiB over these 1,000 commits
    assert grew < 24 << 10, f"1,000 commits replayed kept {grew:,} bytes"
