"""The built-in operations: each one's verification passes on the real backend and fails
when the operation is sabotaged; options; unified diffs read without a VCS."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import require_backend, run_args, vcsbench

from vcsbench.backends import REGISTRY, Backend, make_backend
from vcsbench.backends._svn import unpacked_shards
from vcsbench.bench.selection import Selection
from vcsbench.errors import VcsbenchError
from vcsbench.results.io import read
from vcsbench.workload.operation import HISTORY_FILE, RoundPaths
from vcsbench.workload.operations import (
    DEFAULT_OPS,
    OPS,
    OperationSpec,
    make_operation,
    operation_label,
)
from vcsbench.workload.patches import apply_hunks, parse_unified, patch_problems
from vcsbench.workload.payloads import load_payload

NEW_OPS = (
    "checkout",
    "clone",
    "update",
    "status",
    "log[history=4]",
    "diff",
    "gc[history=4]",
    "commit[history=4]",
    "add",
    "publish",
)


def prepare_round(
    op_spec: str, backend: Backend, tmp_path: Path, index: int = 0, payload: str = "submission"
) -> tuple[Any, RoundPaths]:
    """A round prepared as the runner does it, not run: the op and its paths."""
    for container in ("repos", "checkouts", "scratch"):
        (tmp_path / container).mkdir(parents=True, exist_ok=True)
    paths = RoundPaths.of(tmp_path, index)
    paths.scratch.mkdir()
    op = make_operation(op_spec, backend, load_payload(payload))
    op.prepare(paths)
    return op, paths


def run_round(
    op_spec: str, backend: Backend, tmp_path: Path, index: int = 0, payload: str = "submission"
) -> tuple[list[str], Any]:
    """One round as the runner does it (prepare, run, verify); the problems and the op."""
    op, paths = prepare_round(op_spec, backend, tmp_path, index, payload)
    op.run(paths)
    return op.verify(paths), op


def _overwrite_a_work_tree_file(original: Callable[..., None]) -> Callable[..., None]:
    def clone(path: Path, target: Path, scratch: Path) -> None:
        original(path, target, scratch)
        victim = sorted(p for p in target.rglob("*.py") if ".git" not in p.parts)[0]
        victim.write_bytes(b"not what was committed\n")

    return clone


def _drop_last(original: Callable[..., list[str]]) -> Callable[..., list[str]]:
    return lambda path: original(path)[:-1]


def _without_untracked(original: Callable[..., dict[str, str]]) -> Callable[..., dict[str, str]]:
    return lambda wc: {k: v for k, v in original(wc).items() if v != "?"}


def _one_added_line_changed(original: Callable[..., bytes]) -> Callable[..., bytes]:
    def diff(path: Path, scratch: Path) -> bytes:
        out = original(path, scratch)
        at = out.index(b"\n+", out.index(b"@@"))
        return out[: at + 2] + b"X" + out[at + 2 :]

    return diff


SABOTAGE: dict[str, tuple[str, Callable[[Any], Any]]] = {
    # op: (the backend method replaced, the replacement made from the real one)
    "checkout": ("checkout", _overwrite_a_work_tree_file),
    "clone": ("clone", _overwrite_a_work_tree_file),
    "update": ("update", lambda original: lambda wc, scratch: None),
    "status": ("status", _without_untracked),
    "log[history=4]": ("log_messages", _drop_last),  # the answer, read after the timing
    "diff": ("diff", _one_added_line_changed),
    "gc[history=4]": ("gc", lambda original: lambda path: None),
    "commit[history=4]": ("commit", None),  # replaced after prepare: the timed commit only
    "add": ("add", lambda original: lambda wc, paths: original(wc, paths[:-1])),
    "publish": ("publish", lambda original: lambda wc, files, message, scratch: None),
}


PAIRS = [
    (b, op) for op in NEW_OPS for b in REGISTRY if OperationSpec.parse(op).supported_by(REGISTRY[b])
]


@pytest.mark.parametrize(("backend_name", "op_spec"), PAIRS)
def test_each_operation_verifies_and_its_sabotage_is_caught(
    op_spec: str, backend_name: str, tmp_path: Path
) -> None:
    require_backend(backend_name)
    method, make_bad = SABOTAGE[op_spec]
    if op_spec.startswith("gc") and REGISTRY[backend_name].vcs == "svn":
        op_spec = "gc"  # svnadmin pack packs only full shards: 1,000 revisions
        # whose seed the bindings build in 3 s (svnmucc: 30 s); the rounds stay the
        # backend's own, from the same seed (the same files, one revision each)
        with make_backend("svn-fs") as builder:
            builder.ready(tmp_path)
            prepare_round(op_spec, builder, tmp_path, index=99)
    with make_backend(backend_name) as backend:
        backend.ready(tmp_path)
        problems, _ = run_round(op_spec, backend, tmp_path)
        assert problems == []
        # The second round, in the same workdir, reuses the history seed.
        if make_bad is None:
            # The commit is a no-op in the timed call only; prepare's commits are real.
            op, paths = prepare_round(op_spec, backend, tmp_path, 1)
            setattr(backend, method, lambda *a: None)
            op.run(paths)
            bad = op.verify(paths)
        else:
            setattr(backend, method, make_bad(getattr(backend, method)))
            bad, _ = run_round(op_spec, backend, tmp_path, index=1)
    assert bad, f"sabotaged {op_spec} on {backend_name} passed verification"


def test_rounds_verified_together_each_check_their_own_answer(tmp_path: Path) -> None:
    """Three log rounds verified as one batch (as the round loop verifies them): the first
    round's answer is planted wrong (one message short) and only it fails; a round whose
    answer this process never saw (an interleaved member's, run in a worker) says so
    rather than read another's -- and after maintenance its repository is still checked."""
    with make_backend("git-pygit2") as backend:
        backend.ready(tmp_path)
        op, first = prepare_round("log[history=3]", backend, tmp_path, 0)
        rounds = [first]
        for index in (1, 2):
            rounds.append(RoundPaths.of(tmp_path, index))
            rounds[-1].scratch.mkdir()
            op.prepare(rounds[-1])
        for paths in rounds[:2]:
            op.run(paths)
        printed = op.answer(first)  # libgit2's walk: the messages, newest first
        op.keep_answer(first, printed[1:])
        found = op.verify_many(rounds)
        assert found[0] == [
            "log gave 2 messages, the repository has 3; first difference at entry 0"
        ]
        assert found[1] == []
        assert found[2] == ["its timed call gave no answer in this process to check"]
        assert op.verify_kept(rounds) == [[], [], []]  # the repositories, after maintenance


def test_history_is_built_once_and_copied_into_each_round(tmp_path: Path) -> None:
    with make_backend("git-pygit2") as backend:
        backend.ready(tmp_path)
        calls = []
        real = backend.commit
        backend.commit = lambda *a: calls.append(1) or real(*a)  # type: ignore[method-assign]
        for index in range(3):
            op, paths = prepare_round("log[history=5]", backend, tmp_path, index)
            op.run(paths)
            printed = op.answer(paths)
            op.keep_answer(paths, printed)  # as the timed call left it, for verify
            assert op.verify(paths) == []
            assert backend.log_messages(printed) == [
                "vcsbench history 4",
                "vcsbench history 3",
                "vcsbench history 2",
                "vcsbench history 1",
                "vcsbench commit",
            ]
    assert len(calls) == 5  # the seed's five commits, once for three rounds
    repos = sorted((tmp_path / "repos").iterdir())
    assert [r.name for r in repos] == ["r0000000", "r0000001", "r0000002"]
    for repo in repos:
        count = subprocess.run(
            ["git", "--git-dir", str(repo), "rev-list", "--count", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert count.stdout.strip() == "5"
        head = subprocess.run(
            ["git", "--git-dir", str(repo), "cat-file", "-p", f"HEAD:{HISTORY_FILE}"],
            capture_output=True,
            check=True,
        )
        assert head.stdout == b"history 4\n"


@pytest.mark.parametrize("backend_name", ["svn-fs", "git-pygit2", "git-markus", "hg-lib"])
def test_a_repository_with_one_commit_is_built_once_and_each_copy_is_its_own(
    backend_name: str, tmp_path: Path
) -> None:
    require_backend(backend_name)
    with make_backend(backend_name) as backend:
        backend.ready(tmp_path)
        creates = []
        real = backend.create
        backend.create = lambda *a: creates.append(1) or real(*a)  # type: ignore[method-assign]
        for index in range(3):
            problems, _ = run_round("commit", backend, tmp_path, index)
            assert problems == []
        assert len(creates) == 1  # the seed, once for three rounds
        payload = load_payload("submission")
        repos = [RoundPaths.of(tmp_path, i).repo for i in range(4)]
        # A fourth round prepared, not run: the payload alone; the others' commits are not in it.
        op, _ = prepare_round("commit", backend, tmp_path, 3)
        assert backend.verify(repos[3], dict(payload.files)) == []
        assert backend.verify(repos[3], op.expected()) != []
        assert backend.verify(repos[1], op.expected()) == []


def test_a_seed_whose_build_failed_is_built_again_not_copied(tmp_path: Path) -> None:
    with make_backend("git-pygit2") as backend:
        backend.ready(tmp_path)
        real = backend.commit

        def broken(*args: Any) -> None:
            raise OSError("disk full")

        backend.commit = broken  # type: ignore[method-assign]
        with pytest.raises(OSError, match="disk full"):
            run_round("commit", backend, tmp_path, 0)
        backend.commit = real  # type: ignore[method-assign]
        problems, _ = run_round("commit", backend, tmp_path, 1)
        assert problems == []
        assert sorted(p.name for p in (tmp_path / "seeds" / "history-1").iterdir()) == [
            "repo",
            "scratch",
        ]


def test_a_copied_git_work_tree_has_an_index_that_matches_its_files(tmp_path: Path) -> None:
    """Else the timed ``git commit`` would read every file again to find it unchanged."""
    require_backend("git-cli")
    with make_backend("git-cli") as backend:
        backend.ready(tmp_path)
        for index in range(2):  # the first round builds the seed; the second is a copy
            problems, _ = run_round("commit", backend, tmp_path, index)
            assert problems == []
        _, paths = prepare_round("commit", backend, tmp_path, 2)
    listing = subprocess.run(
        ["git", "-C", str(paths.repo), "ls-files", "--debug"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    indexed: dict[str, int] = {}
    name = ""
    for line in listing.splitlines():
        if not line.startswith(" "):
            name = line
        elif "ino:" in line:
            indexed[name] = int(line.split("ino:")[1])
    files = load_payload("submission").files
    assert set(indexed) == set(files)
    assert indexed == {rel: (paths.repo / rel).stat().st_ino for rel in files}


def test_commit_into_history_has_the_history_and_the_change(tmp_path: Path) -> None:
    with make_backend("svn-fs") as backend:
        backend.ready(tmp_path)
        problems, op = run_round("commit[history=6]", backend, tmp_path)
        assert problems == []
        repo = tmp_path / "repos" / "r0000000"
        youngest = subprocess.run(
            ["svnlook", "youngest", str(repo)], capture_output=True, text=True, check=True
        )
        assert youngest.stdout.strip() == "7"  # 6 revisions of history and the one timed
        assert set(op.expected()) == set(load_payload("submission").files) | {
            HISTORY_FILE,
            "vcsbench-added.txt",
        }


def test_svn_pack_verification_reads_the_shards(tmp_path: Path) -> None:
    """``unpacked_shards`` on a repository of shard size 4: 9 revisions are two full
    shards; unpacked they are named, and after ``svnadmin pack`` nothing is."""
    import svn.core
    import svn.fs
    import svn.repos

    repo = tmp_path / "repo"
    pool = svn.core.Pool()
    svn.repos.create(str(repo), None, None, None, {svn.fs.CONFIG_FSFS_SHARD_SIZE: "4"}, pool)
    pool.destroy()
    with make_backend("svn-fs") as backend:
        backend.ready(tmp_path)
        for i in range(9):
            backend.commit(repo, {"f.txt": b"%d\n" % i}, f"c{i}", tmp_path)
    assert unpacked_shards(repo) == [
        "shard 0 (r0-r3) is not packed",
        "shard 1 (r4-r7) is not packed",
    ]
    subprocess.run(["svnadmin", "pack", "-q", str(repo)], check=True)
    assert unpacked_shards(repo) == []


def test_git_gc_verification_counts_loose_objects(tmp_path: Path) -> None:
    with make_backend("git-cli") as backend:
        backend.ready(tmp_path)
        repo = tmp_path / "repo"
        backend.create(repo)
        backend.commit(repo, {"a.txt": b"a\n", "d/b.txt": b"b\n"}, "m", tmp_path)
        # a.txt, b.txt, two trees and the commit: five loose objects, no pack.
        assert backend.storage_problems(repo) == [
            f"5 loose objects left in {repo / '.git' / 'objects'}",
            f"no pack in {repo / '.git' / 'objects' / 'pack'}",
        ]
        backend.gc(repo)
        assert backend.storage_problems(repo) == []


GIT_DIFF = b"""diff --git a/a.txt b/a.txt
index 1..2 100644
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 one
-two
+zwei
 three
diff --git a/new.txt b/new.txt
new file mode 100644
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+++ this line looks like a header
+last
\\ No newline at end of file
diff --git a/img.bin b/img.bin
Binary files a/img.bin and b/img.bin differ
"""

SVN_DIFF = b"""Modified: a.txt
===================================================================
--- a.txt\t2026-11-23 13:10:56 UTC (rev 1)
+++ a.txt\t2026-11-23 13:10:56 UTC (rev 2)
@@ -1,3 +1,3 @@
 one
-two
+zwei
 three
Added: new.txt
===================================================================
--- new.txt\t                        (rev 0)
+++ new.txt\t2026-11-23 13:10:56 UTC (rev 2)
@@ -0,0 +1,2 @@
+++ this line looks like a header
+last
\\ No newline at end of file
"""

OLD = {"a.txt": b"one\ntwo\nthree\n", "img.bin": b"\0\1"}
NEW = {"a.txt": b"one\nzwei\nthree\n", "new.txt": b"++ this line looks like a header\nlast"}


def test_git_and_svn_unified_diffs_are_read_by_their_hunk_counts() -> None:
    git = parse_unified(GIT_DIFF)
    assert sorted(git) == ["a.txt", "img.bin", "new.txt"]
    assert git["img.bin"] == []
    assert git["new.txt"] == [(0, [(b"+", b"++ this line looks like a header\n"), (b"+", b"last")])]
    svn = parse_unified(SVN_DIFF)
    assert sorted(svn) == ["a.txt", "new.txt"]
    assert svn["a.txt"] == git["a.txt"]
    for rel, new in NEW.items():
        assert apply_hunks(OLD.get(rel, b""), svn[rel]) == new


def test_a_diff_that_does_not_give_the_new_content_is_named() -> None:
    assert patch_problems(SVN_DIFF, OLD, NEW) == []
    assert patch_problems(GIT_DIFF, OLD, {**NEW, "img.bin": b"\0\2"}) == []
    wrong = SVN_DIFF.replace(b"+zwei", b"+drei")
    assert patch_problems(wrong, OLD, NEW) == [
        "a.txt: the diff applied to the parent does not give the new content"
    ]
    stale_context = SVN_DIFF.replace(b" three", b" four")
    assert patch_problems(stale_context, OLD, NEW)[0].startswith("a.txt:")
    assert patch_problems(b"", OLD, NEW) == [
        "the diff names [], the revision changed ['a.txt', 'new.txt']"
    ]


def test_operation_options_are_checked_and_defaults_left_out_of_the_name() -> None:
    assert operation_label("log[history=100]") == "log"
    assert operation_label("log[history=7]") == "log[history=7]"
    assert operation_label("commit") == "commit"
    with pytest.raises(VcsbenchError, match=r"history='0' is not a whole number >= 1"):
        operation_label("gc[history=0]")
    with pytest.raises(VcsbenchError, match=r"unknown option 'history' for operation create"):
        operation_label("create[history=3]")
    with pytest.raises(VcsbenchError, match=r"unknown operation 'blame'; known: create"):
        operation_label("blame")
    with pytest.raises(VcsbenchError, match="name one operation twice"):
        Selection.parse(ops="log,log[history=100]", fs="dir:/tmp")


def test_default_ops_and_all() -> None:
    assert [op.text for op in Selection.parse(fs="dir:/tmp").ops] == list(DEFAULT_OPS)
    assert [op.text for op in Selection.parse(ops="all", fs="dir:/tmp").ops] == list(OPS)
    assert set(OPS) >= {"clone", "update", "status", "log", "diff", "gc"}


def test_new_operations_reach_the_results_under_their_labels(tmp_path: Path) -> None:
    out = tmp_path / "ops.json"
    proc = vcsbench(
        *run_args(
            "2",
            "git-pygit2,svn-cli",
            "update,log[history=3],diff,status",
            fs=f"dir:{tmp_path}",
            out=out,
        ),
        "--progress=none",
    )
    assert proc.returncode == 0, proc.stderr
    run = read(out)
    rows = sorted((b.backend.variant, b.op, b.repos, b.verified, b.errors) for b in run.benchmarks)
    assert rows == [
        (backend, op, 2, 2, 0)
        for backend in ("git-pygit2", "svn-cli")
        for op in ("diff", "log[history=3]", "status", "update")
    ]


def test_the_running_page_operation_table_is_the_registrys() -> None:
    from helpers import REPO

    from vcsbench.workload.operations import markdown_table

    assert markdown_table() in (REPO / "docs" / "running.md").read_text()
