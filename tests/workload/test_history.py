"""A real history as a payload (``history:REPO``): read as its changes, replayed into
every backend that replays, each replayed revision's whole tree equal to the source's,
and the payload's operations measured on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import require_backend, run_args, vcsbench
from histories import make_history, replay_and_check

from vcsbench.backends import REGISTRY
from vcsbench.errors import VcsbenchError
from vcsbench.results.layout import benchmark_part
from vcsbench.workload.history import load_history_payload, read_history

REPLAYERS = [name for name, cls in REGISTRY.items() if "replay" in cls.capabilities]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_history(tmp_path_factory.mktemp("history"))


def test_every_vcs_has_a_backend_that_replays() -> None:
    assert {REGISTRY[name].vcs for name in REPLAYERS} == {"git", "svn", "hg"}
    assert len(REPLAYERS) >= 6


def test_a_history_is_read_as_its_changes(source: Path) -> None:
    """Ten commits before HEAD, oldest first, each as git records it: the first whole,
    then additions, modifications, deletions and renames, kinds and directories."""
    changes = list(read_history(load_history_payload(f"history:{source}").spec).changes())
    assert 10 == len(changes)
    first, _, rename, delete, modes, retarget, typechange, dir_rename, empty, blank = changes
    assert {"a.txt": "file", "src/main.py": "exec", "bin.dat": "file", "link": "link",
            "docs/readme.md": "file"} == {k: v.kind for k, v in first.writes.items()}  # fmt: skip
    assert b"a.txt" == first.writes["link"].data
    assert 5000 == len(first.writes["bin.dat"].data)
    assert ("docs", "src") == first.new_dirs
    assert {"lib/main.py": "src/main.py"} == rename.renames
    assert ("src/main.py",) == rename.deletes and ("src",) == rename.gone_dirs
    assert ("lib",) == rename.new_dirs
    assert ("docs/readme.md",) == delete.deletes and ("docs",) == delete.gone_dirs
    assert "file" == modes.writes["lib/main.py"].kind == modes.kind_before("bin.dat")
    assert "exec" == modes.kind_before("lib/main.py")
    assert b"lib/main.py" == retarget.writes["link"].data
    assert "file" == typechange.writes["link"].kind and typechange.kind_before("link") is None
    assert 2 == len(dir_rename.renames) and ("deep",) == dir_rename.gone_dirs
    assert not empty.writes and not empty.deletes and "an empty commit" == empty.message
    assert "(no message)" == blank.message
    assert {"Ada Author"} == {c.author_name for c in changes}
    assert {"ada@example.org"} == {c.author_email for c in changes}
    assert [1700000000 + 60 * i for i in range(1, 11)] == [c.when for c in changes]


@pytest.mark.parametrize("name", REPLAYERS)
def test_every_backend_replays_every_kind_of_change(
    name: str, source: Path, tmp_path: Path
) -> None:
    """Every replayed revision's whole tree, read back by the backend's own reader, is
    the source's at that commit (kinds and bytes, nothing more); then the next change."""
    require_backend(name)
    payload = load_history_payload(f"history:{source}")
    history = read_history(payload.spec)
    backend = REGISTRY[name]()
    backend.ready(tmp_path)
    repo = tmp_path / "repo"
    try:
        replay_and_check(payload, history, backend, tmp_path)
        messages = [m.strip() for m in backend.log(repo)] if "log" in backend.capabilities else []
        if messages:
            assert [*reversed(payload.messages)] == messages[1:]
            assert 11 == len(messages)
    finally:
        backend.close()


def test_a_replay_that_differs_from_its_source_is_an_error(source: Path, tmp_path: Path) -> None:
    """A backend that drops a deletion is caught by the tree check, naming the file."""
    payload = load_history_payload(f"history:{source}")
    backend = REGISTRY["git-pygit2"]()
    real = backend.replay

    def forgetful(path: Path, change: object, scratch: Path) -> None:
        import dataclasses

        real(path, dataclasses.replace(change, deletes=()), scratch)  # type: ignore[type-var]

    backend.replay = forgetful  # type: ignore[method-assign]
    (tmp_path / "scratch").mkdir()
    with pytest.raises(VcsbenchError, match=r"docs/readme.md: not in the source's tree"):
        payload.replay_into(backend, tmp_path / "repo", tmp_path / "scratch")


