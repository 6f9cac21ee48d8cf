"""A result file is owned by the run writing it: a second run on the same path is
refused before it starts (both doors), a run killed with SIGKILL blocks nobody, and a full
disk under the file is one line naming what could not be written."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, run_args, vcsbench

HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from vcsbench.results import outlock\n"
    "outlock.acquire(Path(sys.argv[1]))\n"
    "print('held', flush=True)\n"
    "time.sleep(120)\n"
)


def _holder(out: Path) -> subprocess.Popen[str]:
    """A process of its own holding ``out`` as a run does, until it is killed."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL),
    )  # fmt: skip
    assert child.stdout is not None and "held" == child.stdout.readline().strip()
    return child


def test_a_second_run_on_the_same_output_is_refused_and_the_first_keeps_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "r.json"
    out.write_text('{"benchmarks": []}')  # the first run's file, as it stands
    holder = _holder(out)
    try:
        second = vcsbench(*run_args("2", "git-pygit2", "create", "hello", fs="tmpfs", out=out))
        assert 2 == second.returncode
        assert (
            f"--out {out}: another run (process {holder.pid}) is writing it; wait for it to "
            "end, or give another path"
        ) in second.stderr
        assert 1 == len(second.stderr.strip().splitlines()), second.stderr
        door = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             str(REPO / "benchmarks"), "--benchmark-only", f"--benchmark-json={out}",
             "-k", "nothing-at-all"],
            capture_output=True, text=True, cwd=tmp_path, timeout=120,
        )  # fmt: skip
        assert 4 == door.returncode, door.stdout + door.stderr
        assert "another run" in door.stderr and "is writing it" in door.stderr
        load = vcsbench("load", "--fs", f"dir:{tmp_path}", "--out", str(out))
        assert 2 == load.returncode and "is writing it" in load.stderr, load.stderr[-2000:]
        assert '{"benchmarks": []}' == out.read_text()  # untouched by any of them
    finally:
        holder.kill()  # SIGKILL: the kernel lets the name go
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    after = vcsbench(*run_args("2", "git-pygit2", "create", "hello", fs="tmpfs", out=out))
    assert 0 == after.returncode, after.stderr
    assert 1 == len(json.loads(out.read_text())["benchmarks"])
    left = sorted(p.name for p in tmp_path.iterdir() if p.name != ".benchmarks")  # pytest's
    assert ["r.json"] == left  # nothing of the runs' own beside it


def test_a_full_disk_under_the_output_is_one_line_naming_what_is_not_in_it(
    tmp_path: Path, root: None
) -> None:
    """The output on a 48 KiB tmpfs of its own (mounted in a mount namespace of the
    child's, gone with it): the small benchmarks fit, the larger ones do not."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux)")
    where = tmp_path / "full"
    where.mkdir()
    out = where / "r.json"
    script = (
        f"mount -t tmpfs -o size=48k tmpfs {where} && "
        f"{sys.executable} -m vcsbench.cli " + " ".join(
            run_args("20", "git-pygit2", "create+commit,commit", "hello,submission", fs="tmpfs",
                     out=out)
        ) + " --progress none; code=$?; "
        f"{sys.executable} -c 'import json,sys; "
        f"print(len(json.load(open(sys.argv[1]))[\"benchmarks\"]))' {out}; exit $code"
    )  # fmt: skip
    done = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        capture_output=True, text=True, timeout=300, env={**os.environ},
    )  # fmt: skip
    assert 1 == done.returncode, done.stdout[-3000:] + done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if "could not be written" in line]
    assert 1 == len(lines), done.stdout[-3000:]
    assert f"--out {out}: could not be written (No space left on device);" in lines[0]
    assert "Traceback" not in done.stdout + done.stderr
    kept = int(done.stdout.strip().splitlines()[-1])  # the file, whole, with what fitted
    if "finished benchmark(s) are not in it: git-pygit2-" in lines[0]:
        named = int(lines[0].split("; ")[1].split()[0])
    else:  # every benchmark fitted; the run's closing facts did not
        assert "the run's facts are not in it" in lines[0]
        named = 0
    assert 4 == kept + named
    assert not list(where.iterdir())  # the tmpfs went with the child; nothing left here
