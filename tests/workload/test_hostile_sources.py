"""A history source built to hurt: sized and walked before a file's bytes are read, each
refusal one line, memory bounded whatever the source names.

Each source here is a few git objects written through libgit2: a file of hundreds of MiB
that compresses to almost nothing, the same blob under many names, a path ten thousand
directories deep, a tree whose subtrees name one subtree again and again, symlinks whose
targets leave the tree only once another link of the tree is followed."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from helpers import run_args, vcsbench

from vcsbench.errors import VcsbenchError
from vcsbench.results.layout import benchmark_part
from vcsbench.workload.history import load_history_payload
from vcsbench.workload.tree_bounds import MAX_FILE_BYTES, check_links

pygit2 = pytest.importorskip("pygit2")
BLOB, TREE, LINK = 0o100644, 0o040000, 0o120000


def zero_blob(repo: Any, size: int) -> Any:
    """A loose blob of ``size`` zero bytes, written compressed as it is hashed (never
    whole in memory): what a sparse file of that size becomes in git."""
    header = f"blob {size}\0".encode()
    sha, pack = hashlib.sha1(header), zlib.compressobj(1)
    chunk = bytes(1 << 20)
    scratch = Path(repo.path) / "objects" / "zero.tmp"
    with open(scratch, "wb") as out:
        out.write(pack.compress(header))
        left = size
        while left:
            part = chunk[: min(left, len(chunk))]
            sha.update(part)
            out.write(pack.compress(part))
            left -= len(part)
        out.write(pack.flush())
    name = sha.hexdigest()
    (Path(repo.path) / "objects" / name[:2]).mkdir(exist_ok=True)
    scratch.rename(Path(repo.path) / "objects" / name[:2] / name[2:])
    return pygit2.Oid(hex=name)


def tree_of(repo: Any, entries: dict[str, tuple[Any, int]]) -> Any:
    builder = repo.TreeBuilder()
    for name, (oid, mode) in entries.items():
        builder.insert(name, oid, mode)
    return builder.write()


def source_with(path: Path, build: Any) -> str:
    """A bare git repository of two commits: the tree ``build(repo)`` makes (the one
    replayed), and an empty change after it (the next); its history payload's name."""
    repo = pygit2.init_repository(str(path), bare=True, initial_head="main")
    tree = build(repo)
    who = pygit2.Signature("t", "t@example.org", 1_700_000_000, 0)
    first = repo.create_commit("refs/heads/main", who, who, "hostile", tree, [])
    repo.create_commit("refs/heads/main", who, who, "next", tree, [first])
    return f"history:{path},commits=1"


