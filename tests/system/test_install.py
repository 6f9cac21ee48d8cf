"""A normal (non-editable) install: the suite's data ships in the package, and the
pytest plugin stays out of the way of unrelated pytest runs."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import REPO

UNRELATED_TEST = "def test_unrelated():\n    assert 1 + 1 == 2\n"


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, timeout=900)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with ``pip install .`` of a copy of this source tree, made once per test
    run (25 s): the first of this file's tests to ask makes it, under a lock in the run's
    own directory, which every pytest-xdist worker of the run shares (an xdist_group would
    not do: pytest 9.2 no longer honours it)."""
    own = tmp_path_factory.getbasetemp()
    shared = own.parent if os.environ.get("PYTEST_XDIST_WORKER") else own
    base = shared / "install"
    venv = base / "venv"
    with open(shared / "install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (base / "made").exists():
            return venv
        shutil.rmtree(base, ignore_errors=True)  # a try that failed part-way, ours
        base.mkdir()
        _install(base, venv)
        (base / "made").touch()
    return venv


def _install(base: Path, venv: Path) -> None:
    source = base / "source"
    skip = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "build", ".*_cache")

    def ignore(directory: str, names: list[str]) -> set[str]:
        top_level = {"results"} if Path(directory) == REPO else set()
        return set(skip(directory, names)) | (top_level & set(names))

    shutil.copytree(REPO, source, ignore=ignore)
    made = run(["/usr/bin/python3", "-m", "venv", str(venv)], base)
    assert 0 == made.returncode, made.stderr
    pip = run(
        [
            str(venv / "bin/python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            ".",
        ],
        source,
    )
    assert 0 == pip.returncode, pip.stderr[-3000:]


def test_an_unrelated_pytest_project_passes_beside_the_plugin(
    installed: Path, tmp_path: Path
) -> None:
    (tmp_path / "test_other.py").write_text(UNRELATED_TEST)
    result = run(
        [str(installed / "bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"], tmp_path
    )
    assert 0 == result.returncode, result.stdout[-3000:] + result.stderr[-3000:]
    assert "1 passed" in result.stdout


def test_the_installed_command_runs_the_shipped_suite(installed: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = run(
        [
            str(installed / "bin/vcsbench"),
            "run",
            "--backends",
            "git-pygit2",
            "--ops",
            "create+commit",
            "--payloads",
            "submission",
            "--repos",
            "2",
            "--fs",
            f"dir:{tmp_path}",
            "--out",
            str(out),
        ],
        tmp_path,
    )
    assert 0 == result.returncode, result.stdout[-3000:] + result.stderr[-3000:]
    assert "git-pygit2" in result.stdout and out.exists()


USER_BENCHMARK = """
import pytest


@pytest.mark.vcs(backends=["git-pygit2"], repos=4)
def test_tag_every_commit(vcsbench):
    def prepare(r):
        r.backend.create(r.repo)
        r.backend.commit(r.repo, {"a.txt": b"a"}, "first", r.scratch)

    def run(r):
        r.sh("git", "--git-dir", r.repo, "tag", "v1")

    def verify(r):
        tags = r.sh("git", "--git-dir", r.repo, "tag", "--list").split()
        return [] if tags == [b"v1"] else [f"tags: {tags}"]

    vcsbench(run, prepare=prepare, verify=verify)
"""


def test_a_users_benchmark_outside_the_repository_lands_in_a_report(
    installed: Path, tmp_path: Path
) -> None:
    (tmp_path / "test_mine.py").write_text(USER_BENCHMARK)
    out = tmp_path / "mine.json"
    result = run(
        [
            str(installed / "bin/python"),
            "-m",
            "pytest",
            "--benchmark-only",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--vcs-fs=dir:{tmp_path}",
            f"--benchmark-json={out}",
        ],
        tmp_path,
    )
    assert 0 == result.returncode, result.stdout[-3000:] + result.stderr[-3000:]
    report = run([str(installed / "bin/vcsbench"), "report", str(out)], tmp_path)
    assert 0 == report.returncode, report.stderr
    assert "### tag_every_commit · payload none" in report.stdout
    assert "| git-pygit2 |" in report.stdout
