"""The Subversion reader process: what it catches, that copies cannot fool it, that a lost
reader fails the round it was reading and is started again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import require_backend

from vcsbench.backends import make_backend
from vcsbench.backends.files import digest
from vcsbench.backends.svn_verifier import SvnVerifier

HELLO = {"test.txt": b"hello world"}


@pytest.fixture(autouse=True)
def _svn_fs() -> None:
    require_backend("svn-fs")


def _repo(tmp_path: Path, name: str, files: dict[str, bytes]) -> Path:
    (tmp_path / "scratch").mkdir(exist_ok=True)
    with make_backend("svn-fs") as backend:
        backend.create(tmp_path / name)
        backend.commit(tmp_path / name, files, "first", tmp_path / "scratch")
    return tmp_path / name


def _answer_none_and_exit(reader: SvnVerifier) -> None:
    """Put in place of ``reader``'s process one that takes a request and exits."""
    reader._end()
    reader._proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.readline()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    reader._owner = os.getpid()


def test_reads_each_file_back_as_its_size_and_sha256(tmp_path: Path) -> None:
    files = {"a.txt": b"a" * 1000, "d/e/b.bin": bytes(range(256)) * 3}
    repo = _repo(tmp_path, "repo", files)
    with make_backend("svn-fs") as backend:
        assert backend._reader is not None  # type: ignore[attr-defined]
        youngest, got = backend._reader.read(repo, ["a.txt", "d/e/b.bin", "d", "gone"])  # type: ignore[attr-defined]
    assert youngest == 1
    assert got == {
        "a.txt": (1000, digest(files["a.txt"])[1]),
        "d/e/b.bin": (768, digest(files["d/e/b.bin"])[1]),
        "d": None,  # a directory is not a file
        "gone": None,
    }


def test_fsx_repositories_are_read_back_too(tmp_path: Path) -> None:
    """FSX (Subversion's experimental back end) cannot read without libsvn's in-memory
    cache: the reader keeps a small one, a namespace of its own per open."""
    files = {"a.txt": b"a" * 1000, "d/b.txt": b"b\n"}
    (tmp_path / "scratch").mkdir()
    with make_backend("svn-fs[fs-type=fsx]") as backend:
        repos = [tmp_path / f"r{i}" for i in range(3)]
        for i, repo in enumerate(repos):
            backend.create(repo)
            backend.commit(repo, {**files, "n.txt": b"%d" % i}, "first", tmp_path / "scratch")
        assert (repos[0] / "db" / "fs-type").read_text().startswith("fsx")
        wanted = [(repo, {**files, "n.txt": b"%d" % i}) for i, repo in enumerate(repos)]
        assert backend.verify_many(wanted) == [[], [], []]
        assert backend.verify(repos[1], {**files, "n.txt": b"0"}) == [
            "n.txt: content differs (1 bytes, expected 1)"
        ]


def test_a_flipped_byte_in_the_revision_file_fails_verification(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "repo", HELLO)
    rev = repo / "db" / "revs" / "0" / "1"
    data = rev.read_bytes()
    assert data.count(b"hello world") == 1  # stored literally (too short to compress)
    os.chmod(rev, 0o644)
    rev.write_bytes(data.replace(b"hello world", b"hellO world"))
    with make_backend("svn-fs") as backend:
        problems = backend.verify(repo, HELLO)
    assert len(problems) == 1
    assert problems[0].startswith("could not read the newest revision")
    assert "checksum mismatch" in problems[0].lower()


def test_copies_sharing_a_uuid_are_each_read_from_their_own_files(tmp_path: Path) -> None:
    original = _repo(tmp_path, "original", HELLO)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    assert (copy / "db" / "uuid").read_text() == (original / "db" / "uuid").read_text()
    with make_backend("svn-fs") as backend:
        assert backend.verify(original, HELLO) == []
        backend.commit(copy, {"test.txt": b"changed"}, "second", tmp_path / "scratch")
        # One reader process read the original first; the copy must not be served from it.
        assert backend.verify(copy, {"test.txt": b"changed"}) == []
        assert backend.verify(copy, HELLO) == ["test.txt: content differs (7 bytes, expected 11)"]
        assert backend.verify(original, HELLO) == []


def test_a_reader_that_dies_fails_that_round_and_the_next_one_starts_again(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path, "repo", HELLO)
    with make_backend("svn-fs") as backend:
        reader = backend._reader  # type: ignore[attr-defined]
        assert backend.verify(repo, HELLO) == []
        first = reader._proc.pid
        reader._proc.kill()
        reader._proc.wait()
        # The dead reader is noticed before the request, and a new one answers.
        assert backend.verify(repo, HELLO) == []
        assert reader._proc.pid != first
        # A reader that ends while reading (here: one that takes the request and exits)
        # fails that round; the next round has a new reader.
        _answer_none_and_exit(reader)
        problems = backend.verify(repo, HELLO)
        assert problems == [
            "could not read the newest revision: VerifierLost: the Subversion reader "
            "process ended while reading this repository"
        ]
        assert backend.verify(repo, HELLO) == []
    assert reader._proc is None  # closed with the backend


