"""Another release of a backend's library: its environment (built once, then cached), the
rounds run in it with the same harness, what the result records, and the refusals."""

from __future__ import annotations

import json
import math
import os
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import run_args, vcsbench

from vcsbench.backends import Variant
from vcsbench.backends.versions import ENV_BARE
from vcsbench.bench import floor
from vcsbench.bench.envs import environment, expand_range
from vcsbench.bench.log import RoundRecord
from vcsbench.bench.options import parse_variants
from vcsbench.bench.workers import WorkerEnd, decode, encode
from vcsbench.errors import VcsbenchError
from vcsbench.judge.paired import paired
from vcsbench.results.layout import benchmark_part
from vcsbench.results.stats import order_interval

OTHER = "1.15.1"
"""A pygit2 release other than the installed one (1.21.0), with its own libgit2 (1.8.1)."""


@pytest.fixture(scope="session")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One environment cache for this file's tests in each pytest-xdist worker (the first
    test there builds in it; vcsbench does not lock its cache against a second run
    building beside it), where a run given ``XDG_CACHE_HOME=<its grandparent>`` looks."""
    found = tmp_path_factory.mktemp("xdg") / "vcsbench" / "envs"
    found.mkdir(parents=True)
    return found


def site_of(python: Path) -> list[str]:
    """The import path of an environment's interpreter."""
    out = subprocess.run(
        [str(python), "-c", "import sys; print('\\n'.join(sys.path))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in out.splitlines() if line]


def logging_wrappers(tmp_path: Path, tools: tuple[str, ...]) -> tuple[Path, Path]:
    """A directory of wrappers, one per tool, each logging ``TOOL $1`` to a file before it
    runs the installed tool: (the directory, the log)."""
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    for tool in tools:
        wrapper = bin_dir / tool
        wrapper.write_text(f'#!/bin/sh\necho {tool} "$1" >> {calls}\nexec /usr/bin/{tool} "$@"\n')
        wrapper.chmod(0o755)
    return bin_dir, calls


def run_records(
    tmp_path: Path, repos: str, backends: str, ops: str, env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """``run`` of the hello payload in a directory sandbox: each benchmark's record."""
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args(repos, backends, ops), "--fs", f"dir:{tmp_path}", "--out", str(out),
        env=env,
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    return [benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"]]


def by_variant(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {record["backend"]["variant"]: record for record in records}


def test_an_environment_is_built_once_then_found_and_leans_on_this_vcsbench(cache: Path) -> None:
    built = environment("pygit2", OTHER, cache)
    assert built.built_s is not None and built.built_s < 60
    again = environment("pygit2", OTHER, cache)
    assert again.path == built.path and again.built_s is None
    # its own packages first, then vcsbench's installation, then the system's
    path = site_of(built.python)
    own = next(i for i, p in enumerate(path) if p.startswith(str(built.path)))
    home = next(i for i, p in enumerate(path) if p.endswith("site-packages") and i != own)
    system = next(i for i, p in enumerate(path) if p.endswith("dist-packages"))
    assert own < home < system
    assert [p.name for p in cache.iterdir() if p.name.startswith(".building")] == []
    # a tool of the environment (hg) starts without vcsbench's installation: ENV_BARE
    bare = subprocess.run(
        [str(built.python), "-c", "import vcsbench"],
        env={**os.environ, ENV_BARE: "1"},
        cwd="/",  # not this checkout, which python -c would import vcsbench from
        capture_output=True,
        check=False,
    )
    assert 0 != bare.returncode and b"No module named 'vcsbench'" in bare.stderr


def test_a_version_variant_runs_its_rounds_in_its_environment_and_records_its_library(
    cache: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("6", f"git-pygit2,git-pygit2[version={OTHER}]", "create+commit"),
        "--fs", f"dir:{tmp_path}", "--out", str(out), "--perturbation", "off",
        env={"XDG_CACHE_HOME": str(cache.parent.parent)},
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    mine, other = (benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"])
    assert "1.15.1" == other["backend"]["versions"]["pygit2"]
    assert "1.8.1" == other["backend"]["versions"]["libgit2"]
    assert f"git-pygit2[version={OTHER}]" == other["backend"]["variant"]
    assert mine["backend"]["versions"]["pygit2"] != "1.15.1"
    assert f"pygit2=={OTHER}" == other["harness"]["environment"]["requirement"]
    assert 1 == other["harness"]["workers"]["workers"]
    # the same harness: every round verified, the floor measured
    assert 6 == other["repos"] == other["verified"] and 0 == other["errors"]
    assert other["floor"]["ratio"] is not None
    assert f"git-pygit2[version={OTHER}]" in result.stdout


def test_pygit2_1_13_runs_every_operation_its_fsync_option_included(
    cache: Path, tmp_path: Path
) -> None:
    """pygit2 1.13 has ``pygit2.enums`` with some of its groups only (no ``Option``): each
    constant falls back to its ``GIT_*`` name alone. Its worker failed at its first round,
    and the failed worker's process and the run's sampler were left running (three
    ResourceWarnings) -- bisect over the releases printed them while skipping it."""
    out = tmp_path / "r.json"
    variant = "git-pygit2[version=1.13.3,fsync=true]"
    result = vcsbench(
        *run_args("3", variant, "create+commit,status,log,diff"),
        "--fs", f"dir:{tmp_path}", "--out", str(out), "--perturbation", "off",
        env={"XDG_CACHE_HOME": str(cache.parent.parent)},
    )  # fmt: skip
    assert 0 == result.returncode, result.stdout[-2000:] + result.stderr
    assert "ResourceWarning" not in result.stdout + result.stderr
    found = [benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"]]
    assert [b["op"] for b in found] == ["create+commit", "status", "log", "diff"]
    for bench in found:
        assert "1.13.3" == bench["backend"]["versions"]["pygit2"]
        assert (3, 0) == (bench["verified"], bench["errors"]), bench["op"]


HG_OTHER = "6.9.5"
"""A Mercurial release other than the machine's (6.3.2), from its manylinux wheel."""


def test_a_mercurial_release_runs_hg_libs_rounds_and_the_machines_hg_reads_them(
    cache: Path, tmp_path: Path
) -> None:
    """``hg-lib[version=X]``: the rounds run on X's Python API in an environment of its
    own; the verifier (the command line, the machine's hg) is the same for both."""
    variant = f"hg-lib[version={HG_OTHER}]"
    xdg = {"XDG_CACHE_HOME": str(cache.parent.parent)}
    found = by_variant(run_records(tmp_path, "4", f"hg-lib,{variant}", "create+commit", xdg))
    machine = subprocess.run(["hg", "--version", "--quiet"], capture_output=True, text=True)
    mine, other = found["hg-lib"], found[variant]
    assert HG_OTHER == other["backend"]["versions"]["mercurial (API)"]
    assert mine["backend"]["versions"]["mercurial (API)"] != HG_OTHER
    for each in (mine, other):  # one verifier for both: the machine's command line
        assert machine.stdout.strip() == each["backend"]["versions"]["hg (verifier)"]
        assert 4 == each["repos"] == each["verified"] and 0 == each["errors"]
    assert f"mercurial=={HG_OTHER}" == other["harness"]["environment"]["requirement"]


def test_a_mercurial_release_runs_hg_clis_commands_and_the_machines_hg_reads_them(
    cache: Path, tmp_path: Path
) -> None:
    """``hg-cli[version=X]``: every command of the rounds is X's ``hg`` (the environment's
    script); the rounds are read back by the machine's ``hg``, not by X."""
    variant = f"hg-cli[version={HG_OTHER}]"
    xdg = {"XDG_CACHE_HOME": str(cache.parent.parent)}
    found = run_records(tmp_path, "3", f"hg-cli,{variant}", "create+commit", xdg)
    machine = subprocess.run(["hg", "--version", "--quiet"], capture_output=True, text=True)
    for each in found:
        versions = each["backend"]["versions"]
        if each["backend"]["variant"] == variant:
            assert f"(version {HG_OTHER})" in versions["hg"]
            assert machine.stdout.strip() == versions["hg (verifier)"]
        else:
            assert machine.stdout.strip() == versions["hg"] and "hg (verifier)" not in versions
        assert each["repos"] == each["verified"] and 0 == each["errors"]
    assert ["hg-cli", variant] == [b["backend"]["variant"] for b in found]


@pytest.mark.parametrize(
    ("variant", "says"),
    [
        ("svn-fs[version=1.14]", "svn-fs[version=1.14]: svn-fs has no library release to choose; "
         "version= applies to git-pygit2 (pygit2), git-markus (pygit2), hg-lib (mercurial), "
         "hg-cli (mercurial)"),
        ("git-pygit2[version=newest]", "version 'newest' of pygit2 is not a release number "
         "(e.g. 1.15.1)"),
        ("git-pygit2[delay=10]", "git-pygit2[delay=10]: delay='10' is not a positive time; "
         "write it in us or ms (delay=88us, delay=0.5ms)"),
    ],
)  # fmt: skip
def test_a_version_that_cannot_be_is_one_line(variant: str, says: str) -> None:
    result = vcsbench("run", "--backends", variant, "--out", "/tmp/never-written.json")
    assert 2 == result.returncode
    assert [f"vcsbench: error: {says}"] == result.stderr.splitlines()


def test_a_release_pip_cannot_install_is_one_line_naming_the_releases(cache: Path) -> None:
    with pytest.raises(VcsbenchError) as caught:
        environment("pygit2", "0.0.1", cache)
    assert str(caught.value).startswith(
        "pygit2 0.0.1 is not a release pip can install here (wheels only); the newest it can: "
    )
    assert re.search(r"can: (\d+\.\d+\.\d+, ){7}\d+\.\d+\.\d+$", str(caught.value))
    assert [p.name for p in cache.iterdir() if p.name.startswith(".building")] == []


def test_the_plain_variant_keeps_the_options_and_drops_the_version() -> None:
    variant = Variant.parse("git-pygit2[fsync=true,version=1.15.1]")
    assert "1.15.1" == variant.version
    assert "git-pygit2[fsync=true]" == variant.plain.text
    assert {"fsync": "true"} == variant.backend_options


def test_a_workers_messages_cross_the_pipe_unchanged() -> None:
    record = RoundRecord(
        12.5,
        123456,
        {"cpu_user_s": 0.001, "device_write_bytes": math.nan},
        error="verify: x",
        verified=True,
        diagnosis="",
        floor_tree={"r/a": floor.TreeEntry(False, b"\x00\xff"), "r": floor.TreeEntry(True)},
        held_bytes=4096,
    )
    back = decode(json.loads(json.dumps(encode(record))))
    assert isinstance(back, RoundRecord)
    assert math.isnan(back.values.pop("device_write_bytes"))
    record.values.pop("device_write_bytes")
    assert record == back
    end = WorkerEnd(1 << 20, 4096, "", stopped=True, rounds=40)
    assert end == decode(json.loads(json.dumps(encode(end))))


def test_the_median_interval_of_block_ratios_is_the_sign_tests() -> None:
    # 10 blocks: P(Binomial(10, 1/2) < 2) = 11/1024 a side: the 2nd from each end, 97.9%.
    low, high, confidence = order_interval([1.0 + i / 100 for i in range(10)])
    assert (low, high) == (1.01, 1.08)
    assert abs(confidence - (1 - 2 * 11 / 1024)) < 1e-12


def _drifting(blocks: int, shift: float, seed: int) -> tuple[list[float], list[float]]:
    """Block medians of two variants on a machine that slows down 3x over the run, with
    2% noise a block; the second variant ``shift`` slower than the first."""
    rng = random.Random(seed)
    drift = [1 + 2 * k / (blocks - 1) for k in range(blocks)]
    a = [d * rng.gauss(1, 0.02) for d in drift]
    b = [d * (1 + shift) * rng.gauss(1, 0.02) for d in drift]
    return a, b


def test_a_drifting_aa_is_no_difference_and_a_real_shift_is_caught() -> None:
    """On synthetic blocks with a 3x drift: the same variant twice comes out 'no
    significant difference' in at least 95 of 100 runs (a rounds-as-samples test calls
    most of them different: the drift is between blocks, and it falls on both); a 10%
    slowdown is caught in every run."""
    from scipy.stats import mannwhitneyu  # the test the rounds-as-samples view would run

    alarms = pooled = caught = 0
    for seed in range(100):
        a, b = _drifting(10, 0.0, seed)
        found = paired(a, b)
        assert found is not None
        alarms += found.significant
        # the rounds as samples: the first variant's early blocks, the second's late ones,
        # as two runs one after the other would give
        pooled += mannwhitneyu(a[:5], b[5:]).pvalue < 0.05
        slow = paired(*_drifting(10, 0.10, seed))
        assert slow is not None
        caught += slow.significant and slow.verdict() == "slower"
    assert alarms <= 5
    assert pooled >= 95
    assert caught == 100


def test_variants_alternate_in_blocks_each_leading_as_often_as_it_trails(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("40", "git-pygit2,git-pygit2[copy=2],git-pygit2[fsync=true]", "create"),
        "--fs", f"dir:{tmp_path}", "--out", str(out), "--interleave", "4",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    found = [benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"]]
    assert ["git-pygit2", "git-pygit2[copy=2]", "git-pygit2[fsync=true]"] == [
        b["backend"]["variant"] for b in found
    ]
    for bench in found:
        blocks = bench["harness"]["interleaved"]
        assert [[0, 10], [10, 20], [20, 30], [30, 40]] == blocks["rounds"]
        assert 40 == bench["repos"] == bench["verified"]
        # the second block of each pair runs in the first's reverse order
        first, second, third, fourth = blocks["position"]
        assert second == 2 - first and fourth == 2 - third
        assert all(m is not None and m > 0 for m in blocks["median_ms"])
    # block k of every variant ran before block k+1 of any (the rounds' start times)
    spans = [
        [(b["rounds"]["t_start_s"][i], b["rounds"]["t_start_s"][j - 1]) for i, j in rounds]
        for b in found
        for rounds in [b["harness"]["interleaved"]["rounds"]]
    ]
    for k in range(3):
        assert max(v[k][1] for v in spans) < min(v[k + 1][0] for v in spans)
    report = vcsbench("report", str(out))
    assert "3 variants in 4 interleaved blocks, against git-pygit2" in report.stdout
    assert "git-pygit2[copy=2]" in report.stdout


@pytest.mark.serial
def test_a_known_delay_is_reported_as_its_size_against_the_same_variant(tmp_path: Path) -> None:
    """``delay=`` adds a known wait to every timed call: the variant's figures are the
    plain variant's plus that wait, and the block comparison calls it slower."""
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("40", "git-pygit2,git-pygit2[delay=20ms]", "create"),
        "--fs", f"dir:{tmp_path}", "--out", str(out), "--interleave", "6",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    plain, delayed = [benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"]]
    assert "git-pygit2[delay=20ms]" == delayed["backend"]["variant"]
    assert "interleaved" in delayed["harness"]
    plain_ns, delayed_ns = (sorted(b["rounds"]["wall_ns"]) for b in (plain, delayed))
    assert delayed_ns[0] >= 20_000_000
    # the wait and nothing else: the medians 20 ms apart, give or take what the plain
    # rounds' middle half spans and 0.4 ms (seen on a tmpfs: the delayed rounds' median
    # 20.80 ms against the plain 0.54 ms, 0.26 ms over the wait, with a middle half
    # 0.05 ms wide). The wait is many times a create, so six blocks (the fewest a
    # verdict rests on) call it.
    spread = plain_ns[30] - plain_ns[10] + 400_000
    assert abs(delayed_ns[20] - plain_ns[20] - 20_000_000) < spread
    report = vcsbench("report", str(out))
    line = next(x for x in report.stdout.splitlines() if x.startswith("| git-pygit2[delay=20ms]"))
    assert "slower" in line


def test_blocks_of_two_runs_are_never_paired_with_each_other(tmp_path: Path) -> None:
    """The same interleaved benchmark from two runs is two groups in a report: a block
    of one run is never set against a block of the other."""
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("20", "git-pygit2,git-pygit2[copy=2]", "create"),
        "--fs", f"dir:{tmp_path}", "--out", str(out), "--interleave", "2",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    again = tmp_path / "again.json"
    again.write_bytes(out.read_bytes())
    report = vcsbench("report", str(out), str(again)).stdout
    headings = [line for line in report.splitlines() if "interleaved blocks, against" in line]
    assert 2 == len(headings)
    assert str(again) in headings[1] and str(again) not in headings[0]


def test_interleave_takes_auto_off_or_blocks() -> None:
    result = vcsbench("run", "--interleave", "1", "--out", "/tmp/never-written.json")
    assert 2 == result.returncode
    assert [
        "vcsbench: error: interleave '1' is not auto, off or a number of blocks (2 or more)"
    ] == result.stderr.splitlines()


def test_a_range_of_releases_is_the_last_patch_of_each_minor() -> None:
    names = [v.text for v in parse_variants("git-pygit2[fsync=true,version=1.12..1.15]")]
    assert [
        "git-pygit2[fsync=true,version=1.12.2]",
        "git-pygit2[fsync=true,version=1.13.3]",
        "git-pygit2[fsync=true,version=1.14.1]",
        "git-pygit2[fsync=true,version=1.15.1]",
    ] == names
    with pytest.raises(VcsbenchError) as caught:
        expand_range("pygit2", "0.1..0.2")
    assert str(caught.value).startswith("no release of pygit2 from 0.1 to 0.2 that pip can")


def test_a_git_from_a_directory_runs_interleaved_and_records_its_version(tmp_path: Path) -> None:
    """``git-cli[bin=DIR]`` runs DIR's git: here a wrapper that counts its calls before it
    runs the installed one, so every git command of the variant's rounds is seen to be it."""
    bin_dir, calls = logging_wrappers(tmp_path, ("git",))
    variant = f"git-cli[bin={bin_dir}]"
    found = by_variant(run_records(tmp_path, "20", f"git-cli,{variant}", "create"))
    installed = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    mine = found[variant]
    assert installed.strip() == mine["backend"]["versions"]["git"]
    assert str(bin_dir) == mine["backend"]["versions"]["git from"]
    assert "git from" not in found["git-cli"]["backend"]["versions"]
    assert "interleaved" in mine["harness"]  # a tool from elsewhere alternates like a release
    # one `git init` per round (its warm-up and pilot rounds too), and --version once or more
    assert len(calls.read_text().splitlines()) >= 20


def test_subversion_tools_from_a_directory_make_and_change_the_repositories(
    tmp_path: Path,
) -> None:
    """``svn-cli[bin=DIR]`` runs DIR's svnadmin, svnlook, svnmucc and svn: wrappers that log
    each call before running the installed tool. A create + commit round is svnadmin create,
    svnlook tree and svnmucc, each of them DIR's; the verifier reads the result with the
    machine's Subversion, the same for every variant."""
    bin_dir, calls = logging_wrappers(tmp_path, ("svnadmin", "svnlook", "svnmucc", "svn"))
    variant = f"svn-cli[bin={bin_dir}]"
    found = by_variant(run_records(tmp_path, "6", f"svn-cli,{variant}", "create+commit"))
    mine = found[variant]
    assert str(bin_dir) == mine["backend"]["versions"]["svn from"]
    assert "svn from" not in found["svn-cli"]["backend"]["versions"]
    installed = subprocess.run(
        ["svnadmin", "--version", "--quiet"], capture_output=True, text=True
    ).stdout.strip()
    assert installed == mine["backend"]["versions"]["svnadmin"]
    logged = calls.read_text().splitlines()
    made = [line for line in logged if line == "svnadmin create"]
    # every measured round, and the warm-up and pilot rounds, made its repository with DIR's
    assert len(made) >= 6
    assert len([line for line in logged if line == "svnmucc --non-interactive"]) == len(made)
    assert len([line for line in logged if line == "svnlook tree"]) == len(made)


def test_a_subversion_directory_without_its_tools_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "svnadmin").write_text("#!/bin/sh\n")
    (tmp_path / "svnadmin").chmod(0o755)
    result = vcsbench(*run_args("2", f"svn-cli[bin={tmp_path}]", "create"), "--fs", "tmpfs")
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert f"option bin='{tmp_path}': no executable svnlook, svnmucc, svn in it" in line


@pytest.mark.parametrize(
    ("option", "says"),
    [
        ("bin=relative/dir", "option bin='relative/dir' is not an absolute directory"),
        ("bin=/proc", "option bin='/proc': no executable git in it; give the directory"),
    ],
)
def test_a_git_directory_without_git_is_one_line(option: str, says: str) -> None:
    result = vcsbench(*run_args("2", f"git-cli[{option}]", "create"), "--fs", "tmpfs")
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert says in line


def test_report_fail_on_gates_an_interleaved_run_by_its_blocks(tmp_path: Path) -> None:
    """One interleaved run as a CI gate: the variant's block medians set to the baseline's
    times a known factor; the gate fails beyond its limit, and only then."""
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("24", "git-pygit2,git-pygit2[copy=2]", "create"),
        "--fs", f"dir:{tmp_path}", "--out", str(out), "--interleave", "6",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    base = [1.0, 1.02, 0.98, 1.01, 0.99, 1.0]

    def with_factor(factor: float) -> str:
        document = json.loads(out.read_text())
        for bench, scale in zip(document["benchmarks"], (1.0, factor), strict=True):
            blocks = benchmark_part(bench)["harness"]["interleaved"]
            blocks["median_ms"] = [m * scale for m in base]
        path = tmp_path / f"x{factor}.json"
        path.write_text(json.dumps(document))
        return str(path)

    slow = vcsbench("report", with_factor(1.25), "--fail-on", "time:10%")
    assert 1 == slow.returncode, slow.stdout + slow.stderr
    assert (
        "REGRESSION create hello dir:" in slow.stdout
        and "git-pygit2[copy=2] time 1.250x [1.250–1.250] of git-pygit2, by block, exceeds +10%"
        in slow.stdout
    )
    assert "2 variants in 6 interleaved blocks" in slow.stdout  # the report comes first
    within = vcsbench("report", with_factor(1.05), "--fail-on", "time:10%")
    assert 0 == within.returncode and "REGRESSION" not in within.stdout
    strict = vcsbench("report", with_factor(1.05), "--fail-on", "time:1%")
    assert 1 == strict.returncode and "1.050x" in strict.stdout
    faster = vcsbench("report", with_factor(0.8), "--fail-on", "time:1%")
    assert 0 == faster.returncode and "REGRESSION" not in faster.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--fail-on", "time:5%"], "report --fail-on gates interleaved variants, and these"),
        (["--fail-on", "io_write_device:5%"], "report --fail-on 'io_write_device:5%': only time"),
    ],
)
def test_report_fail_on_where_it_cannot_gate_is_one_line(args: list[str], says: str) -> None:
    from helpers import REPO

    result = vcsbench("report", str(REPO / "tests" / "data" / "tiny-ext4.json"), *args)
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert says in line


@pytest.mark.parametrize(("recycle", "workers"), [("auto", 1), ("20", 2)])
def test_an_interleaved_members_worker_serves_blocks_until_its_recycle_count(
    tmp_path: Path, recycle: str, workers: int
) -> None:
    """Blocks of 10 rounds (40 rounds, 4 blocks): one process serves every block, or with
    --recycle 20 each process two blocks. A process was once started for every block."""
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("40", "git-pygit2,git-pygit2[copy=2]", fs=f"dir:{tmp_path}", out=out),
        "--interleave", "4", "--recycle", recycle,
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    for bench in json.loads(out.read_text())["benchmarks"]:
        found = benchmark_part(bench)
        assert (0, 40) == (found["errors"], found["verified"])
        assert workers == found["harness"]["workers"]["workers"], found["harness"]["workers"]


@pytest.mark.parametrize(
    ("variant", "says"),
    [
        ("git-pygit2[work=100001]", "work='100001' is not a whole number from 1 to 100,000 "
         "(thousands of turns of a loop of 2 instructions, planted inside every timed call)"),
        ("git-pygit2[syncs=1001]", "syncs='1001' is not a whole number from 1 to 1,000 "
         "(fsync calls of a scratch file, planted inside every timed call)"),
        ("git-pygit2[syncs=0]", "syncs='0' is not a whole number from 1 to 1,000"),
    ],
)  # fmt: skip
def test_planted_work_beyond_its_bound_is_one_line(variant: str, says: str) -> None:
    """A result file's recorded selection may carry work= and syncs= into --resume: each is
    bounded, so none makes a run endless."""
    with pytest.raises(VcsbenchError) as caught:
        Variant.parse(variant)
    assert str(caught.value).startswith(f"{variant}: {says}")
    assert (100_000, 1_000) == Variant.parse("git-pygit2[work=100000,syncs=1000]").planted
