"""A long replay through libgit2 keeps nothing per commit: pygit2 (1.21.0) keeps a
reference to every name it is asked about (``in``, ``[]``, ``TreeBuilder.get``), so
names made fresh each commit would stay for good."""

from __future__ import annotations

import gc
import hashlib
import tracemalloc
from pathlib import Path

import pytest

from vcsbench.backends import make_backend
from vcsbench.backends._git import tree_with_git_cli
from vcsbench.backends.changes import Change, Node
from vcsbench.backends.tools import ToolError


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


def test_a_tree_read_by_git_streams_and_a_missing_blob_is_one_error(tmp_path: Path) -> None:
    """The git-pygit2 reader hashes each blob as ``git cat-file`` streams it: a tree of
    many files reads back every digest, and a blob gone from the repository is an error
    naming how far it got, never a tree with a file left out."""
    backend = make_backend("git-pygit2")
    repo = tmp_path / "repo"
    files = {f"d{i % 7}/f{i:04d}": bytes([i % 251]) * (i * 37) for i in range(300)}
    backend.create_commit(repo, files, "many files", tmp_path)
    want = {rel: ("file", hashlib.sha256(data).hexdigest()) for rel, data in files.items()}
    assert want == tree_with_git_cli(repo, 1)
    gone = hashlib.sha1(b"blob %d\0" % len(files["d3/f0010"]) + files["d3/f0010"]).hexdigest()
    (repo / "objects" / gone[:2] / gone[2:]).unlink()
    with pytest.raises(ToolError, match=r"after \d+ of 300 objects"):
        tree_with_git_cli(repo, 1)