def refusal_and_peak(payload: str) -> tuple[str, int]:
    """The payload read in a process of its own: its refusal and its peak RSS (KiB)."""
    code = (  # VmHWM: this process's own peak (ru_maxrss keeps the parent's across exec)
        "import json, sys\n"
        "from vcsbench.errors import VcsbenchError\n"
        "from vcsbench.workload.history import load_history_payload\n"
        "try:\n"
        "    load_history_payload(sys.argv[1]); said = ''\n"
        "except VcsbenchError as exc:\n"
        "    said = str(exc)\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "print(json.dumps([said, int(hwm.split()[1])]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, payload], capture_output=True, text=True, timeout=300
    )
    assert 0 == done.returncode, done.stderr[-2000:]
    said, peak = json.loads(done.stdout)
    return said, peak


def test_a_file_larger_than_a_replay_takes_is_refused_from_its_header(tmp_path: Path) -> None:
    """300 MiB of zeros (a few hundred KiB in git): refused without inflating it; the
    reader's peak stays within 150 MiB (it held the file's bytes before: over 300 MiB)."""
    size = MAX_FILE_BYTES + (44 << 20)
    payload = source_with(
        tmp_path / "big", lambda repo: tree_of(repo, {"sparse.img": (zero_blob(repo, size), BLOB)})
    )
    said, peak = refusal_and_peak(payload)
    assert f"sparse.img is {size:,} bytes, more than the 256 MiB a replayed file may be" in said
    assert peak < 150 << 10, f"peak RSS {peak} KiB while refusing"


def test_a_tree_larger_than_a_replay_takes_is_refused_before_a_byte_is_read(
    tmp_path: Path,
) -> None:
    """One 250 MiB blob under nine names: 2.2 GiB of tree, each file within the per-file
    limit; refused from the headers (peak within 150 MiB; it was the tree's 2.2 GiB)."""

    def nine(repo: Any) -> Any:
        blob = zero_blob(repo, 250 << 20)
        return tree_of(repo, {f"copy{i}.img": (blob, BLOB) for i in range(9)})

    said, peak = refusal_and_peak(source_with(tmp_path / "nine", nine))
    total = 9 * (250 << 20)
    assert f"makes a tree of 9 files and {total:,} bytes, more than a replayed tree" in said
    assert peak < 150 << 10, f"peak RSS {peak} KiB while refusing"


def test_a_path_ten_thousand_deep_is_one_line(tmp_path: Path) -> None:
    def deep(repo: Any) -> Any:
        inner = tree_of(repo, {"f": (repo.create_blob(b"x\n"), BLOB)})
        for _ in range(10_000):
            inner = tree_of(repo, {"d": (inner, TREE)})
        return inner

    payload = source_with(tmp_path / "deep", deep)
    result = vcsbench(*run_args("1", "git-pygit2", "commit", payload, fs=f"dir:{tmp_path}"))
    assert 2 == result.returncode
    assert 1 == len(result.stderr.strip().splitlines()), result.stderr[-3000:]
    assert "directories deep, more than the 256 a replayed path may" in result.stderr


@pytest.mark.parametrize("where", ["first", "later"])
def test_a_name_longer_than_a_filesystem_takes_is_refused_up_front(
    tmp_path: Path, where: str
) -> None:
    """A 300-byte name, in the tree replayed first or in the commit after it: one line
    before any round, in every benchmark's stead (each write of it would fail with
    ENAMETOOLONG)."""
    long = "n" * 300
    path = tmp_path / "src"
    repo = pygit2.init_repository(str(path), bare=True, initial_head="main")
    blob = repo.create_blob(b"a\n")
    plain = tree_of(repo, {"ok.txt": (blob, BLOB)})
    hostile = tree_of(
        repo, {"ok.txt": (blob, BLOB), "d": (tree_of(repo, {long: (blob, BLOB)}), TREE)}
    )
    who = pygit2.Signature("t", "t@example.org", 1_700_000_000, 0)
    trees = (hostile, plain) if where == "first" else (plain, hostile)
    first = repo.create_commit("refs/heads/main", who, who, "one", trees[0], [])
    repo.create_commit("refs/heads/main", who, who, "two", trees[1], [first])
    payload = f"history:{path},commits=1"
    result = vcsbench(*run_args("1", REPLAYERS, "commit,log", payload, fs=f"dir:{tmp_path}"))
    assert 2 == result.returncode, result.stdout[-2000:]
    (line,) = result.stderr.strip().splitlines()
    assert "is 300 bytes, more than the 255 a file name may be" in line


def test_a_tree_of_subtrees_naming_one_subtree_is_refused_by_its_count(tmp_path: Path) -> None:
    """300 entries naming one subtree of 1,000 files: 300,000 files from 302 objects,
    refused as more than a tree's 200,000 before libgit2 lists them."""

    def bomb(repo: Any) -> Any:
        blob = repo.create_blob(b"x\n")
        thousand = tree_of(repo, {f"f{i}": (blob, BLOB) for i in range(1000)})
        return tree_of(repo, {f"d{i}": (thousand, TREE) for i in range(300)})

    payload = source_with(tmp_path / "bomb", bomb)
    with pytest.raises(VcsbenchError, match=r"more than 200,000 files") as caught:
        load_history_payload(payload)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("links", "bad"),
    [
        ({"u": b".", "x": b"u/u/u/../../etc/passwd"}, "x"),  # through u, twice, then up
        ({"d/up": b"..", "d/x": b"up/.."}, "d/x"),  # d/up/.. is d lexically; up is the root
        ({"a": b"b", "b": b"a"}, "a"),  # a loop: never resolved
        ({"a": b"../x"}, "a"),  # plainly out
    ],
)
def test_a_link_leaving_the_tree_through_another_link_is_refused(
    links: dict[str, bytes], bad: str
) -> None:
    with pytest.raises(VcsbenchError, match=f"symlink {bad} points outside the tree"):
        check_links(links, "here")


