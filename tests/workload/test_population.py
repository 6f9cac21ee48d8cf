"""Populations (``--age term:...``): S × A repositories whose history lengths follow a
seeded distribution, each a working repository of its length holding what was committed,
the bytes recorded those the disk gave them, and the measured rounds run among them."""

from __future__ import annotations

import json
import os
import re
import statistics
from pathlib import Path

import pytest
from helpers import require_backend, run_args, vcsbench
from histories import make_history

from vcsbench.backends import make_backend
from vcsbench.backends.changes import digest_tree, tree_differences
from vcsbench.errors import VcsbenchError
from vcsbench.results.layout import benchmark_part
from vcsbench.workload.age import fill
from vcsbench.workload.history import load_history_payload, read_history
from vcsbench.workload.operation import RoundPaths
from vcsbench.workload.payloads import load_payload
from vcsbench.workload.population import parse_population, rewrite


def test_a_terms_history_lengths_are_seeded_and_uniform() -> None:
    """The same spec gives the same lengths on every machine (pinned); over many
    repositories they are uniform on LO..HI (mean and each length's share)."""
    term = parse_population("term:students=4,assignments=3,commits=1-30")
    assert 12 == term.repos
    assert [10, 29, 20, 30, 21, 17, 19, 30, 7, 23, 2, 30] == term.commits()
    many = parse_population("term:students=1000,assignments=10,commits=1-30,seed=7").commits()
    assert 10_000 == len(many) and {1, 30} == {min(many), max(many)}
    assert abs(statistics.mean(many) - 15.5) < 0.3  # sd of the mean: 8.66 / 100
    shares = [many.count(c) / len(many) for c in range(1, 31)]
    assert max(abs(s - 1 / 30) for s in shares) < 0.012  # 3.3 sd of one share
    assert many != parse_population("term:students=1000,assignments=10,commits=1-30").commits()


def test_each_later_commit_rewrites_one_to_three_files_with_lines_of_its_own() -> None:
    payload = load_payload("submission")
    for commit in range(2, 40):
        files = rewrite(payload, commit, 1)
        assert 1 <= len(files) <= 3 and set(files) <= set(payload.files)
        for name, data in files.items():
            head, _, rest = data.partition(b"\n")
            assert f"vcsbench population commit {commit}".encode() == head
            assert sorted(rest.split(b"\n")) == sorted(payload.files[name].split(b"\n"))
    assert rewrite(payload, 5, 1) == rewrite(payload, 5, 1) != rewrite(payload, 5, 2)


@pytest.mark.parametrize(
    ("spec", "line"),
    [
        ("term:students=4", "give assignments, commits; term:students=S"),
        ("term:students=0,assignments=2,commits=3", "students='0' is not a whole number from 1"),
        ("term:students=2,assignments=2,commits=5-2", "commits=5-2 runs backwards"),
        ("term:students=2,assignments=2,commits=1-1001", "'1001' is not a whole number"),
        ("term:students=2,assignments=2,commits=3,size=4", "'size=4' is not one of term:"),
        ("term:students=4000,assignments=4000,commits=3", "16,000,000 repositories, more than"),
        ("term:students=2,assignments=2,commits=3,content=nosuch", "nosuch"),
    ],
)  # fmt: skip
def test_a_bad_population_is_one_line(spec: str, line: str) -> None:
    with pytest.raises(VcsbenchError, match=line.replace("(", r"\(")):
        parse_population(spec)
    result = vcsbench("run", "--age", spec, "--ops", "create", "--backends", "git-pygit2")
    assert 2 == result.returncode and 1 == len(result.stderr.strip().splitlines())
    assert line in result.stderr


def allocated(path: Path) -> int:
    total = 0
    for directory, _, names in os.walk(path):
        total += os.lstat(directory).st_blocks * 512
        total += sum(os.lstat(os.path.join(directory, n)).st_blocks * 512 for n in names)
    return total


