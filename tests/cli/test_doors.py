"""`pytest` and `pytest --benchmark-only` at the root, as users type them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

SCRIPT = [str(Path(sys.executable).parent / "pytest")]
MODULE = [sys.executable, "-m", "pytest"]


def at_root(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*argv, "-p", "no:cacheprovider"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.mark.parametrize("door", [SCRIPT, MODULE], ids=["pytest", "python -m pytest"])
def test_pytest_alone_collects_the_tests_and_leaves_the_suite_out(door: list[str]) -> None:
    result = at_root([*door, "--collect-only", "-q"])
    assert 0 == result.returncode, result.stdout[-2000:] + result.stderr
    assert "tests/results/test_stats.py::" in result.stdout
    assert "benchmarks/test_vcs.py::" not in result.stdout
    assert "deselected" in result.stdout.splitlines()[-1]


@pytest.mark.parametrize("door", [SCRIPT, MODULE], ids=["pytest", "python -m pytest"])
def test_pytest_benchmark_only_at_the_root_runs_the_suite(door: list[str], tmp_path: Path) -> None:
    result = at_root(
        [
            *door,
            "--benchmark-only",
            "--vcs-backends=git-pygit2",
            "--vcs-ops=create",
            "--vcs-payloads=hello",
            "--vcs-repos=3",
            f"--vcs-fs=dir:{tmp_path}",
            "-q",
        ]
    )
    assert 0 == result.returncode, result.stdout[-3000:] + result.stderr
    summary = result.stdout.strip().splitlines()[-1]
    assert "1 passed" in summary and "skipped" in summary


def test_make_bench_runs_where_the_device_is_measured_as_root() -> None:
    import os

    def dry(*args: str) -> str:
        return subprocess.run(
            ["make", "-n", "bench", *args], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout

    if os.geteuid() == 0:
        said = dry()
        assert "--fs ext4" in said and "device IO measured" in said
    assert "--fs tmpfs" in dry("BENCH_FS=tmpfs") and "device IO measured" not in dry(
        "BENCH_FS=tmpfs"
    )