def test_links_through_links_that_stay_inside_are_kept() -> None:
    check_links({"lib/cur": b"v2", "lib/v2": b"../src", "top": b"lib/cur/main.c", "s": b"."}, "")


def test_a_source_whose_link_leaves_through_another_link_is_refused(tmp_path: Path) -> None:
    """The chain the lexical check let through, in a source: u -> . beside a target
    through u that climbs past the root once u is followed."""

    def chain(repo: Any) -> Any:
        return tree_of(
            repo,
            {
                "u": (repo.create_blob(b"."), LINK),
                "x": (repo.create_blob(b"u/u/../../etc/passwd"), LINK),
                "f": (repo.create_blob(b"x\n"), BLOB),
            },
        )

    with pytest.raises(VcsbenchError, match=r"symlink x points outside the tree .*through"):
        load_history_payload(source_with(tmp_path / "chain", chain))


def git_source(path: Path, files: dict[str, bytes | str], author: str = "a <a@b>") -> str:
    """A git work tree of two commits: ``files`` (a str value: a symlink to it), added
    by force whatever its own ignore files say, by ``author``; then one more file."""
    path.mkdir()
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    name, _, email = author.partition(" <")
    who = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email.rstrip(">"),
           "GIT_COMMITTER_NAME": "c", "GIT_COMMITTER_EMAIL": "c@d"}  # fmt: skip

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(path), *args], check=True, env={**env, **who},
                       capture_output=True)  # fmt: skip

    git("init", "-q", "-b", "main")
    for rel, data in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            (path / rel).symlink_to(data)
        else:
            (path / rel).write_bytes(data)
    git("add", "-A", "--force")
    git("commit", "-qm", "one")
    (path / "next.txt").write_text("next\n")
    git("add", "next.txt")
    git("commit", "-qm", "two")
    return f"history:{path},commits=1"


REPLAYERS = "git-pygit2,git-cli,svn-fs,svn-cli,hg-lib,hg-cli"


def test_an_ordinary_history_replays_into_every_backend(tmp_path: Path) -> None:
    """Symlinks to a file and to a directory (git-pygit2's clone and Mercurial's reader
    missed them), an author without an e-mail (libgit2 refuses to write one), files the
    tree's own ignore files name, committed all the same (`git add -A`, `hg commit
    --addremove` left them out): every operation's rounds pass in every backend."""
    _, _, benchmarks = run_history(
        tmp_path, "clone,commit,log,checkout",
        {"d/f.txt": b"x\n", "linkdir": "d", "linkfile": "d/f.txt", ".gitignore": b"*.log\n",
         ".hgignore": b"syntax: glob\n*.log\n", "build.log": b"kept\n"},
        author="student <>",
    )  # fmt: skip
    assert 22 == len(benchmarks)  # svn has no clone
    history = benchmark_part(benchmarks[0])["payload"]["history"]
    assert 1 == history["authors_without_email"]


def test_an_author_without_email_is_written_as_git_writes_one(tmp_path: Path) -> None:
    from vcsbench.backends import REGISTRY
    from vcsbench.backends.changes import Change, Node

    change = Change({"a.txt": Node("file", b"a\n")}, (), {}, "one", "student", 1_700_000_000, "s")
    with REGISTRY["git-pygit2"]() as backend:
        backend.create(tmp_path / "r")
        backend.replay(tmp_path / "r", change, tmp_path)
    shown = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "r"), "log", "-1", "--format=%an <%ae> %at %s"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert "student <> 1700000000 one" == shown


def run_history(
    tmp_path: Path, ops: str, files: dict[str, bytes | str], author: str = "a <a@b>"
) -> tuple[str, Any, list[Any]]:
    """A source of ``files`` run through every replaying backend: its payload, the run,
    and its benchmarks, each checked to have passed every round."""
    payload = git_source(tmp_path / "src", files, author)
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("1", REPLAYERS, ops, payload, fs="tmpfs", out=out), "--progress", "none"
    )
    assert 0 == result.returncode, result.stdout[-3000:] + result.stderr[-3000:]
    benchmarks = json.loads(out.read_text())["benchmarks"]
    assert all(benchmark_part(b)["errors"] == 0 for b in benchmarks)
    return payload, result, benchmarks


