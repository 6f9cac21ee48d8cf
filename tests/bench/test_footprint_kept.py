"""The footprint as a server keeps it: known maintenance reported to the byte, and the
real tools' (git gc, svnadmin pack) against the same command run by hand."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from fakes import FILE_BYTES, FILES, FakeBackend, KnownWrite, write_plainly
from helpers import require_backend

from vcsbench.backends import REGISTRY
from vcsbench.backends.base import Backend
from vcsbench.bench.plan import RoundPlan
from vcsbench.bench.policy import KeptPolicy
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.errors import VcsbenchError
from vcsbench.results.model import Benchmark
from vcsbench.sandbox import Sandbox, parse_fs_spec
from vcsbench.workload.operations import make_operation
from vcsbench.workload.payloads import load_payload

LOOSE = 5
"""Files of 4 KiB the packing fake writes beside the payload, which its maintenance packs
into one file of half their bytes."""
PACKED = LOOSE * 4096 // 2


class PackingBackend(FakeBackend):
    """Commits as the fake does, plus ``LOOSE`` loose files in ``loose/``; its maintenance
    replaces them with one ``pack`` of ``PACKED`` bytes (``mode=fail``: it fails;
    ``mode=corrupt``: it damages the payload)."""

    name = "fake-packing"
    option_defaults = {"corrupt": "false", "mode": "pack"}  # noqa: RUF012

    def commit(self, path: Path, files: dict[str, bytes], message: str, scratch: Path) -> None:
        super().commit(path, files, message, scratch)
        (path / "loose").mkdir()
        for i in range(LOOSE):
            write_plainly(path / "loose" / f"o{i}", b"l" * 4096)

    def kept_by(self) -> str:
        return "fake pack (known bytes)"

    def keep(self, path: Path) -> None:
        if self.options["mode"] == "fail":
            raise RuntimeError("planted maintenance failure")
        if self.options["mode"] == "corrupt":
            (path / "d0" / "f00.bin").write_bytes(b"x")
        shutil.rmtree(path / "loose")
        write_plainly(path / "pack", b"p" * PACKED)


def run_packing(sandbox: Sandbox, rounds: int, kept: str, mode: str = "pack") -> Benchmark:
    assert sandbox.info is not None
    backend = PackingBackend({"mode": mode})
    run = BenchmarkRun(
        operation=KnownWrite(backend),
        sandbox=sandbox.info,
        workdir=sandbox.root / "bench",
        plan=RoundPlan(rounds, kept=KeptPolicy.parse(kept)),
    )
    run.run_all()
    run.maintain()
    return run.finish(backend.describe())


def test_known_maintenance_is_reported_to_the_byte_beside_the_footprint_as_written(
    tmp_path: Path,
) -> None:
    with Sandbox(parse_fs_spec(f"dir:{tmp_path}"), image_dir=tmp_path) as sandbox:
        bench = run_packing(sandbox, rounds=4, kept="all")
    payload = FILES * FILE_BYTES
    assert payload + LOOSE * 4096 == bench.per_repo("footprint_content")
    assert payload + PACKED == bench.per_repo("footprint_kept_content")
    assert 4 * (payload + PACKED) == bench.metric("footprint_kept_content").total
    # the loose directory and its files gone, one pack file in their place
    assert bench.per_repo("footprint_inodes") - LOOSE == bench.per_repo("footprint_kept_inodes")
    kept = bench.harness.kept
    assert kept is not None and (4, 4) == (kept["repositories"], kept["of"])
    assert "fake pack (known bytes)" == kept["by"]
    assert bench.per_repo("footprint_allocated") == kept["written_allocated_per_repo"]


def test_a_sample_is_kept_per_repository_of_those_kept_and_has_no_total(tmp_path: Path) -> None:
    with Sandbox(parse_fs_spec(f"dir:{tmp_path}"), image_dir=tmp_path) as sandbox:
        bench = run_packing(sandbox, rounds=6, kept="sample:2")
    figure = bench.metric("footprint_kept_content")
    assert FILES * FILE_BYTES + PACKED == figure.per_repo
    assert None is figure.total
    assert "kept 2 of 6 repositories" in figure.reason


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("fail", "failed on r0000000: RuntimeError: planted maintenance failure"),
        ("corrupt", "r0000000 no longer verifies: d0/f00.bin: content differs"),
    ],
)
def test_maintenance_that_fails_or_damages_leaves_no_kept_figure_and_says_why(
    tmp_path: Path, mode: str, why: str
) -> None:
    with Sandbox(parse_fs_spec(f"dir:{tmp_path}"), image_dir=tmp_path) as sandbox:
        bench = run_packing(sandbox, rounds=2, kept="all", mode=mode)
    assert 0 == bench.errors  # the rounds stand
    figure = bench.metric("footprint_kept_allocated")
    assert None is figure.per_repo and why in figure.reason, figure.reason


def test_kept_none_says_so_and_bad_values_are_one_line() -> None:
    assert KeptPolicy.parse("none").off
    assert [0, 4, 9] == KeptPolicy.parse("sample:3").chosen(list(range(10)))
    for bad in ("some", "sample:0", "sample:x"):
        with pytest.raises(VcsbenchError, match="is not 'all', 'none' or 'sample:K'"):
            KeptPolicy.parse(bad)


def du_bytes(path: Path) -> int:
    out = subprocess.run(["du", "-s", "-B1", str(path)], capture_output=True, text=True)
    return int(out.stdout.split()[0])


BY_HAND = {
    "git-pygit2": ["git", "-C", "{repo}", "gc", "--quiet"],
    "svn-fs": ["svnadmin", "pack", "-q", "{repo}"],
}


@pytest.mark.parametrize("name", list(BY_HAND))
def test_the_footprint_as_kept_is_what_the_tool_by_hand_leaves(
    root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A 1,000-commit history replayed and committed to (in memory: svn flushes every
    commit); a copy of the round's repository made before the maintenance goes through
    the same command by hand, measured by du."""
    require_backend(name)
    monkeypatch.setenv("VCSBENCH_CORPUS", str(tmp_path / "corpus"))
    backend: Backend = REGISTRY[name]()
    with Sandbox(parse_fs_spec("tmpfs:size=256M"), image_dir=tmp_path) as sandbox:
        assert sandbox.info is not None
        backend.ready(sandbox.root)
        operation = make_operation("commit", backend, load_payload("history:synthetic:1000"))
        run = BenchmarkRun(
            operation, sandbox.info, sandbox.root / "b", RoundPlan(1, kept=KeptPolicy(None))
        )
        run.run_all()
        by_hand = sandbox.root / "by-hand"  # the same filesystem: it allocates alike
        shutil.copytree(run.paths(0).repo, by_hand, symlinks=True)
        run.maintain()
        bench = run.finish(backend.describe())
        backend.close()
        written = du_bytes(by_hand)
        argv = [part.format(repo=by_hand) for part in BY_HAND[name]]
        subprocess.run(argv, check=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        kept_by_hand = du_bytes(by_hand)
    figure = bench.per_repo("footprint_kept_allocated")
    assert figure is not None
    assert abs(figure - kept_by_hand) <= 0.02 * kept_by_hand, (figure, kept_by_hand, written)
    assert kept_by_hand < 0.6 * written  # the maintenance did something
