"""The command line: doctor, --version, --help, and one-line errors."""

from __future__ import annotations

import json

import pytest
from helpers import vcsbench

from vcsbench import __version__
from vcsbench.backends import REGISTRY


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
    "command", ["doctor", "run", "study", "report", "compare", "export", "cleanup"]
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
