"""The vcsbench fixture: a user's own benchmark, verified and measured like the suite."""

from __future__ import annotations

import json
import os

import pytest
from helpers import REPO, skip_or_fail

from vcsbench.results.layout import benchmark_part

pytest_plugins = ["pytester"]


def run_user(pytester: pytest.Pytester, source: str, *args: str) -> tuple[pytest.RunResult, dict]:  # type: ignore[type-arg]
    pytester.makepyfile(test_user=source)
    pytester.makeini("[pytest]\nfilterwarnings = default\n")
    out = pytester.path / "out.json"
    result = pytester.runpytest_subprocess(
        "--benchmark-only",
        f"--benchmark-json={out}",
        "-p",
        "no:cacheprovider",
        f"--vcs-fs=dir:{pytester.path}",
        "--vcs-repos=5",
        *args,
    )
    return result, json.loads(out.read_text()) if out.exists() else {}


KNOWN_WORK = """
import pytest


@pytest.mark.vcs(backends=["svn-fs", "git-cli"])
def test_known_bytes(vcsbench):
    def run(r):
        r.repo.mkdir()
        (r.repo / "f").write_bytes(b"x" * 8192)

    def verify(r):
        return [] if (r.repo / "f").stat().st_size == 8192 else ["short"]

    vcsbench(run, verify=verify)
"""


def test_a_users_operation_is_measured_per_backend_and_verified(pytester: pytest.Pytester) -> None:
    result, document = run_user(pytester, KNOWN_WORK)
    result.assert_outcomes(passed=2)
    infos = [benchmark_part(b) for b in document["benchmarks"]]
    assert ["svn-fs", "git-cli"] == [i["backend"]["name"] for i in infos]
    for info in infos:
        assert "known_bytes" == info["op"] and 5 == info["verified"] and 0 == info["errors"]
        assert 8192 == info["metrics"]["footprint_content"]["per_repo"]
        assert [8192.0] * 5 == info["rounds"]["values"]["io_write_syscall"]


COPY_WORK = """
import pytest


@pytest.mark.vcs(backends=["git-cli"])
def test_copy(vcsbench):
    def prepare(r):
        r.repo.mkdir()
        (r.repo / "f").write_bytes(b"x" * 8192)

    def run(r):  # a copy beside the repository, as svnadmin hotcopy makes one
        (r.scratch / "copy").mkdir()
        (r.scratch / "copy" / "f").write_bytes((r.repo / "f").read_bytes())

    def verify(r):
        return [] if (r.scratch / "copy" / "f").stat().st_size == 8192 else ["no copy"]

    vcsbench(run, prepare=prepare, verify=verify, outputs=lambda r: [r.scratch / "copy"])


@pytest.mark.vcs(backends=["git-cli"])
def test_nothing(vcsbench):
    def prepare(r):
        r.repo.mkdir()
        (r.repo / "f").write_bytes(b"x" * 8192)

    vcsbench(lambda r: None, prepare=prepare, verify=lambda r: [])


@pytest.mark.vcs(backends=["git-cli"])
def test_files_without_a_payload(vcsbench):
    vcsbench(lambda r: r.files, verify=lambda r: [])
"""


def test_a_users_footprint_counts_what_the_round_made_and_the_change(
    pytester: pytest.Pytester,
) -> None:
    result, document = run_user(pytester, COPY_WORK)
    result.assert_outcomes(passed=2, failed=1)
    infos = {benchmark_part(b)["op"]: benchmark_part(b) for b in document["benchmarks"]}
    copy, nothing = infos["copy"], infos["nothing"]
    # The repository and the copy it named: 8 KiB each; the round added the copy.
    assert 2 * 8192 == copy["metrics"]["footprint_content"]["per_repo"]
    assert 8192 <= copy["metrics"]["footprint_change"]["per_repo"] <= 8192 + 4096
    # A round that does nothing: its repository's 8 KiB, and no change.
    assert 8192 == nothing["metrics"]["footprint_content"]["per_repo"]
    assert 0 == nothing["metrics"]["footprint_change"]["per_repo"]
    # No payload named: labelled none, not as a payload it never used.
    assert {"none"} == {i["payload"]["name"] for i in infos.values()}
    result.stdout.fnmatch_lines(["*this benchmark names no payload, so r.files has nothing*"])


