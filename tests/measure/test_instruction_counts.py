"""Instructions counted per round under callgrind: proved with known work -- a loop of
exactly 2 instructions a turn -- and a known program started inside a round."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import skip_or_fail

from vcsbench.measure import instructions

TURNS = (1_000, 1_000, 2_000, 251_000, 1_000, 2_000)
"""Each round's turns of the counter's loop: its count grows by exactly 2 a turn (the
first round carries the process's first calls: it is no yardstick)."""
ROUND = """
import os, subprocess, sys
from pathlib import Path
from vcsbench.measure.instructions import Counter
counter = Counter(Path(sys.argv[1]))
assert counter.counting
for index, turns in enumerate(int(t) for t in sys.argv[2].split(",")):
    counter.start(index)
    counter.spin(turns)
    if index == 3:  # a child started in the round: its count is the round's
        subprocess.run([sys.argv[3]], check=True, env=dict(os.environ))
    counter.end()
"""


@pytest.fixture(scope="module")
def library() -> Path:
    try:
        return instructions.library()
    except instructions.Unavailable as exc:
        skip_or_fail(str(exc))
        raise


def test_a_round_counts_its_known_work_to_the_instruction(library: Path, tmp_path: Path) -> None:
    true = shutil.which("true")
    assert true is not None
    out = tmp_path / "out"
    out.mkdir()
    turns = ",".join(map(str, TURNS))
    done = subprocess.run(
        [*instructions.command(out), sys.executable, "-c", ROUND, str(library), turns, true],
        env={"PATH": "/usr/bin:/bin", instructions.ROUND_VAR: instructions.MAIN},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    process = next(int(p.name.split(".")[2]) for p in out.glob("cg.main.*.1"))
    counts = instructions.read_counts(out, process, len(TURNS))
    assert None not in counts
    # Rounds alike but for their turns differ by exactly 2 a turn.
    assert counts[2] - counts[1] == 2 * 1_000  # type: ignore[operator]
    assert counts[5] - counts[4] == 2 * 1_000  # type: ignore[operator]
    # The round that started /bin/true holds its count, as callgrind counts it alone.
    alone = tmp_path / "alone"
    alone.mkdir()
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={alone}/cg.out", "-q", true],
        env={"PATH": "/usr/bin:/bin", instructions.ROUND_VAR: "3"},  # as the round's child had
        check=True,
        timeout=120,
    )
    by_itself = instructions._totals(alone / "cg.out")
    (child,) = out.glob("cg.3.*")
    started = instructions._totals(child)
    # A program's start moves a little with what valgrind puts in its environment when
    # it traces a child (here about 1,000 of 110,000 instructions).
    assert started == pytest.approx(by_itself, rel=0.02)
    own = instructions._totals(out / f"cg.main.{process}.4")  # the 4th part: round 3
    assert counts[3] == own + started


def test_a_directory_of_too_many_files_is_refused(tmp_path: Path) -> None:
    for i in range(instructions.MAX_FILES + 1):
        (tmp_path / f"x{i}").touch()
    with pytest.raises(ValueError, match="over 20,000"):
        instructions.read_counts(tmp_path, 1, 1)


def test_a_file_without_totals_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cg.main.7.1").write_text("events: Ir\nfn=x\n1 2\n")
    with pytest.raises(ValueError, match="no totals line"):
        instructions.read_counts(tmp_path, 7, 1)
