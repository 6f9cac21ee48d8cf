"""Helpers the tests share (imported as ``helpers``: pytest puts tests/ on the path)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from vcsbench.results.layout import benchmark_part, machine_part, run_facts

IN_CI = os.environ.get("CI", "").lower() == "true"
REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason``; in CI a skip would hide an untested path, so fail instead."""
    if IN_CI:
        pytest.fail(f"not skipped in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@contextmanager
def on_a_disk(tmp_path: Path) -> Iterator[Path]:
    """A directory of the test's own on a filesystem with a block device (whose writes a
    process is charged for): ``tmp_path`` where it is one, else one made in /var/tmp and
    removed after (``make test`` puts /tmp on a tmpfs as root)."""
    if os.major(os.stat(tmp_path).st_dev) != 0:
        yield tmp_path
        return
    if os.major(os.stat("/var/tmp").st_dev) == 0:
        skip_or_fail("neither the test's directory nor /var/tmp is on a block device")
    made = Path(tempfile.mkdtemp(prefix="vcsbench-test-", dir="/var/tmp"))
    try:
        yield made
    finally:
        shutil.rmtree(made)


def require_backend(name: str) -> None:
    """Skip (fail in CI) a test whose backend cannot run here, saying why."""
    from vcsbench.backends import REGISTRY

    availability = REGISTRY[name].available()
    if not availability.ok:
        skip_or_fail(f"backend {name} unavailable: {availability.reason}")


def vcsbench(
    *args: str, env: dict[str, str] | None = None, timeout: float = 600, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the command line as a user would, in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "vcsbench.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
        cwd=cwd,
    )


def own_dirs() -> list[str]:
    """Where this test's runs make things: its temp directory and the session's."""
    return [os.environ.get("TMPDIR", "/nonexistent"), str(BASETEMP[0]) if BASETEMP else str(REPO)]


BASETEMP: list[Path] = []


def _ours(path: str) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in own_dirs())


def vcsbench_mounts() -> str:
    """Mounts of vcsbench sandboxes this test made (below its own directories)."""
    mounts = subprocess.run(
        ["findmnt", "-rn", "-o", "TARGET,SOURCE"], capture_output=True, text=True, check=False
    ).stdout
    return "\n".join(
        line for line in mounts.splitlines() if "vcsbench" in line and _ours(line.split()[0])
    )


