"""Counted rounds (``--counted``): each benchmark's operation counted whole outside its
timed rounds -- proved with planted work of a known size beside the same variant without
it, and what compare and the gate say of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import vcsbench

from vcsbench.results.layout import benchmark_part

WORK = 50
"""``work=50``: 50,000 turns of a 2-instruction loop, 100,000 instructions a round."""
SYNCS = 2


def counted(path: Path) -> dict[str, dict[str, Any]]:
    return {
        benchmark_part(b)["backend"]["variant"]: benchmark_part(b)["counted"]
        for b in json.loads(path.read_text())["benchmarks"]
    }


def test_planted_work_is_counted_to_its_size_and_named_by_compare(
    root: None, tmp_path: Path
) -> None:
    out = tmp_path / "run.json"
    planted = f"git-pygit2[work={WORK},syncs={SYNCS}]"
    result = vcsbench(
        "run", "--backends", f"git-pygit2,{planted}", "--ops", "commit", "--payloads",
        "hello", "--repos", "3", "--fs", f"dir:{tmp_path}", "--counted", "3",
        "--perturbation", "off", "--out", str(out),
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    found = counted(out)
    plain, more = found["git-pygit2"], found[planted]
    assert plain["ok"] == more["ok"] == [True] * 3
    assert not plain["missing"] and not more["missing"]
    for kind, step in (("sync_calls", SYNCS), ("write_calls", SYNCS), ("open_calls", 1)):
        assert [v + step for v in plain["values"][kind]] == more["values"][kind], kind
    # The loop's 100,000 instructions, and the planted fsyncs' Python around them; the
    # rest of the round moves by under 1 % (what each round's names and contents hash to).
    pairs = zip(more["values"]["instructions"], plain["values"]["instructions"], strict=True)
    extra = sorted(m - p for m, p in pairs)[1]
    assert 2 * WORK * 1000 <= extra <= 2 * WORK * 1000 + 80_000, extra
    assert more["seconds"] > 0
    # compare names what changed, at one run a side, the same file on both sides of a pair
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    document = json.loads(out.read_text())
    for path, keep in ((one, "git-pygit2"), (two, planted)):
        copy = dict(document)
        copy["benchmarks"] = [
            b for b in document["benchmarks"]
            if benchmark_part(b)["backend"]["variant"] == keep
        ]  # fmt: skip
        path.write_text(json.dumps(copy))
    compared = vcsbench("compare", str(one), str(two), "--fail-on", "instructions:1%")
    text = compared.stdout + compared.stderr
    assert 1 == compared.returncode, text
    assert f"+{SYNCS} fsync-family calls (0 → {SYNCS}, in every counted round)" in text
    assert "instructions" in text and "exceeds +1%" in text
