"""Every registered operation, on every backend that has it, interleaved: each round verified
in the process that ran it, and the repositories kept by their VCS's maintenance verified
again in the run's own process, where the operation never ran (a log, a status or a diff
checked there against an answer it was not given crashed the run)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import require_backend, vcsbench

from vcsbench.backends import REGISTRY
from vcsbench.results.layout import benchmark_part
from vcsbench.workload.operations import OPERATIONS

# Two halves of the registry, so that two test workers share the minute it takes.
HALVES = [sorted(OPERATIONS)[0::2], sorted(OPERATIONS)[1::2]]


@pytest.mark.parametrize("half", HALVES, ids=["first-half", "second-half"])
def test_every_operation_runs_interleaved_on_every_backend(tmp_path: Path, half: list[str]) -> None:
    for name in REGISTRY:
        require_backend(name)
    git = shutil.which("git")
    assert git is not None
    # A second git-cli variant (the same git, named by its directory), so that the
    # operations only git-cli has are interleaved too.
    other_git = f"git-cli[bin={Path(git).resolve().parent}]"
    ops = {
        name: name + ("[history=3]" if "history" in cls.option_defaults else "")
        for name, cls in OPERATIONS.items()
        if not cls.user_command and name in half
    }
    out = tmp_path / "r.json"
    result = vcsbench(
        "run", "--backends", ",".join([*REGISTRY, other_git]), "--ops", ",".join(ops.values()),
        "--payloads", "hello", "--repos", "2", "--interleave", "2", "--kept", "all",
        "--perturbation", "off", "--fs", f"dir:{tmp_path}", "--out", str(out),
        "--store", "none",
    )  # fmt: skip
    assert 0 == result.returncode, result.stdout[-3000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stdout + result.stderr
    found = {
        (record["op"], record["backend"]["variant"]): record
        for record in map(benchmark_part, json.loads(out.read_text())["benchmarks"])
    }
    wanted = {
        (ops[name], variant)
        for name, cls in OPERATIONS.items()
        if name in ops
        for variant, backend in [*REGISTRY.items(), (other_git, REGISTRY["git-cli"])]
        if cls.supports(backend, {})
    }
    assert set(found) == wanted
    for key, record in found.items():
        assert (record["errors"], record["verified"]) == (0, 2), key
        assert "interleaved" in record["harness"], key  # every operation has two variants
        assert isinstance(record["harness"]["kept"], dict), (key, record["harness"]["kept"])