def vcsbench_loops() -> str:
    """Loop devices backed by images this test made (below its own directories)."""
    loops = subprocess.run(
        ["losetup", "--list", "--noheadings", "-O", "NAME,BACK-FILE"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return "\n".join(
        line
        for line in loops.splitlines()
        if "vcsbench" in line and _ours(line.split(None, 1)[-1].removesuffix(" (deleted)"))
    )


CLI = [sys.executable, "-m", "vcsbench.cli"]
"""The command line, run as a child process (add the command and its arguments)."""


RUN_ARGV = [
    *CLI,
    "run",
    "--ops",
    "create",
    "--payloads",
    "hello",
    "--progress",
    "lines",
    *("--perturbation", "off"),
    *("--kept", "none"),
]
"""``vcsbench run`` of creates of hello, its progress in plain lines (add the rest); the
harness-against-bare-loop check (``tests/test_perturbation.py``) and the maintenance for
the footprint as kept (``tests/test_footprint_kept.py``) left out, as in
:func:`run_args`: these tests look at other figures, and they cost seconds a run."""


def wait_for(proc: subprocess.Popen[str], text: str) -> None:
    """Read the run's progress until a line holding ``text``: its standard error where
    that is a pipe of its own, else its standard output (standard error joined to it)."""
    stream = proc.stderr if proc.stderr is not None else proc.stdout
    assert stream is not None
    for line in stream:
        if text in line:
            return
    raise AssertionError(f"never saw {text!r}")


def wait_for_file(path: Path, within_s: float = 60) -> None:
    """Wait until ``path`` exists (a command under test made it: it has started)."""
    deadline = time.monotonic() + within_s
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path.exists(), f"{path} never appeared"


def run_args(
    repos: str,
    backends: str = "git-pygit2",
    ops: str = "create",
    payloads: str = "hello",
    *,
    fs: str | None = None,
    out: Path | str | None = None,
    checks: bool = False,
) -> list[str]:
    """The one way a test spells ``vcsbench run``: ``ops`` of ``payloads`` in ``repos``
    repositories of ``backends`` (on ``fs`` and into ``out`` where given; the test adds
    the rest). Without the perturbation check and the maintenance for the footprint as
    kept unless ``checks`` (see ``RUN_ARGV``): most tests look at other figures, and
    those cost seconds a run."""
    argv = ["run", "--backends", backends, "--ops", ops, "--payloads", payloads, "--repos", repos]
    argv += [] if fs is None else ["--fs", fs]
    argv += [] if out is None else ["--out", str(out)]
    return argv + ([] if checks else ["--perturbation", "off", "--kept", "none"])


def small_run(
    tmp_path: Path, *extra: str, repos: str = "2", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A small, quick ``vcsbench run`` of git-pygit2 creates in a dir: sandbox of the
    test, into ``tmp_path/r.json`` unless ``extra`` names another --out."""
    out = [] if "--out" in extra else ["--out", str(tmp_path / "r.json")]
    return vcsbench(*run_args(repos, fs=f"dir:{tmp_path}"), *out, *extra, env=env)


def edited_result(
    src: Path, dst: Path, edit: Callable[[dict[str, Any], list[dict[str, Any]]], None]
) -> str:
    """A copy of the result file ``src`` at ``dst`` after ``edit(document, benchmarks)``
    (``benchmarks``: each benchmark's vcsbench part); the path, as text."""
    document = json.loads(src.read_text())
    edit(document, [benchmark_part(entry) for entry in document["benchmarks"]])
    dst.write_text(json.dumps(document))
    return str(dst)


def scale_times(bench: dict[str, Any], factor: float) -> None:
    """Every round of a benchmark ``factor`` times as long (the same work on a machine
    ``factor`` as slow)."""
    rounds = bench["rounds"]
    rounds["wall_ns"] = [round(ns * factor) for ns in rounds["wall_ns"]]


def canary_beside(bench: dict[str, Any], ms: float, writes_ms: float | None = None) -> None:
    """A canary timed after every round of the benchmark, each timing ``ms`` (its writes
    ``writes_ms``, or three tenths of it): each round over it is its time over ``ms``."""
    writes = 0.3 * ms if writes_ms is None else writes_ms
    timed = len(bench["rounds"]["wall_ns"])
    bench["canary"] = {
        "ms": ms,
        "timed": timed,
        "every": 1,
        "method": "test",
        "writes_ms": writes,
        "each_us": [[round(1000 * ms), round(1000 * writes)]] * timed,
    }


def retotal(bench: dict[str, Any]) -> None:
    """Each metric's total the sum of its successful rounds' values, as vcsbench writes it
    (after a test changed which rounds there are, or which succeeded)."""
    rounds = bench["rounds"]
    for name, values in rounds["values"].items():
        figure = bench["metrics"].get(name)
        kept = [v for v, ok in zip(values, rounds["ok"], strict=True) if ok]
        if figure and figure.get("total") is not None and kept and None not in kept:
            figure["total"] = sum(kept)
            figure["per_repo"] = sum(kept) / len(kept)


def keep_rounds(bench: dict[str, Any], count: int) -> None:
    """A benchmark cut to its first ``count`` rounds, every per-round array and count with it."""
    rounds = bench["rounds"]
    for key in ("t_start_s", "wall_ns", "ok"):
        rounds[key] = rounds[key][:count]
    rounds["values"] = {k: v[:count] for k, v in rounds["values"].items()}
    retotal(bench)
    bench["repos"] = bench["rounds_asked"] = count
    bench["repos_ok"] = sum(rounds["ok"])
    bench["errors"] = count - bench["repos_ok"]
    bench["verified"] = min(bench["verified"], count)


def history_run(
    tmp_path: Path, run: int, cell: dict[str, Any], machine: float, change: float
) -> str:
    """Run ``run`` of a series: on a machine ``machine`` times as slow (the canary with
    it), the benchmark ``change`` times as slow besides; a newer library from run 8."""

    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        document["datetime"] = f"2026-12-{run + 1:02d}T10:00:00+00:00"
        run_facts(document)["run_id"] = f"run-{run}"
        run_facts(document)["spread"] = {"fingerprint": "t", "runs": 8, "cells": [cell]}
        for bench in benches:
            scale_times(bench, machine * change)
            canary_beside(bench, machine)
            if run >= 8:
                bench["backend"]["versions"] = {"pygit2": "9.9.9"}

    return edited_result(
        REPO / "tests" / "data" / "tiny-ext4.json", tmp_path / f"r{run}.json", edit
    )


def planted_history_store(tmp_path: Path) -> Path:
    """A store of twelve runs of one series: the machine 20 % slower from run 5 on (the
    canary with it), the benchmark 25 % slower from run 9 on with another library
    version (:func:`history_run`); a calibration whose medians move with the canary, which
    moves 2 % of its own."""
    import math
    import random

    rng = random.Random(4)
    levels = [math.exp(rng.gauss(0, 0.02)) for _ in range(8)]
    canaries = [1.0, 1.03, 0.98, 1.01, 0.99, 1.02, 0.97, 1.0]
    cell = {
        "backend": "git-pygit2",
        "op": "create+commit",
        "fstype": "ext4",
        "rounds": 12,
        "figures": {
            "time": [10 * v * c for v, c in zip(levels, canaries, strict=True)],
            "time_per_canary": [10 * v for v in levels],
            "canary": canaries,
        },
    }
    store = tmp_path / "s.sqlite"
    for run in range(12):
        machine = 1.2 if run >= 4 else 1.0
        change = 1.25 if run >= 8 else 1.0
        path = history_run(tmp_path, run, cell, machine, change * math.exp(rng.gauss(0, 0.01)))
        assert 0 == vcsbench("store", "add", path, "--store", str(store)).returncode
    return store


def submitted_repositories(tmp_path: Path, payload: dict[str, bytes], students: int) -> Path:
    """A load's repositories as ``students`` students' first sessions left them: each a
    Subversion repository (svn-fs) holding its visit-1 submission; their directory."""
    from vcsbench.backends import make_backend
    from vcsbench.load.repositories import repo_name, submission

    require_backend("svn-fs")
    repos = tmp_path / "repos"
    repos.mkdir()
    with make_backend("svn-fs") as backend:
        for student in range(students):
            repo = repos / repo_name(student)
            backend.create(repo)
            backend.commit(repo, submission(payload, student, 1), "s1", tmp_path)
    return repos


def one_client_config(path: str, repos: str, **changes: Any) -> Any:
    """A load engine's configuration for one client of one closed step on access path
    ``path`` (a deadline of one student unless ``changes`` say otherwise)."""
    from vcsbench.load.engine_config import EngineConfig
    from vcsbench.load.paths import parse_path

    base: dict[str, Any] = {
        "scenario": "deadline", "path": parse_path(path), "repos": repos, "students": 1,
        "payload": "hello", "precreate": False, "steps": (1.0,), "shape": "closed",
        "max_clients": 1, "step_seconds": 1.0,
    }  # fmt: skip
    return EngineConfig(**{**base, **changes})


def on_another_machine(path: str | Path) -> None:
    """The result file at ``path`` as if written on another machine (another CPU model)."""
    document = json.loads(Path(path).read_text())
    machine_part(document)["cpu_model"] = "another CPU"
    Path(path).write_text(json.dumps(document))
