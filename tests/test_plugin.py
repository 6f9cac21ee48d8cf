"""The pytest plugin end to end, through pytester: matrix, JSON fields, units, errors."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, vcsbench

pytest_plugins = ["pytester"]

METRIC_UNITS = {
    "cpu_user": "s",
    "cpu_sys": "s",
    "io_read_logical": "B",
    "io_write_logical": "B",
    "io_read_device": "B",
    "io_write_device": "B",
    "io_write_requests_device": "requests",
    "footprint_apparent": "B",
    "footprint_allocated": "B",
    "footprint_inodes": "inodes",
    "fs_used_delta": "B",
    "rss_peak": "B",
}

BROKEN_BACKEND = '''
from vcsbench.backends import REGISTRY
from vcsbench.backends.git_pygit2 import GitPygit2


class Broken(GitPygit2):
    """Commits what it was given, except that every third repository gets other bytes."""
    name = "broken"
    calls = 0

    def commit(self, path, files, message, scratch):
        Broken.calls += 1
        if Broken.calls % 3 == 0:
            files = {rel: b"wrong" for rel in files}
        super().commit(path, files, message, scratch)


REGISTRY["broken"] = Broken
'''


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_vcs=(REPO / "vcsbench" / "bench" / "suite.py").read_text())
    pytester.makeini("[pytest]\nfilterwarnings = default\n")
    return pytester


def run_json(suite: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:  # type: ignore[type-arg]
    out = suite.path / "out.json"
    result = suite.runpytest_subprocess(
        "--benchmark-only", f"--benchmark-json={out}", "-p", "no:cacheprovider", *args
    )
    return result, json.loads(out.read_text()) if out.exists() else {}


def test_tiny_matrix_writes_every_field_with_units(suite: pytest.Pytester) -> None:
    result, document = run_json(
        suite,
        "--vcs-backends=git-pygit2,svn-fs",
        "--vcs-ops=create+commit,checkout",
        "--vcs-payloads=hello",
        "--vcs-repos=4",
        f"--vcs-fs=dir:{suite.path}",
    )
    result.assert_outcomes(passed=4)
    assert len(document["benchmarks"]) == 4
    machine = document["machine_info"]["vcsbench"]
    for key in ("cpu_model", "cpu_count", "memory_bytes", "kernel", "distribution", "python"):
        assert machine[key]
    assert {"git-pygit2", "git-cli", "svn-fs", "svn-pysvn", "svn-cli"} <= set(
        machine["backend_versions"]
    )
    for bench in document["benchmarks"]:
        info = bench["extra_info"]["vcsbench"]
        assert 4 == len(bench["stats"]["data"]) == info["repos"] == info["verified"]
        assert info["errors"] == 0
        assert info["backend"]["versions"] and "options" in info["backend"]
        assert {"name", "files", "bytes", "sha256"} <= set(info["payload"])
        assert {"spec", "fstype", "mount_options", "device"} <= set(info["filesystem"])
        for name, unit in METRIC_UNITS.items():
            metric = info["metrics"][name]
            assert unit == metric["unit"]
            assert {"total", "per_repo"} <= set(metric)
            if metric["total"] is None:
                assert metric["reason"]
        assert info["floor"]["ms_per_repo"] > 0 and info["floor"]["ratio"] > 0
        assert info["harness"]["probe_overhead_us_per_round"] > 0
        assert len(info["rounds"]["wall_ns"]) == 4
        assert "samples" in info["sampler"]
        assert bench["params"]["op"] == info["op"]


def test_planted_failing_backend_fails_with_its_error_count(suite: pytest.Pytester) -> None:
    suite.makeconftest(BROKEN_BACKEND)
    result, document = run_json(
        suite,
        "--vcs-backends=broken",
        "--vcs-ops=create+commit",
        "--vcs-payloads=hello",
        "--vcs-repos=6",
        f"--vcs-fs=dir:{suite.path}",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*2 of 6 operations failed (first, round 2: verify: test.txt: content differs*"]
    )
    (bench,) = document["benchmarks"]
    info = bench["extra_info"]["vcsbench"]
    assert info["errors"] == 2
    assert len(bench["stats"]["data"]) == 4, "failed rounds are no samples"


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--vcs-backends=svn-hg", "ERROR: unknown backend 'svn-hg'"),
        ("--vcs-repos=many", "ERROR: repos 'many' is not a whole number >= 1"),
        ("--vcs-fs=zfs", "ERROR: --fs 'zfs': unknown filesystem kind 'zfs'"),
        ("--vcs-verify=sample:0", "ERROR: verify 'sample:0' is not 'all' or 'sample:K'"),
    ],
)
def test_bad_option_is_one_usage_line(suite: pytest.Pytester, option: str, message: str) -> None:
    result = suite.runpytest_subprocess("--benchmark-only", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [message] == [
        line[: len(message)] for line in result.stderr.lines if line.startswith("ERROR")
    ]


def test_study_on_a_few_repositories_prints_every_row(tmp_path: Path) -> None:
    out = tmp_path / "study.json"
    result = vcsbench(
        "study", "markus2013", "--repos", "5", "--fs", f"dir:{tmp_path}", "--out", str(out)
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    for row in (
        "create svn repos",
        "create git repos",
        "create + commit test.txt, svn",
        "create + commit test.txt, git",
        "create time, svn-fs / git-pygit2",
        "create + commit time, svn-fs / git-pygit2",
        "disk allocated for 10 repos",
    ):
        assert row in result.stdout
    assert "119,184" in result.stdout
    assert out.with_suffix(".md").read_text().count("svn-fs") >= 2


def test_run_writes_json_and_prints_a_summary(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    result = vcsbench(
        "run",
        "--backends",
        "git-cli",
        "--ops",
        "commit",
        "--payloads",
        "submission",
        "--repos",
        "3",
        "--fs",
        f"dir:{tmp_path}",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stdout[-2000:]
    assert "git-cli" in result.stdout and "x floor" in result.stdout
    command = json.loads(out.read_text())["vcsbench"]["command"]
    assert command.startswith("vcsbench run --backends git-cli")


def test_interrupted_run_keeps_the_benchmarks_it_finished(tmp_path: Path) -> None:
    out = tmp_path / "interrupted.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vcsbench.cli",
            "run",
            "--backends",
            "git-pygit2,svn-cli",
            "--ops",
            "create",
            "--payloads",
            "hello",
            "--repos",
            "3000",
            "--progress",
            "lines",
            "--fs",
            f"dir:{tmp_path}",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("svn-cli create hello"):
            break
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert 0 != proc.returncode
    (bench,) = json.loads(out.read_text())["benchmarks"]
    assert "git-pygit2" == bench["extra_info"]["vcsbench"]["backend"]["name"]
    assert 3000 == len(bench["stats"]["data"])
    assert ["interrupted.json"] == [p.name for p in tmp_path.iterdir()]
