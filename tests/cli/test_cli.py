"""The command line: doctor, --version, --help, and one-line errors."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from helpers import run_args, vcsbench

from vcsbench import __version__
from vcsbench.backends import REGISTRY
from vcsbench.results import read
from vcsbench.results.layout import benchmark_part


def test_doctor_json_lists_all_five_backends_with_versions() -> None:
    result = vcsbench("doctor", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(REGISTRY) == [b["name"] for b in report["backends"]]
    for backend in report["backends"]:
        assert backend["available"], backend["reason"]
        assert backend["versions"]
    assert isinstance(report["can_mount"], bool)


def test_doctor_prints_each_backend_and_mount_ability() -> None:
    result = vcsbench("doctor")
    assert result.returncode == 0
    for name in REGISTRY:
        assert name in result.stdout
    assert "mounting sandboxes" in result.stdout


def test_version_flag_prints_the_version() -> None:
    result = vcsbench("--version")
    assert f"vcsbench {__version__}" == result.stdout.strip()


@pytest.mark.parametrize(
    "command",
    ["doctor", "run", "study", "report", "compare", "history", "store", "export", "cleanup"],
)
def test_every_command_has_help(command: str) -> None:
    result = vcsbench(command, "--help")
    assert result.returncode == 0
    assert "usage: vcsbench" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--backends", "hg"], "unknown backend 'hg'; known: git-pygit2"),
        (["run", "--ops", "push"], "unknown operation 'push'; known: create"),
        (["run", "--payloads", "huge"], "unknown payload 'huge'; known: hello"),
        (["run", "--repos", "zero"], "repos 'zero' is not a whole number >= 1"),
        (["run", "--repos", "0"], "repos '0' is not a whole number >= 1"),
        (["run", "--cache", "lukewarm"], "cache 'lukewarm' is not one of warm, cold"),
        (["run", "--verify", "some"], "verify 'some' is not 'all' or 'sample:K'"),
        (["run", "--fs", "ntfs"], "unknown filesystem kind 'ntfs'"),
        (["run", "--backend-option", "git-cli:bogus=1"], "unknown option 'bogus' for backend"),
        (["run", "--backend-option", "nothing"], "is not BACKEND:key=value"),
        (["study", "markus2013", "--repos", "-5"], "repos '-5' is not a whole number"),
        (["doctor", "--calibrate", "--fs", "ext4:sise=1G"], "unknown option 'sise=1G' for ext4"),
    ],
)
def test_bad_input_gives_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = vcsbench(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert message in lines[0]
    assert "Traceback" not in result.stderr


def test_the_backends_page_table_is_the_registrys() -> None:
    from helpers import REPO

    from vcsbench.backends import markdown_table

    assert markdown_table() in (REPO / "docs" / "backends.md").read_text()


def test_study_refuses_options_it_fixes_itself() -> None:
    result = vcsbench("study", "markus2013", "--ops", "create")
    assert 2 == result.returncode
    assert "unrecognized arguments: --ops create" in result.stderr


def test_unsupported_pairs_are_said_and_a_run_of_nothing_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    nothing = vcsbench("run", "--backends", "hg-cli", "--ops", "gc", "--out", str(out))
    assert 2 == nothing.returncode
    assert ["vcsbench: error: nothing to run: hg-cli × gc: skipped, hg-cli has no gc"] == (
        nothing.stderr.splitlines()
    )
    assert not out.exists()
    mixed = vcsbench(
        *run_args("2", "hg-cli,git-pygit2", "gc,create", fs=f"dir:{tmp_path}", out=out),
    )  # fmt: skip
    assert 0 == mixed.returncode, mixed.stderr
    said = mixed.stdout.splitlines()
    assert "vcsbench: hg-cli × gc: skipped, hg-cli has no gc" in said
    assert "vcsbench: git-pygit2 × gc: skipped, git-pygit2 has no gc" in said
    assert 2 == len(json.loads(out.read_text())["benchmarks"])


def test_a_backend_option_for_a_backend_not_selected_is_refused(tmp_path: Path) -> None:
    result = vcsbench(
        "run", "--backends", "git-cli", "--backend-option", "svn-fs:compression=lz5",
        "--out", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert 2 == result.returncode
    assert [
        "vcsbench: error: backend option svn-fs:compression=lz5 is for svn-fs, which this run "
        "does not select (backends: git-cli); add svn-fs to the backends or drop the option"
    ] == result.stderr.splitlines()


def test_a_refusal_found_once_a_benchmark_starts_is_one_line_and_exit_2(
    root: None, tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("2500", fs=f"dir:{tmp_path},ext4:size=8M", out=out),
        "--interleave", "off",  # one filesystem after the other: the first finishes
    )  # fmt: skip
    assert 2 == result.returncode
    # the first benchmark's pace is on standard error too, before the refusal's one line
    (line,) = [x for x in result.stderr.splitlines() if " rounds, " not in x]
    assert line.startswith("vcsbench: error: --repos 2,500 cannot fit in the ext4:size=8M")
    assert line.endswith(f"(the 1 benchmark(s) finished before it are kept in {out})")
    assert "Traceback" not in result.stdout and "fixture was not used" not in result.stdout
    assert 1 == len(json.loads(out.read_text())["benchmarks"])


def test_a_refusal_of_an_interleaved_filesystem_comes_before_any_round(
    root: None, tmp_path: Path
) -> None:
    """Filesystems interleaved: the group's sandboxes are made together, so a sandbox too
    small is refused before the other filesystem ran a round."""
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("2500", fs=f"dir:{tmp_path},ext4:size=8M", out=out),
    )  # fmt: skip
    assert 2 == result.returncode, result.stdout[-2000:]
    (line,) = result.stderr.splitlines()
    assert line.startswith("vcsbench: error: --repos 2,500 cannot fit in the ext4:size=8M")
    assert "finished before it" not in line


def test_help_names_every_access_path_and_every_study() -> None:
    from vcsbench.servers.transports import TRANSPORTS
    from vcsbench.studies import LOAD_STUDIES, STUDIES

    # argparse wraps names at their hyphens
    load_help = re.sub(r"-\s+", "-", " ".join(vcsbench("load", "--help").stdout.split()))
    for name in TRANSPORTS:
        assert name in load_help
    top = vcsbench("--help").stdout
    for name in [*STUDIES, *LOAD_STUDIES]:
        assert name in top


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["study", "markus2031"], "vcsbench study: error: argument study: invalid choice: "
         "'markus2031'"),
        (["run", "--repos"], "vcsbench run: error: argument --repos: expected one argument"),
        (["nope"], "vcsbench: error: argument COMMAND: invalid choice: 'nope'"),
    ],
)  # fmt: skip
def test_an_argument_argparse_refuses_is_one_line(args: list[str], message: str) -> None:
    result = vcsbench(*args)
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(message) and line.endswith(" --help"), line


def test_create_runs_once_whatever_the_payloads(tmp_path: Path) -> None:
    """create makes an empty repository whatever the payload: one row, said."""
    out = tmp_path / "r.json"
    result = vcsbench(*run_args("2", "git-pygit2", "create,commit", "hello,submission",
                                fs="tmpfs", out=out))  # fmt: skip
    assert 0 == result.returncode, result.stderr
    assert "create × submission: skipped, create takes no payload (run once, with hello)" in (
        result.stdout
    )
    # vcsbench's own table, not pytest-benchmark's µs tables before it (the pytest door's)
    assert "Name (time in" not in result.stdout and "median ms" in result.stdout
    found = sorted(
        (benchmark_part(b)["op"], benchmark_part(b)["payload"]["name"])
        for b in json.loads(out.read_text())["benchmarks"]
    )
    assert [("commit", "hello"), ("commit", "submission"), ("create", "hello")] == found
    # The run added itself to the results store in vcsbench's data directory (the test's),
    # and said so.
    store = Path(os.environ["VCSBENCH_DATA"]) / "store.sqlite"
    assert (
        f"stored: 3 benchmark(s) of r.json in {store} (vcsbench history reads it; --store "
        "none leaves a run out)"
    ) in result.stdout
    history = vcsbench("history", "git-pygit2 create hello", "--store", str(store))
    assert 0 == history.returncode, history.stderr
    assert "1 of 3 series (1 run on 1 machine" in history.stdout
    medians = {b.op: b.median_ms for b in read(out).benchmarks}
    row = next(line for line in history.stdout.splitlines() if line.startswith("|     1 |"))
    assert float(row.split("|")[3]) == pytest.approx(medians["create"], rel=0.01)