@pytest.mark.parametrize("backend_name", ["git-pygit2", "svn-fs", "hg-cli"])
def test_a_population_is_filled_as_its_lengths_say(backend_name: str, tmp_path: Path) -> None:
    """Every repository has its drawn number of commits, holds what they committed (its
    newest revision verified by the backend's reader), takes commits in its own; the bytes
    recorded are what a walk of the filled repositories counts."""
    require_backend(backend_name)
    term = parse_population("term:students=6,assignments=2,commits=1-5,content=submission")
    lengths = term.commits()
    payload = load_payload("submission")
    with make_backend(backend_name) as backend:
        backend.ready(tmp_path)
        info = fill(backend, tmp_path, term.repos, "hashed", processes=2, population=term)
        repos = [RoundPaths.of(tmp_path, i, "hashed").repo for i in range(term.repos)]
        for repo, length in zip(repos, lengths, strict=True):
            files = dict(payload.files)
            for commit in range(2, length + 1):
                files.update(rewrite(payload, commit, term.seed))
            assert [] == backend.verify(repo, files), (repo, length)
            if "log" in backend.capabilities:
                assert length == len(backend.log(repo)), repo
        backend.commit(repos[3], {"a.txt": b"three\n"}, "m", tmp_path)
        assert [] == backend.verify(repos[3], {"a.txt": b"three\n"})
        assert ["a.txt: missing"] == backend.verify(repos[4], {"a.txt": b"three\n"})
    about = info["population"]
    assert isinstance(about, dict)
    assert {str(c): lengths.count(c) for c in sorted(set(lengths))} == about["repos_by_commits"]
    assert (min(lengths), max(lengths), sum(lengths)) == tuple(
        about["commits"][k] for k in ("min", "max", "total")
    )
    walked = sum(allocated(repo) for repo in repos)
    assert abs(about["allocated_bytes"]["total"] - walked) <= 0.05 * walked, (about, walked)


def test_a_population_from_a_history_holds_its_first_commits(tmp_path: Path) -> None:
    """content=history:...: repository i is the history's first c_i commits, its tree the
    source's at that commit."""
    source = make_history(tmp_path)
    spec = f"term:students=3,assignments=2,commits=2-9,seed=3,content=history:{source}"
    term = parse_population(spec)
    history = read_history(load_history_payload(f"history:{source}").spec)
    with make_backend("git-pygit2") as backend:
        backend.ready(tmp_path)
        fill(backend, tmp_path, term.repos, "flat", processes=1, population=term)
        for index, length in enumerate(term.commits()):
            repo = RoundPaths.of(tmp_path, index, "flat").repo
            want = digest_tree(history.tree(length - 1))
            assert [] == tree_differences(want, backend.tree(repo, length)), (index, length)
            assert length == len(backend.log(repo)), (index, length)  # and nothing newer
    with pytest.raises(VcsbenchError, match=r"which replays 10 \(give commits=...-10"):
        parse_population(f"term:students=3,assignments=2,commits=2-11,content=history:{source}")


def test_the_rounds_run_among_the_population(tmp_path: Path) -> None:
    """A run with a population: its rounds after the S × A repositories (the growth
    tables count them present), the population's shape in the result."""
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("3", "git-pygit2", "commit", fs=f"dir:{tmp_path}", out=out),
        "--progress", "none",
        "--age", "term:students=5,assignments=2,commits=1-4",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr + result.stdout
    (bench,) = [benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"]]
    assert 10 == bench["age"] and 0 == bench["errors"] and 3 == bench["verified"]
    population = bench["harness"]["age"]["population"]
    assert "term:students=5,assignments=2,commits=1-4" == population["spec"]
    assert 10 == sum(population["repos_by_commits"].values())
    report = vcsbench("report", str(out))
    assert 0 == report.returncode, report.stderr
    low, high = population["commits"]["min"], population["commits"]["max"]
    assert re.search(rf"\|\s*10 \(5 × 2, {low}–{high} commits\)\s*\|", report.stdout)


def test_an_empty_and_a_filled_sandbox_are_interleaved(tmp_path: Path) -> None:
    """``age=0`` on one variant beside the run's population: the two run in alternating
    blocks, each among its own repositories; an interleaved group keeps the run's --age
    (it once ran every variant among none)."""
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("4", "git-pygit2,git-pygit2[age=0],git-pygit2[copy=2]", "commit",
                   fs=f"dir:{tmp_path}", out=out),
        "--progress", "none",
        "--age", "term:students=3,assignments=2,commits=1-3",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr + result.stdout
    benches = [benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"]]
    found = {v["backend"].get("variant", "git-pygit2"): v for v in benches}
    assert {"git-pygit2": 6, "git-pygit2[age=0]": 0, "git-pygit2[copy=2]": 6} == {
        k: v["age"] for k, v in found.items()
    }
    assert all("interleaved" in v["harness"] and 4 == v["verified"] for v in found.values())
    assert "population" not in found["git-pygit2[age=0]"]["harness"].get("age", {})
    population = found["git-pygit2"]["harness"]["age"]["population"]
    assert 6 == sum(population["repos_by_commits"].values())


def test_a_bad_variant_age_is_one_line() -> None:
    result = vcsbench("run", "--backends", "git-pygit2[age=many]", "--ops", "create")
    assert 2 == result.returncode
    assert "git-pygit2[age=many]: age='many' is not a whole number >= 0" in result.stderr
    assert 1 == len(result.stderr.strip().splitlines())
