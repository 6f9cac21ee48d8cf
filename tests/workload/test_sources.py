"""Subversion and Mercurial repositories as a history's source: read as the same changes
git records, replayed into every backend that replays, each revision's tree equal to the
git history's they were made from, and nothing the source names run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import require_backend, run_args, vcsbench
from histories import make_history, replay_and_check

from vcsbench.backends import REGISTRY
from vcsbench.backends.changes import digest_tree, tree_differences
from vcsbench.errors import VcsbenchError
from vcsbench.results.layout import benchmark_part
from vcsbench.workload.history import load_history_payload, read_history

REPLAYERS = [name for name, cls in REGISTRY.items() if "replay" in cls.capabilities]
HG = {**os.environ, "HGRCPATH": os.devnull, "HGPLAIN": "1"}


def run(*args: str, **kwargs: object) -> None:
    subprocess.run(args, check=True, capture_output=True, **kwargs)  # type: ignore[call-overload]


def make_svn(root: Path, git: Path) -> Path:
    """The git history in a Subversion repository's ``trunk``, as svnadmin loads a dump of
    it (written by the svn-cli backend, itself checked against git's trees): revisions
    that touch only ``branches`` before it and after it, which its history leaves out."""
    flat, scratch = root / "flat", root / "scratch"
    scratch.mkdir()
    payload = load_history_payload(f"history:{git}")
    backend = REGISTRY["svn-cli"]()
    backend.ready(root)
    try:
        payload.replay_into(backend, flat, scratch)
        assert payload.next is not None
        backend.replay(flat, payload.next, scratch)
    finally:
        backend.close()
    repo = root / "svn"
    url = f"file://{repo}"
    run("svnadmin", "create", str(repo))
    run("svnmucc", "-m", "layout", "-U", url, "mkdir", "trunk", "mkdir", "branches")
    run("svnmucc", "-m", "a branch's own work", "-U", url, "mkdir", "branches/old")
    dump = subprocess.run(["svnadmin", "dump", "-q", str(flat)], capture_output=True, check=True)
    run("svnadmin", "load", "-q", "--parent-dir", "trunk", str(repo), input=dump.stdout)
    run("svnmucc", "-m", "branch", "-U", url, "cp", "HEAD", "trunk", "branches/b1")
    return repo


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The test history in git, in Subversion (under trunk) and in Mercurial (as Mercurial's
    own ``hg convert`` makes it from git)."""
    root = tmp_path_factory.mktemp("sources")
    git = make_history(root)
    require_backend("svn-cli")
    hg = root / "hg"
    run("hg", "--config", "extensions.convert=", "convert", "-q", str(git), str(hg), env=HG)
    return {"git": git, "svn": make_svn(root, git) / "trunk", "hg": hg}


def named(sources: dict[str, Path], vcs: str) -> str:
    """The payload of the test history in ``vcs``: in Subversion, trunk's last ten
    revisions (its first, which made it empty, left out)."""
    return f"history:{sources[vcs]}" + (",commits=10" if vcs == "svn" else "")


@pytest.mark.parametrize("vcs", ["svn", "hg"])
def test_a_source_is_read_as_the_changes_git_records(sources: dict[str, Path], vcs: str) -> None:
    """Every replayed revision's tree is git's at the same commit; renames are found from
    the copies the source records; the next change is git's next change."""
    git = load_history_payload(f"history:{sources['git']}")
    payload = load_history_payload(named(sources, vcs))
    source, reference = read_history(payload.spec), read_history(git.spec)
    assert 10 == len(source.replayed) == payload.identity["commits"]
    for index in range(10):
        want = digest_tree(reference.tree(index))
        assert [] == tree_differences(want, digest_tree(source.tree(index)), limit=50), index
    assert git.next_tree == payload.next_tree
    changes = list(source.changes())
    assert [{"lib/main.py": "src/main.py"}] == [dict(c.renames) for c in changes[2:3]]
    assert 2 == len(changes[7].renames)  # a directory renamed: each file a rename
    assert not changes[8].writes and not changes[8].deletes  # the empty commit
    for key in ("tip_files", "tip_bytes", "renames", "deletions"):
        assert git.identity[key] == payload.identity[key], key
    # docs/readme.md; the symlink turned file (a deletion and a write to libgit2) is a type
    # change, as `git log --name-status` says (T), not a deletion
    assert 1 == payload.identity["deletions"]
    assert vcs == payload.identity["vcs"]
    assert {"Ada Author"} == {c.author_name for c in changes}
    if vcs == "svn":
        assert "/trunk" == payload.identity["path"]
        # r2 (a branch's work) is left out, and the newest (a branch made): the next
        # change is trunk's last revision
        assert [str(r) for r in range(3, 13)] == source.replayed
        assert "13" == payload.identity["next"]


@pytest.mark.parametrize("vcs", ["svn", "hg"])
@pytest.mark.parametrize("name", REPLAYERS)
def test_every_backend_replays_a_subversion_and_a_mercurial_source(
    name: str, vcs: str, sources: dict[str, Path], tmp_path: Path
) -> None:
    """Each backend's replay of the source, read back by its own reader, is git's tree at
    every revision; the next change too."""
    require_backend(name)
    reference = read_history(load_history_payload(f"history:{sources['git']}").spec)
    payload = load_history_payload(named(sources, vcs))
    backend = REGISTRY[name]()
    backend.ready(tmp_path)
    try:
        replay_and_check(payload, reference, backend, tmp_path)
    finally:
        backend.close()


def test_a_run_records_a_subversion_sources_identity(
    sources: dict[str, Path], tmp_path: Path
) -> None:
    """``vcsbench run`` on an svn source: the rounds verified, the source named (its UUID,
    the path in it, the revisions)."""
    require_backend("hg-cli")
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("2", "hg-cli", "commit", f"history:{sources['svn']},commits=5",
                   fs=f"dir:{tmp_path}", out=out),
        "--progress", "none",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr + result.stdout
    (bench,) = [benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"]]
    assert 0 == bench["errors"] and 2 == bench["verified"]
    history = bench["payload"]["history"]
    assert ("svn", "/trunk", "8", "12", "13", 5) == (
        history["vcs"], history["path"], history["first"], history["last"], history["next"],
        history["commits"],
    )  # fmt: skip
    uuid = subprocess.run(
        ["svnlook", "uuid", str(sources["svn"].parent)], capture_output=True, text=True
    ).stdout.strip()
    assert uuid == history["uuid"]


def test_a_mercurial_sources_own_settings_never_load(tmp_path: Path) -> None:
    """The source's .hg/hgrc names an extension and hooks that would leave a mark; reading
    and replaying it loads and runs none of them."""
    git = make_history(tmp_path)
    hg = tmp_path / "hg"
    run("hg", "--config", "extensions.convert=", "convert", "-q", str(git), str(hg), env=HG)
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.py"
    evil.write_text(f"open({str(marker)!r}, 'w').close()\n")
    (hg / ".hg" / "hgrc").write_text(
        f"[extensions]\nevil = {evil}\n[hooks]\npre-cat = touch {marker}\n"
        f"preoutgoing = touch {marker}\n[ui]\nusername = evil\n"
    )
    payload = load_history_payload(f"history:{hg},commits=4")
    (tmp_path / "scratch").mkdir()
    backend = REGISTRY["git-pygit2"]()
    payload.replay_into(backend, tmp_path / "repo", tmp_path / "scratch")
    assert not marker.exists()
    assert "HGRCSKIPREPO" not in os.environ


@pytest.mark.parametrize(
    ("where", "option", "line"),
    [
        ("svn", ",from=99", r"from='99' is not a revision of .*; give a number from 1 to 14"),
        ("svn", ",commits=12", r"has 11 revisions of /trunk up to r14 .*give commits=11"),
        ("svn-missing", "", r"/trunk/nope is not in r14 of .*give a path of its tree"),
        ("hg", ",from=nope", r"from='nope' names no revision of .*give a hash"),
        ("hg", ",commits=11", r"has 10 commits on the first-parent line .*give commits=10"),
    ],
)
def test_a_bad_subversion_or_mercurial_source_is_one_line(
    sources: dict[str, Path], where: str, option: str, line: str
) -> None:
    source = sources["svn"] / "nope" if where == "svn-missing" else sources[where]
    with pytest.raises(VcsbenchError, match=line):
        load_history_payload.__wrapped__(f"history:{source}{option}")
