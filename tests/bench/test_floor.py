"""The floor's record of what a round changed: exactly the new and changed entries, from a
snapshot of 8 bytes an entry (a repository of 600,000 objects held hundreds of MB)."""

from __future__ import annotations

import os
from pathlib import Path

from vcsbench.bench import floor


def test_changed_is_what_the_round_made_or_rewrote(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "objects" / "ab").mkdir(parents=True)
    for i in range(500):
        (repo / "objects" / "ab" / f"{i:038x}").write_bytes(b"x" * i)
    (repo / "HEAD").write_bytes(b"ref: refs/heads/main\n")
    os.symlink("HEAD", repo / "link")
    before = floor.snapshot([repo], tmp_path)
    assert 505 == len(before) and 8 == before.itemsize  # 3 directories, 502 others: 8 B each
    (repo / "objects" / "cd").mkdir()
    (repo / "objects" / "cd" / "new").write_bytes(b"new object")
    (repo / "HEAD").write_bytes(b"ref: refs/heads/other\n")  # rewritten in place, longer
    tree = floor.changed([repo], tmp_path, before)
    assert {
        "repo/objects/cd": floor.TreeEntry(True),
        "repo/objects/cd/new": floor.TreeEntry(False, b"new object"),
        "repo/HEAD": floor.TreeEntry(False, b"ref: refs/heads/other\n"),
        "repo/objects": floor.TreeEntry(True),  # above the new directory, up to the root
        "repo": floor.TreeEntry(True),
    } == tree