def test_a_history_holding_hgsub_is_skipped_for_mercurial_in_one_line(tmp_path: Path) -> None:
    """.hgsub, .hgsubstate and .gitmodules are plain files to git and Subversion; Mercurial
    would fetch the subrepositories .hgsub names (a clone reached for the network)."""
    payload, result, benchmarks = run_history(
        tmp_path, "commit,log",
        {"a.txt": b"a\n", ".hgsub": b"sub = https://example.invalid/sub\n",
         ".hgsubstate": b"0123456789012345678901234567890123456789 sub\n",
         ".gitmodules": b'[submodule "m"]\n\tpath = m\n\turl = https://example.invalid/m\n'},
    )  # fmt: skip
    for backend in ("hg-lib", "hg-cli"):
        assert (
            f"{backend} × commit: skipped, {payload} holds .hgsub, which {backend} cannot "
            "keep as a file: Mercurial reads it as subrepositories and fetches them"
        ) in result.stdout
    assert 8 == len(benchmarks)


def test_paths_that_turn_from_file_or_link_into_directory_and_back_replay_everywhere(
    tmp_path: Path,
) -> None:
    """A file and a symlink that become directories, and a directory that becomes a
    file, in one commit: every replaying backend records it (hg-cli's explicit add once
    clashed with the file still in its dirstate), every round verified."""
    src = tmp_path / "src"
    src.mkdir()
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b",
           "GIT_COMMITTER_NAME": "c", "GIT_COMMITTER_EMAIL": "c@d"}  # fmt: skip

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(src), *args], check=True, env=env, capture_output=True)

    git("init", "-q", "-b", "main")
    (src / "x").write_text("a file\n")
    (src / "l").symlink_to("x")
    (src / "d").mkdir()
    (src / "d" / "y").write_text("in a directory\n")
    git("add", "-A")
    git("commit", "-qm", "one")
    for rel in ("x", "l", "d/y"):
        (src / rel).unlink()
    (src / "d").rmdir()
    for rel in ("x", "l"):
        (src / rel).mkdir()
        (src / rel / "inside").write_text(f"{rel} is a directory now\n")
    (src / "d").write_text("a file now\n")
    git("add", "-A")
    git("commit", "-qm", "flips")
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("2", REPLAYERS, "commit", f"history:{src},commits=1", fs="tmpfs", out=out),
        "--progress", "none",
    )  # fmt: skip
    assert 0 == result.returncode, result.stdout[-2000:] + result.stderr
    benchmarks = json.loads(out.read_text())["benchmarks"]
    assert 6 == len(benchmarks)
    for bench in benchmarks:
        assert 0 == benchmark_part(bench)["errors"], bench["name"]


def test_attributes_that_convert_the_work_tree_skip_what_cannot_be_verified(
    tmp_path: Path,
) -> None:
    """``eol=crlf`` and ``ident`` in .gitattributes: git writes CRLF and an expanded $Id$
    into the work tree, whose check compares the committed bytes. Those (backend, operation)
    pairs are skipped, one line each, before anything runs; every other passes, status
    among them (it once looked for the next change's rewrite of a file it only adds)."""
    _, result, benchmarks = run_history(
        tmp_path, "checkout,clone,update,status,commit",
        {".gitattributes": b"*.txt text eol=crlf\n*.c ident\n", "a.txt": b"a\nb\n",
         "b.c": b"x $Id$ y\n"},
    )  # fmt: skip
    skipped = sorted(
        line.split(": skipped,")[0].removeprefix("vcsbench: ")
        for line in (result.stdout + result.stderr).splitlines()
        if ".gitattributes make" in line
    )
    assert skipped == [
        "git-cli × checkout", "git-cli × clone", "git-cli × status", "git-cli × update",
        "git-pygit2 × clone", "git-pygit2 × update",
    ]  # fmt: skip
    assert "(.gitattributes: *.c ident …)" in result.stdout + result.stderr
    ran = {b["name"].split("[", 1)[1].split("-history")[0] for b in benchmarks}
    assert "git-pygit2-checkout" in ran and "hg-cli-update" in ran and "svn-cli-status" in ran


def test_attributes_that_write_the_committed_bytes_skip_nothing(tmp_path: Path) -> None:
    _, result, _ = run_history(
        tmp_path, "checkout,clone,status",
        {".gitattributes": b"* text=auto\n*.bin binary\n# *.c ident\n", "a.txt": b"a\n"},
    )  # fmt: skip
    assert ".gitattributes make" not in result.stdout + result.stderr
