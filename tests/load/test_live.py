"""A running load, watched (``--live``): Locust's engine, in one process and as a master
with workers, says every 2 s what the step has done so far, and those counts agree with
the step's own verified figures (the exact figures of a known engine's live messages are
in ``test_fake_engine.py``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import require_backend, vcsbench

LIVE = re.compile(
    r"local:git-pygit2, running step 1 of 1: (\d+) s of 5 s, ([\d,]+) sessions so far "
    r"\((\d+) failed\), p50 (?:[\d,]+ ms|-), p95 (?:[\d,]+ ms|-) \(not yet verified\)"
)


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["local", "master"])
@pytest.mark.serial
def test_the_live_view_counts_the_steps_sessions_as_they_end(
    tmp_path: Path, workers: list[str]
) -> None:
    require_backend("git-pygit2")
    (tmp_path / "fs").mkdir()
    out = tmp_path / "load.json"
    done = vcsbench(
        "load", "--paths", "local:git-pygit2", "--students", "20", "--steps", "2",
        "--step-seconds", "5", "--live", "lines", "--fs", f"dir:{tmp_path / 'fs'}",
        "--out", str(out), *workers, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = [tuple(int(g.replace(",", "")) for g in m.groups()) for m in LIVE.finditer(done.stderr)]
    # Every 2 s of the 5 s window: at 2 s and 4 s (a master also as the window ends).
    assert [s for s, _, _ in seen][:2] == [2, 4], done.stderr
    (entry,) = json.loads(out.read_text())["vcsbench_load"]["loads"]
    (step,) = entry["steps"]
    counts = [n for _, n, _ in seen]
    assert counts == sorted(counts) and counts[-1] <= step["sessions"]
    assert counts[1] > 0 and all(failed == 0 for _, _, failed in seen)
    # The live lines come before the step's own line, which says what was verified.
    assert done.stderr.index("so far") < done.stderr.index("verified and written")
