"""Pre-aged sandboxes and repository layouts: N valid repositories where the rounds' layout
puts them, figures of the measured rounds unchanged by what was filled in, teardown timed."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from helpers import require_backend, run_args, vcsbench

from vcsbench.backends import make_backend
from vcsbench.results import read
from vcsbench.workload.age import fill
from vcsbench.workload.operation import RoundPaths


@pytest.mark.parametrize("backend_name", ["git-pygit2", "git-markus", "svn-fs", "hg-cli"])
@pytest.mark.parametrize("layout", ["flat", "hashed"])
def test_age_fills_n_valid_repositories_where_the_layout_puts_them(
    backend_name: str, layout: str, tmp_path: Path
) -> None:
    require_backend(backend_name)
    seen: list[tuple[int, int]] = []
    with make_backend(backend_name) as backend:
        backend.ready(tmp_path)
        info = fill(
            backend,
            tmp_path,
            23,
            layout,
            lambda done, total, _t, unit: seen.append((done, total)),
            processes=2,
        )
        repos = [RoundPaths.of(tmp_path, i, layout).repo for i in range(23)]
        for repo in repos:
            assert backend.verify(repo, {}) == [], repo
        # Each is a working repository of its own: a commit into one shows in it alone.
        backend.commit(repos[7], {"a.txt": b"seven\n"}, "m", tmp_path)
        assert backend.verify(repos[7], {"a.txt": b"seven\n"}) == []
        assert backend.verify(repos[8], {"a.txt": b"seven\n"}) == ["a.txt: missing"]
    assert info["repos"] == 23 and seen[-1] == (23, 23)
    placed = sorted(p for p in (tmp_path / "repos").rglob("*") if p in set(repos))
    assert len(placed) == 23
    if layout == "hashed":
        assert all(r.parent.parent.parent.name == "@hashed" for r in repos)
        assert all(len(r.name) == 64 and r.parent.name == r.name[2:4] for r in repos)
    else:
        assert [r.name for r in repos] == [f"r{i:07d}" for i in range(23)]


def run(tmp_path: Path, name: str, *extra: str) -> object:
    out = tmp_path / f"{name}.json"
    result = vcsbench(
        # create: its footprint is the same in every round (a commit's object ids, and so
        # its fan-out directories, vary with the time in it).
        *run_args("4"),
        "--fs",
        f"dir:{tmp_path}",
        "--progress",
        "none",
        "--out",
        str(out),
        *extra,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    return read(out).benchmarks[0]


def test_an_aged_run_measures_its_own_rounds_only(tmp_path: Path) -> None:
    plain = run(tmp_path, "plain")
    aged = run(tmp_path, "aged", "--age", "40", "--layout", "hashed")
    assert (aged.age, aged.layout, plain.age, plain.layout) == (40, "hashed", 0, "flat")  # type: ignore[attr-defined]
    assert (aged.harness.age or {})["repos"] == 40  # type: ignore[attr-defined]
    for metric in ("footprint_inodes", "footprint_content", "footprint_allocated"):
        # The 40 repositories filled in are not the rounds' footprint.
        assert aged.per_repo(metric) == plain.per_repo(metric), metric  # type: ignore[attr-defined]
    for bench in (plain, aged):
        teardown = bench.harness.teardown_s  # type: ignore[attr-defined]
        assert isinstance(teardown, float) and teardown > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--age", "-1"), "age '-1' is not a whole number >= 0 or a population "
         "(term:students=S,assignments=A,commits=LO-HI)"),
        (("--age", "many"), "age 'many' is not a whole number >= 0 or a population "
         "(term:students=S,assignments=A,commits=LO-HI)"),
        (("--layout", "deep"), "layout 'deep' is not one of flat, hashed"),
    ],
)  # fmt: skip
def test_bad_age_or_layout_is_one_line(args: tuple[str, str], message: str) -> None:
    result = vcsbench("run", *args)
    assert result.returncode == 2
    assert result.stderr.strip() == f"vcsbench: error: {message}"


def test_an_age_the_sandbox_cannot_hold_is_refused_before_filling(tmp_path: Path) -> None:
    from vcsbench.errors import VcsbenchError
    from vcsbench.measure.footprint import footprint
    from vcsbench.workload.age import check_room

    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "f").write_bytes(b"x" * 5000)
    st = os.statvfs(tmp_path)
    # twice the room there is: another test's worker may free some between the two reads
    count = 2 * (st.f_bavail * st.f_frsize // footprint(seed).allocated_bytes + 1)
    with pytest.raises(VcsbenchError) as caught:
        check_room(seed, tmp_path, count, "dir:/x")
    message = str(caught.value)
    assert message.startswith(f"--age {count:,} needs {2 * count:,} inodes and ")
    assert "in the sandbox dir:/x, which has " in message and "\n" not in message
    check_room(seed, tmp_path, 10, "dir:/x")  # room for ten


def test_the_hashed_layout_counts_its_fan_out_directories_in_the_room_it_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vcsbench.errors import VcsbenchError
    from vcsbench.workload import age

    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "f").write_bytes(b"x")  # 2 inodes a copy
    real = os.statvfs

    def inodes_free(free: int) -> None:
        # 4 KiB blocks, 1 TiB free: only the inodes are short
        fake = os.statvfs_result((4096, 4096, 1 << 28, 1 << 28, 1 << 28, 1000, free, free, 0, 255))
        monkeypatch.setattr(age.os, "statvfs", lambda p: fake if p == tmp_path else real(p))

    inodes_free(39)  # 10 copies: 20 inodes, and 10 + 10 fan-out directories at most
    with pytest.raises(VcsbenchError, match="--age 10 needs 40 inodes and "):
        age.check_room(seed, tmp_path, 10, "dir:/x", "hashed")
    age.check_room(seed, tmp_path, 10, "dir:/x", "flat")
    inodes_free(40)
    age.check_room(seed, tmp_path, 10, "dir:/x", "hashed")


def _no_space(task: object) -> int:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_filling_that_fails_is_one_line_naming_the_room_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vcsbench.errors import VcsbenchError
    from vcsbench.workload import age

    monkeypatch.setattr(age, "_fill_chunk", _no_space)  # in the filling processes too
    with make_backend("git-pygit2") as backend, pytest.raises(VcsbenchError) as caught:
        fill(backend, tmp_path, 5000, "flat", processes=2, sandbox="ext4:size=1G")
    assert str(caught.value).startswith(
        "--age 5,000: filling the sandbox ext4:size=1G failed after about 0 repositories "
        "(No space left on device); it has "
    )