def test_without_the_bindings_svnadmin_dump_verifies(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "repo", HELLO)
    with make_backend("svn-cli") as backend:
        backend._reader = None  # type: ignore[attr-defined]
        assert backend.verify(repo, HELLO) == []
        assert backend.verify(repo, {"test.txt": b"x"}) == [
            "test.txt: content differs (11 bytes, expected 1)"
        ]


def _flip(repo: Path) -> None:
    rev = repo / "db" / "revs" / "0" / "1"
    os.chmod(rev, 0o644)
    rev.write_bytes(rev.read_bytes().replace(b"hello world", b"hellO world"))


def test_many_repositories_at_once_each_get_their_own_answer(tmp_path: Path) -> None:
    """verify_many sends several repositories to two readers before reading an answer:
    each answer still lands on the repository it was for."""
    repos = [_repo(tmp_path, f"r{i}", HELLO) for i in range(9)]
    _flip(repos[3])
    with make_backend("svn-fs") as backend:
        backend.commit(repos[6], {"test.txt": b"changed"}, "second", tmp_path / "scratch")
        results = backend.verify_many([(repo, HELLO) for repo in repos])
        readers = [backend._reader, *backend._readers]  # type: ignore[attr-defined]
        assert len({r._proc.pid for r in readers}) == min(2, os.cpu_count() or 1)
    assert [bool(problems) for problems in results] == [i in (3, 6) for i in range(9)]
    assert "checksum mismatch" in results[3][0].lower()
    assert results[6] == ["test.txt: content differs (7 bytes, expected 11)"]


def test_a_reader_lost_with_answers_owed_fails_those_and_only_those(tmp_path: Path) -> None:
    repos = [_repo(tmp_path, f"r{i}", HELLO) for i in range(6)]
    with make_backend("svn-fs") as backend:
        reader = backend._reader  # type: ignore[attr-defined]
        assert backend.verify(repos[0], HELLO) == []
        # A reader that takes one request and exits: the repositories sent to it all fail
        # (none is answered by a reader started meanwhile); the other reader's are read.
        _answer_none_and_exit(reader)
        results = backend.verify_many([(repo, HELLO) for repo in repos])
        if (os.cpu_count() or 1) >= 2:  # repositories alternate between the two readers
            assert [bool(p) for p in results] == [True, False, True, False, True, False]
        else:
            assert all(results)
        lost = [p for p in results if p]
        assert all(p[0].endswith("VerifierLost: the Subversion reader process ended while "
                                  "reading this repository") for p in lost)  # fmt: skip
        assert backend.verify_many([(repo, HELLO) for repo in repos]) == [[]] * 6


def test_workers_use_the_readers_their_spawner_lent_and_new_ones_after_one_dies(
    tmp_path: Path,
) -> None:
    """Round workers forked one at a time share the readers their spawner started (no
    reader start per worker); a worker that ends without a clean exit may leave answers
    owed, so the next one is lent new readers, and every answer is still its own."""
    from vcsbench.bench.workers import Spawner, WorkerExit

    repos = [_repo(tmp_path, f"r{i}", {"test.txt": f"repo {i}".encode()}) for i in range(4)]
    backend = make_backend("svn-fs")
    items = [(repo, {"test.txt": f"repo {i}".encode()}) for i, repo in enumerate(repos)]

    def work(first: int, count: int, total: int, send: object) -> None:
        readers = [backend._reader, *backend._readers]  # type: ignore[attr-defined]
        problems = backend.verify_many(items)
        pids = sorted(r._proc.pid for r in readers)
        lent = [(r._owner, r._lent) for r in readers] == [(os.getppid(), True)] * len(readers)
        send((first, problems, pids, lent))  # type: ignore[operator]
        if first == 1:  # dies with a request owed to its readers
            readers[0].send(repos[0], ["test.txt"])
            os._exit(3)
        os._exit(0)

    spawner = Spawner(work, backend.lend_helpers)
    try:
        seen = []
        for first in range(3):
            spawner.start_worker(first, 1, 3)
            while not isinstance(message := spawner._results.recv(), WorkerExit):
                if message[0] != "started":
                    seen.append(message)
        assert [problems for _, problems, _, _ in seen] == [[[]] * 4] * 3
        assert all(lent for *_, lent in seen), seen
        pids = [tuple(p) for _, _, p, _ in seen]
        assert len(pids[0]) == min(2, os.cpu_count() or 1)
        assert pids[0] == pids[1]  # the second worker used the first one's readers
        assert not set(pids[2]) & set(pids[1])  # after it died: new ones
    finally:
        spawner.stop()
        backend.close()
