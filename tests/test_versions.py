"""Another release of a backend's library: its environment (built once, then cached), the
rounds run in it with the same harness, what the result records, and the refusals."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from helpers import hello_creates, vcsbench

from vcsbench.backends import Variant
from vcsbench.backends.envs import environment, site_of
from vcsbench.bench import floor
from vcsbench.bench.log import RoundRecord
from vcsbench.bench.workers import WorkerEnd, decode, encode
from vcsbench.errors import VcsbenchError

OTHER = "1.15.1"
"""A pygit2 release other than the installed one (1.21.0), with its own libgit2 (1.8.1)."""


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One environment cache for this file's tests (the first test builds in it), where
    a run given ``XDG_CACHE_HOME=<its grandparent>`` looks."""
    found = tmp_path_factory.mktemp("xdg") / "vcsbench" / "envs"
    found.mkdir(parents=True)
    return found


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


def test_a_version_variant_runs_its_rounds_in_its_environment_and_records_its_library(
    cache: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    result = vcsbench(
        *hello_creates("6", f"git-pygit2,git-pygit2[version={OTHER}]", "create+commit"),
        "--fs", f"dir:{tmp_path}", "--out", str(out), "--perturbation", "off",
        env={"XDG_CACHE_HOME": str(cache.parent.parent)},
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    mine, other = (b["extra_info"]["vcsbench"] for b in json.loads(out.read_text())["benchmarks"])
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


@pytest.mark.parametrize(
    ("variant", "says"),
    [
        ("svn-fs[version=1.14]", "svn-fs[version=1.14]: svn-fs has no library release to choose; "
         "version= applies to git-pygit2 (pygit2), git-markus (pygit2)"),
        ("git-pygit2[version=newest]", "version 'newest' of pygit2 is not a release number "
         "(e.g. 1.15.1)"),
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
