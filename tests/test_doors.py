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
    assert "tests/test_stats.py::" in result.stdout
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
