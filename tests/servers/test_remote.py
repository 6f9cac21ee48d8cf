"""Benchmarks through a server (``remote=``): the client's clone, checkout and update go
over the transport the variant names, to a server the run starts and stops, at the
distance ``rtt=`` asks for; each round is verified as a local one is."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers import run_args, skip_or_fail, vcsbench

from vcsbench.results.layout import benchmark_part


def _run(tmp_path: Path, backends: str, ops: str, repos: str = "4") -> list[dict[str, Any]]:
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args(repos, backends, ops, fs="tmpfs", out=out), "--progress", "none",
    )  # fmt: skip
    assert 0 == result.returncode, result.stdout[-3000:] + result.stderr
    return [benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"]]


@pytest.fixture(autouse=True)
def _root() -> None:
    if os.geteuid() != 0:
        skip_or_fail("the servers run as root (sshd, Apache) in a tmpfs sandbox")


def test_update_and_publish_go_through_the_server_the_variant_names(
    tmp_path: Path,
) -> None:
    backends = "git-cli[remote=git-ssh],svn-cli[remote=apache-svn-https],hg-cli[remote=apache-hg]"
    # update: a clone (svn: checkout) through the server before the round, a pull in it;
    # publish: a commit pushed (svn: committed) through it
    found = _run(tmp_path, backends, "update,publish,create")
    done = {(b["backend"]["variant"], b["op"]) for b in found}
    # each operation that reaches the repository through the server, nothing else
    assert done == {
        (variant, op) for variant in backends.split(",") for op in ("update", "publish")
    }
    for bench in found:
        assert 4 == bench["repos"] == bench["verified"] and 0 == bench["errors"]
        server = bench["harness"]["server"]
        assert server["transport"] == bench["backend"]["options"]["remote"]
    # stopped with the benchmark: no server of this run is left
    mine = os.environ.get("VCSBENCH_STATE_DIR", "")
    assert not [
        p
        for p in psutil.process_iter(["name", "environ"])
        if p.info["name"] in ("sshd", "apache2") and mine in str(p.info["environ"] or "")
    ]


def test_a_round_trip_is_paid_by_every_exchange_of_the_clone(tmp_path: Path) -> None:
    """git over smart HTTP at 40 ms: a clone takes at least a round trip more than at
    0 ms (several, in fact: the slope is what the distance study reports)."""
    found = _run(
        tmp_path, "git-cli[remote=apache-git,rtt=0],git-cli[remote=apache-git,rtt=40]",
        "clone", repos="6",
    )  # fmt: skip
    median = {
        b["backend"]["options"]["rtt"]: sorted(b["rounds"]["wall_ns"])[3] / 1e6 for b in found
    }
    assert median["40"] - median["0"] >= 40
    measured = [b["harness"]["server"]["distance"]["calibration"] for b in found]
    assert [m["requested_rtt_ms"] for m in measured] == [0, 40]
    assert 40 <= measured[1]["measured_rtt_ms"] <= 44


@pytest.mark.parametrize(
    ("variant", "says"),
    [
        ("svn-cli[remote=git-ssh]", "svn-cli[remote=git-ssh]: remote='git-ssh' is not a "
         "transport to svn repositories; use one of svnserve, apache-svn, apache-svn-https, "
         "svn-ssh"),
        ("git-cli[rtt=10]", "git-cli[rtt=10]: rtt= is the distance to a server; give remote= "
         "too"),
        ("git-cli[remote=git-daemon,rtt=fast]", "rtt= 'fast' is not a round-trip time"),
        ("git-pygit2[remote=git-ssh]", "unknown option 'remote' for backend git-pygit2"),
    ],
)  # fmt: skip
def test_a_remote_that_cannot_be_is_one_line(variant: str, says: str, tmp_path: Path) -> None:
    result = vcsbench("run", "--backends", variant, "--out", str(tmp_path / "x.json"))
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert says in line