SABOTAGED = KNOWN_WORK.replace('b"x" * 8192', 'b"x" * 100')


def test_a_sabotaged_user_operation_fails_its_verification(pytester: pytest.Pytester) -> None:
    result, document = run_user(pytester, SABOTAGED)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*5 of 5 operations failed (first, round 0: verify: short)*"])
    assert [] == document.get("benchmarks", [])


def test_verify_is_required(pytester: pytest.Pytester) -> None:
    source = KNOWN_WORK.replace("vcsbench(run, verify=verify)", "vcsbench(run, verify=None)")
    result, _ = run_user(pytester, source)
    result.stdout.fnmatch_lines(["*needs verify=: every timed operation is verified*"])


def test_the_examples_run_at_small_n() -> None:
    import subprocess
    import sys

    if os.geteuid() != 0:
        skip_or_fail("the gc example runs on ext4 and xfs sandboxes, which need root")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "examples",
            "--benchmark-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "--vcs-repos=2",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert 0 == result.returncode, result.stdout[-3000:]
    assert "5 passed" in result.stdout.strip().splitlines()[-1]


def test_every_example_is_short() -> None:
    for path in (REPO / "examples").glob("test_*.py"):
        assert len(path.read_text().splitlines()) <= 30, path


def test_a_typo_in_the_marker_is_one_line_naming_the_known_backends(
    pytester: pytest.Pytester,
) -> None:
    result, _ = run_user(pytester, KNOWN_WORK.replace('"git-cli"', '"git-clii"'))
    assert 0 != result.ret
    text = result.stdout.str()
    (line,) = [line for line in text.splitlines() if "git-clii" in line]
    assert line.startswith("@pytest.mark.vcs: unknown backend 'git-clii'; known: git-pygit2")
    assert "Traceback" not in text and "raise " not in text


def test_the_result_file_names_each_case_as_it_was_given(pytester: pytest.Pytester) -> None:
    _, document = run_user(pytester, KNOWN_WORK)
    params = [b["params"] for b in document["benchmarks"]]
    assert {("svn-fs", f"dir:{pytester.path}"), ("git-cli", f"dir:{pytester.path}")} == {
        (p["vcs_backend"], p["vcs_fs"]) for p in params
    }


BRANCHES_ON_THE_VCS = """
import pytest


@pytest.mark.vcs(backends=["git-cli", "svn-cli"])
def test_verify_repository(vcsbench):
    def prepare(r):
        r.backend.create(r.repo)
        r.backend.commit(r.repo, {"a.txt": b"a"}, "first", r.scratch)

    def run(r):  # one operation, the VCS's own check of its repository
        if r.backend.vcs == "git":
            r.sh("git", "-C", r.repo, "fsck", "--no-progress")
        else:
            r.sh("svnadmin", "verify", "--quiet", r.repo)

    def verify(r):
        return [] if r.backend.name in ("git-cli", "svn-cli") else [r.backend.name]

    vcsbench(run, prepare=prepare, verify=verify)
"""


def test_a_users_operation_branches_on_the_backends_vcs(pytester: pytest.Pytester) -> None:
    """``r.backend.vcs`` and ``r.backend.name`` say which it is: one operation covers git
    and Subversion on one row."""
    result, document = run_user(pytester, BRANCHES_ON_THE_VCS)
    result.assert_outcomes(passed=2)
    infos = [benchmark_part(b) for b in document["benchmarks"]]
    assert {("git-cli", 5, 0), ("svn-cli", 5, 0)} == {
        (i["backend"]["name"], i["verified"], i["errors"]) for i in infos
    }