def test_a_history_is_measured_and_recorded(source: Path, tmp_path: Path) -> None:
    """``vcsbench run`` on a history: every round verified (commit: the source's next
    change's whole tree), the replay's cost and the source's identity in the result."""
    for name in ("git-pygit2", "svn-fs"):
        require_backend(name)
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("4", "git-pygit2,svn-fs,git-markus", "commit,log,clone",
                   f"history:{source},commits=6", fs=f"dir:{tmp_path}", out=out,
                   checks=True),  # the perturbation check builds the seed first (below)
        "--progress", "none",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr + result.stdout
    assert "git-markus × commit: skipped for history: payloads" in result.stdout + result.stderr
    found = [benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"]]
    assert 5 == len(found)  # svn-fs: no clone
    head = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "HEAD", "HEAD~1", "HEAD~6"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for bench in found:
        assert 0 == bench["errors"] and 4 == bench["verified"]
        history = bench["payload"]["history"]
        assert [head[0], head[1], head[2], 6] == [
            history["next"],
            history["last"],
            history["first"],
            history["commits"],
        ]
        assert 6 == bench["harness"]["replay"]["commits"]
        assert bench["harness"]["replay"]["commits_per_s"] > 0
    # one replay per backend variant in the run: the seed the first benchmark of it built
    # (here its perturbation check's bare loop, before its rounds) is copied by the rest
    reused = {(b["backend"]["name"], b["op"]): b["harness"]["replay"].get("reused", 0)
              for b in found}  # fmt: skip
    assert {1.0} == set(reused.values()), reused
    assert [] == [p for p in Path(os.environ["TMPDIR"]).iterdir() if "vcsbench" in p.name]


def test_a_sources_own_programs_never_run(tmp_path: Path) -> None:
    """A source's configuration names a filter and hooks; nothing of it runs, whatever
    the backend (its .gitattributes is replayed as a file)."""
    repo = make_history(tmp_path)
    marker = tmp_path / "ran"
    with open(repo / ".git" / "config", "a") as config:
        config.write(f'[filter "evil"]\n\tsmudge = touch {marker}\n\tclean = touch {marker}\n')
        config.write(f"[core]\n\tfsmonitor = touch {marker}\n")
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    (repo / ".gitattributes").write_text("* filter=evil\n")
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    for args in (["add", ".gitattributes"], ["-c", "filter.evil.clean=cat", "commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env={**os.environ, **env,
                        "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME":
                        "a", "GIT_COMMITTER_EMAIL": "a@b"})  # fmt: skip
    marker.unlink(missing_ok=True)
    result = vcsbench(
        *run_args("2", "git-cli", "clone,commit", f"history:{repo},commits=4",
                   fs=f"dir:{tmp_path}", out=tmp_path / "r.json"),
        "--progress", "none",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    assert not marker.exists()


@pytest.mark.parametrize(
    ("payload", "line"),
    [
        ("history:{src},commits=x", "commits='x' is not a whole number from 1 to 100,000"),
        ("history:{src},depth=3", "'depth=3' is not an option of history:; accepted: commits=N"),
        ("history:{src},commits=11", "has 10 commit(s) before HEAD on its first-parent line; "
         "give commits=10 or fewer"),
        ("history:{src},from=nosuch", "from='nosuch' names no commit in"),
        ("history:{tmp}", "is not a git, Subversion or Mercurial repository"),
        ("history:{tmp}/none", "is not a directory; give a git, Subversion or Mercurial"),
    ],
)  # fmt: skip
def test_a_bad_history_is_one_line(source: Path, tmp_path: Path, payload: str, line: str) -> None:
    result = vcsbench(
        *run_args("1", "git-pygit2", "log", payload.format(src=source, tmp=tmp_path),
                   fs=f"dir:{tmp_path}"),
    )  # fmt: skip
    assert 2 == result.returncode
    assert line in result.stderr
    assert 1 == len(result.stderr.strip().splitlines()), result.stderr


def test_a_symlink_out_of_the_tree_is_refused(tmp_path: Path) -> None:
    repo = make_history(tmp_path)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@b"}  # fmt: skip
    os.symlink("../../etc/passwd", repo / "lib" / "escape")
    for args in (
        ["add", "-A"],
        ["commit", "-qm", "escape"],
        ["commit", "-qm", "n", "--allow-empty"],
    ):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)
    with pytest.raises(VcsbenchError, match=r"symlink lib/escape points outside the tree"):
        load_history_payload(f"history:{repo},commits=3")


def _sdist(path: Path, top: str, files: dict[str, bytes], exec_name: str = "") -> None:
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as tar:
        for rel, data in files.items():
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size, info.mode = len(data), 0o755 if rel == exec_name else 0o644
            tar.addfile(info, io.BytesIO(data))


def test_a_corpus_is_built_from_its_releases_and_pinned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Release archives (a tar.gz, a zip) become one commit each, the last one's tree the
    last release's; a history that does not end in the pinned tip is not kept."""
    import hashlib
    import zipfile

    from vcsbench.workload import corpus

    monkeypatch.setenv("VCSBENCH_CORPUS", str(tmp_path / "cache"))
    dist = tmp_path / "cache" / "demo" / "dist"
    dist.mkdir(parents=True)
    _sdist(
        dist / "demo-1.tar.gz", "demo-1", {"a.py": b"one\n", "bin/run": b"#!/bin/sh\n"}, "bin/run"
    )
    with zipfile.ZipFile(dist / "demo-2.zip", "w") as zipped:
        zipped.writestr("demo-2/a.py", b"two\n")
        zipped.writestr("demo-2/b.py", b"new\n")
    _sdist(dist / "demo-3.tar.gz", "demo-3", {"c.py": b"two\n", "b.py": b"new\n"})
    releases = tuple(
        corpus.Release(v, f, hashlib.sha256((dist / f).read_bytes()).hexdigest(),
                       (dist / f).stat().st_size, 1_600_000_000 + i)
        for i, (v, f) in enumerate(
            [("1", "demo-1.tar.gz"), ("2", "demo-2.zip"), ("3", "demo-3.tar.gz")]
        )
    )  # fmt: skip
    manifest = corpus.Manifest("demo", "demo", "", releases)
    assert dist == corpus.fetch(manifest)  # every archive cached and matching: no download
    repo = corpus.build(manifest, dist)
    log = subprocess.run(
        ["git", "--git-dir", str(repo), "log", "--format=%s", "-M", "--name-status"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "demo 3" in log and "demo 1" in log
    assert "R100\ta.py\tc.py" in log  # the release's rename, as git finds it
    tree = subprocess.run(["git", "--git-dir", str(repo), "ls-tree", "-r", "main~2"],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "100755 blob" in tree and "bin/run" in tree
    tip = subprocess.run(["git", "--git-dir", str(repo), "rev-parse", "main"],
                         capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    pinned = corpus.Manifest("demo", "demo", "0" * 40, releases)
    with pytest.raises(VcsbenchError, match=f"ends in {tip}, not in the 0000"):
        corpus.build(pinned, dist)
    kept = corpus.build(corpus.Manifest("demo", "demo", tip, releases), dist)
    assert (kept / "HEAD").is_file() and not (kept.parent / "demo.git.building").exists()


def test_a_corpus_not_built_is_one_line(tmp_path: Path) -> None:
    result = vcsbench(
        *run_args("1", "git-pygit2", "log", "history:corpus:pytz", fs=f"dir:{tmp_path}"),
        env={"VCSBENCH_CORPUS": str(tmp_path / "none")},
    )  # fmt: skip
    assert 2 == result.returncode
    assert "corpus pytz is not built here" in result.stderr and "`make corpus`" in result.stderr
    assert 1 == len(result.stderr.strip().splitlines())


REACHERS = [name for name in REPLAYERS if "revisions" in REGISTRY[name].capabilities]


@pytest.mark.parametrize("name", REACHERS)
def test_every_backend_reaches_back_into_a_replayed_history(
    name: str, source: Path, tmp_path: Path
) -> None:
    """Revisions by number in a replayed history: a checkout of each old revision holds
    the source's files there; the diff from it to the newest turns its text files into the
    newest's; a working copy left there holds it, and an update brings it to the newest."""
    from vcsbench.workload.operation import tree_problems
    from vcsbench.workload.patches import revisions_patch_problems

    require_backend(name)
    payload = load_history_payload(f"history:{source}")
    history = read_history(payload.spec)
    backend = REGISTRY[name]()
    backend.ready(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    repo = tmp_path / "repo"
    ignores = backend.checkout_ignores()
    caps = backend.capabilities
    try:
        payload.replay_into(backend, repo, scratch)
        newest = backend.revision_id(repo, 10)
        for old in (1, 3, 6, 9):
            nodes = history.tree(old - 1)
            files = {rel: node.data for rel, node in nodes.items()}
            at = backend.revision_id(repo, old)
            out = tmp_path / f"checkout-{old}"
            backend.checkout_at(repo, out, scratch, at)
            assert [] == tree_problems(out, {**backend.created_files, **files}, ignores)
            if "diff" in caps:
                diff = backend.diff_between(repo, at, newest, scratch)
                assert [] == revisions_patch_problems(diff, nodes, history.tree(9)), diff
                # the same diff is not the one from the next revision on
                if old < 9 and history.tree(old) != nodes:
                    assert revisions_patch_problems(diff, history.tree(old), history.tree(9))
            if "update" in caps:
                wc = tmp_path / f"wc-{old}"
                backend.working_copy_at(repo, wc, scratch, at)
                assert [] == tree_problems(wc, {**backend.created_files, **files}, ignores)
                backend.update(wc, scratch)
                assert [] == tree_problems(wc, {**backend.created_files, **payload.files}, ignores)
        assert newest == backend.revision_id(repo, 10)  # the repository's tip is back
    finally:
        backend.close()


def test_operations_reach_back_and_are_verified(source: Path, tmp_path: Path) -> None:
    """``checkout[back=K]``, ``diff[back=K]`` and ``update[back=K]`` measured on a replayed
    history: every round verified against the source's trees; a backend without the
    operation is skipped saying so."""
    for name in ("git-pygit2", "svn-cli", "svn-fs"):
        require_backend(name)
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("3", "git-pygit2,svn-cli,svn-fs",
                   "checkout[back=6],diff[back=9],update[back=9]", f"history:{source},hello",
                   fs=f"dir:{tmp_path}", out=out),
        "--progress", "none",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr + result.stdout
    said = result.stdout + result.stderr
    assert "svn-fs × diff[back=9]: skipped, svn-fs has no diff" in said
    assert "svn-cli × update[back=9]: skipped for hello, back= reaches into a replayed" in said
    found = {
        (benchmark_part(b)["backend"]["name"], benchmark_part(b)["op"]):
        benchmark_part(b)
        for b in json.loads(out.read_text())["benchmarks"]
    }  # fmt: skip
    assert 7 == len(found), sorted(found)
    for bench in found.values():
        assert 0 == bench["errors"] and 3 == bench["verified"], bench


@pytest.mark.parametrize(
    ("ops", "payload", "line"),
    [
        ("diff[back=3]", "hello", "operation diff[back=3] reaches back into a replayed "
         "history, and payload 'hello' is not one; use a history:REPO payload or drop back="),
        ("checkout[back=0]", "hello", "operation option back='0' is not a whole number >= 1"),
        ("update[back=10]", "history:{src}", "replays 10 revisions, so back= must be below that"),
    ],
)  # fmt: skip
def test_reaching_back_wrongly_is_one_line(
    source: Path, tmp_path: Path, ops: str, payload: str, line: str
) -> None:
    result = vcsbench(
        *run_args("1", "git-pygit2", ops, payload.format(src=source), fs=f"dir:{tmp_path}"),
    )  # fmt: skip
    assert 2 == result.returncode
    assert line in result.stderr
    assert 1 == len(result.stderr.strip().splitlines()), result.stderr


def two_rounds(
    backend: Any, op_spec: str, payload: Any, tmp_path: Path, method: str, make_bad: Any
) -> list[list[str]]:
    """What verification found in a round as the runner makes it, then in one with the
    backend's ``method`` replaced by ``make_bad(backend)``."""
    from vcsbench.workload.operation import RoundPaths
    from vcsbench.workload.operations import make_operation

    for container in ("repos", "checkouts", "scratch"):
        (tmp_path / container).mkdir()
    found = []
    for index in (0, 1):
        paths = RoundPaths.of(tmp_path, index)
        paths.scratch.mkdir()
        op = make_operation(op_spec, backend, payload)
        op.prepare(paths)
        op.run(paths)
        found.append(op.verify(paths))
        setattr(backend, method, make_bad(backend))
    return found


@pytest.mark.parametrize(
    ("op_spec", "method", "make_bad"),
    [
        # the newest revision checked out, not the old one
        ("checkout[back=6]", "checkout_at",
         lambda b: lambda path, target, scratch, revision: b.checkout(path, target, scratch)),
        # the diff from one revision later than asked
        ("diff[back=9]", "diff_between",
         lambda b: lambda path, old, new, scratch: b.__class__.diff_between(
             b, path, b.revision_id(path, 2), new, scratch)),
        ("update[back=9]", "update", lambda b: lambda wc, scratch: None),
    ],
)  # fmt: skip
def test_reaching_back_is_verified_and_its_sabotage_caught(
    source: Path, tmp_path: Path, op_spec: str, method: str, make_bad: Any
) -> None:
    backend = REGISTRY["git-cli"]()
    backend.ready(tmp_path)
    payload = load_history_payload(f"history:{source}")
    try:
        found = two_rounds(backend, op_spec, payload, tmp_path, method, make_bad)
        assert [] == found[0]
        assert found[1], f"sabotaged {op_spec} passed verification"
    finally:
        backend.close()


def test_a_diff_between_revisions_is_read_hunk_by_hunk() -> None:
    """A file replaced by an equal one may be shown deleted and added whole (svn, for a
    node replaced by a copy); a hunk that changes what did not change, a changed file left
    out, or a deletion shown wrong is caught."""
    from vcsbench.backends.changes import Node
    from vcsbench.workload.patches import revisions_patch_problems

    old = {"same.txt": Node("file", b"a\nb\n"), "gone.txt": Node("file", b"x\n")}
    new = {"same.txt": Node("file", b"a\nb\n"), "new.txt": Node("file", b"n\n")}
    added = b"--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n"
    deleted = b"--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    replaced = b"--- a/same.txt\n+++ b/same.txt\n@@ -1,2 +1,2 @@\n-a\n-b\n+a\n+b\n"
    assert [] == revisions_patch_problems(added + deleted, old, new)
    assert [] == revisions_patch_problems(added + deleted + replaced, old, new)
    altered = b"--- a/same.txt\n+++ b/same.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
    assert ["same.txt: the diff applied to the old revision does not give the new"] == (
        revisions_patch_problems(added + deleted + altered, old, new)
    )
    assert ["gone.txt: changed, not in the diff"] == revisions_patch_problems(added, old, new)
    wrong = b"--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n"
    assert ["gone.txt: the diff applied to the old revision does not give the new"] == (
        revisions_patch_problems(added + wrong, old, new)
    )


def test_the_synthetic_history_is_the_same_on_every_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``history:synthetic:N``: N commits and the next, written once into the corpus cache
    by git fast-import from a seeded generator -- the same commit ids anywhere."""
    monkeypatch.setenv("VCSBENCH_CORPUS", str(tmp_path))
    payload = load_history_payload("history:synthetic:50")
    assert 50 == payload.identity["commits"] == payload.revisions
    assert "447f418f72dde52580e88e3b2df16e17c2b02de4" == payload.identity["last"]
    assert "fc259ba95b020257259ac7a5ebcce839ce0a364d" == payload.identity["next"]
    assert ["synthetic-50.git"] == [p.name for p in tmp_path.iterdir()]


def _lines(change: Any) -> Any:
    return lambda real: lambda *args: b"".join(change(real(*args).splitlines(keepends=True)))


WALKS = {  # an entry dropped, the last dropped, the first listed twice
    "topo-log[limit=7]": ("topo_log", _lines(lambda lines: lines[1:])),
    "rev-list": ("rev_list", _lines(lambda lines: lines[:-1])),
    "objects": ("objects", _lines(lambda lines: [*lines, lines[0]])),
}


@pytest.mark.parametrize("op_spec", list(WALKS))
@pytest.mark.parametrize("variant", ["git-cli[seed-graph=none,seed-pack=full]",
                                     "git-cli[seed-graph=write,seed-pack=bitmap]"])  # fmt: skip
def test_walks_are_verified_and_the_seed_holds_what_the_variant_asks(
    source: Path, tmp_path: Path, op_spec: str, variant: str
) -> None:
    """git's walks on a replayed history, read back by libgit2: each answer checked, and a
    sabotaged one (an entry dropped, an object listed twice) caught; the seed holds a
    commit-graph and a bitmap only where the variant writes them."""
    from vcsbench.backends import make_backend

    backend = make_backend(variant)
    backend.ready(tmp_path)
    payload = load_history_payload(f"history:{source}")
    method, make_bad = WALKS[op_spec]
    try:
        found = two_rounds(
            backend, op_spec, payload, tmp_path, method, lambda b: make_bad(getattr(b, method))
        )
        assert [] == found[0]
        assert found[1], f"sabotaged {op_spec} passed verification"
        info = tmp_path / "repos" / "r0000001" / ".git" / "objects"
        writes = "write" in variant
        assert writes == (info / "info" / "commit-graph").exists()
        assert writes == any((info / "pack").glob("pack-*.bitmap"))
        assert 1 == len(list((info / "pack").glob("pack-*.pack")))
    finally:
        backend.close()


@pytest.mark.serial
def test_the_runs_kept_seeds_go_with_it_and_after_a_sigkill_with_cleanup(
    source: Path, tmp_path: Path
) -> None:
    """The directory where a run keeps its seeds is its own: gone when the run ends, and
    after a SIGKILL removed by ``vcsbench cleanup`` (proved the run's by its marker)."""

    def kept() -> list[Path]:
        return [p for p in Path(os.environ["TMPDIR"]).iterdir() if p.name.startswith("vcsbench-")]

    def replayed() -> bool:
        """The seed's replay begun where the run keeps seeds: the moment to kill it."""
        return any(p.name.startswith("replay-") for box in kept() for p in box.iterdir())

    assert [] == kept()
    proc = subprocess.Popen(
        [sys.executable, "-m", "vcsbench.cli", "run", "--backends", "git-pygit2",
         "--ops", "log", "--payloads", f"history:{source}", "--repos", "100000",
         "--fs", f"dir:{tmp_path}", "--perturbation", "off", "--progress", "lines",
         "--out", str(tmp_path / "r.json")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not replayed() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        (box,) = kept()
        assert any(p.name.startswith("replay-") for p in box.iterdir())
    finally:
        proc.kill()
        proc.communicate(timeout=60)
    assert [box] == kept()  # a SIGKILL leaves it, with the state file that proves it ours
    cleaned = vcsbench("cleanup")
    assert 0 == cleaned.returncode, cleaned.stdout + cleaned.stderr
    assert [] == kept()


@pytest.mark.parametrize("variant", ["git-cli", "git-cli[objects=packed]"])
def test_a_git_cli_replay_makes_the_same_commits_every_time(
    source: Path, tmp_path: Path, variant: str
) -> None:
    """Committed at the source's time, not the clock's: two replays, one commit id (so a
    repository's packing after git's automatic gc is the same in every replay too)."""
    from vcsbench.backends import make_backend

    payload = load_history_payload(f"history:{source}")
    heads = []
    for n in (1, 2):
        backend = make_backend(variant)
        backend.ready(tmp_path)
        (tmp_path / f"s{n}").mkdir()
        payload.replay_into(backend, tmp_path / f"r{n}", tmp_path / f"s{n}")
        heads.append(backend.revision_id(tmp_path / f"r{n}", 10))
        backend.close()
    assert heads[0] == heads[1]


def _drop_first_path(real: Any) -> Any:
    def printed(path: Path) -> bytes:
        out: bytes = real(path)
        start = out.index(b"<path\n")  # the first changed path (not <paths>)
        return out[:start] + out[out.index(b"</path>", start) + len(b"</path>") :]

    return printed


def test_a_verbose_log_is_checked_against_svnlook(source: Path, tmp_path: Path) -> None:
    """``log[verbose=true]`` (svn log -v): the messages in order, and sampled revisions'
    changed paths against ``svnlook changed``; a path left out of the newest is caught."""
    from vcsbench.backends import make_backend

    backend = make_backend("svn-cli[seed-pack=full]")
    backend.ready(tmp_path)
    payload = load_history_payload(f"history:{source}")
    try:
        found = two_rounds(
            backend, "log[verbose=true]", payload, tmp_path, "log_verbose",
            lambda b: _drop_first_path(b.log_verbose),
        )  # fmt: skip
    finally:
        backend.close()
    assert [] == found[0]
    assert ["revision 10: the log names"] == [
        p[: len("revision 10: the log names")] for p in found[1]
    ]


def test_a_kept_seed_is_the_payloads_own(tmp_path: Path) -> None:
    """Two payloads in one run: each benchmark's seed is built from its own payload (the
    run keeps seeds by backend variant and payload), so each commit is verified."""
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("2", "git-pygit2", "commit", "hello,submission", fs=f"dir:{tmp_path}", out=out),
    )  # fmt: skip
    assert 0 == result.returncode, result.stdout[-3000:] + result.stderr
    found = [benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"]]
    assert [(0, 2), (0, 2)] == [(b["errors"], b["verified"]) for b in found]


def test_reports_name_a_history_by_what_it_is_not_by_its_path(source: Path, tmp_path: Path) -> None:
    """The report, its HTML, compare and the run's summary name the history by its last path
    part, and the environment says what it is: the commits, files, renames and deletions
    git itself counts in the same range (the first replayed commit is its whole tree)."""
    require_backend("git-pygit2")
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("2", "git-pygit2", "commit", f"history:{source},commits=6",
                   fs=f"dir:{tmp_path}", out=out),
        "--progress", "none",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr + result.stdout
    git = ["git", "-C", str(source)]
    changed = subprocess.run(
        [*git, "log", "--first-parent", "-M", "--format=", "--name-status", "HEAD~6..HEAD~1"],
        capture_output=True, text=True, check=True,
    ).stdout.split("\n")  # fmt: skip
    renames = sum(1 for line in changed if line.startswith("R"))
    deletions = sum(1 for line in changed if line.startswith("D"))
    files = len(subprocess.run(
        [*git, "ls-tree", "-r", "--name-only", "HEAD~1"], capture_output=True, text=True,
        check=True,
    ).stdout.split())  # fmt: skip
    assert renames >= 1
    shown = f"history:{source.name},commits=6"
    summary = result.stdout[result.stdout.index("\nbackend ") : result.stdout.index("results:")]
    assert shown in summary and str(source) not in summary
    report = vcsbench("report", str(out))
    assert 0 == report.returncode, report.stderr
    (line,) = [ln for ln in report.stdout.splitlines() if ln.startswith("- **payload**")]
    assert f"- **payload**: {shown}: git history of {source.name}: 6 commits replayed" in line, line
    assert f"{files} files at the last, {renames} renames, {deletions} deletions" in line, line
    outside = [ln for ln in report.stdout.splitlines() if "**command**" not in ln]
    assert not [ln for ln in outside if str(source) in ln]
    assert f"commit · payload {shown} · fs" in report.stdout
    compared = vcsbench("compare", str(out), str(out))
    assert shown in compared.stdout and str(source) not in compared.stdout
    html = vcsbench("report", str(out), "--format", "html", "--out", str(tmp_path / "h"))
    assert 0 == html.returncode, html.stderr
    page = (tmp_path / "h" / "report.html").read_text()
    assert page.count(str(source)) == page.count("--payloads")  # the command line only
