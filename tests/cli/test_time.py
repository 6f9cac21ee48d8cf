"""``vcsbench time``: a command of the user's, timed in each backend's repositories, with
the figures of the work it does (known bytes, a known delay), its exit status and the
repository's state verifying each round."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers import require_backend, skip_or_fail, vcsbench, wait_for_file

from vcsbench.results import read
from vcsbench.workload.command import argv_of, decode, encode, spec_text
from vcsbench.workload.operations import OperationSpec

QUICK = ["--perturbation", "off", "--repos", "4"]


def _time(tmp_path: Path, *args: str, fs: str = "") -> tuple[int, str, str]:
    done = vcsbench(
        "time", *args, *QUICK, "--fs", fs or f"dir:{tmp_path}", "--out", str(tmp_path / "t.json")
    )
    return done.returncode, done.stdout, done.stderr


def test_a_command_that_writes_a_mebibyte_reads_as_that_mebibyte(tmp_path: Path) -> None:
    """dd of 16 blocks of 64 KiB into the repository: 1 MiB written by the round's process
    (the command's, counted as the child it is), 1 MiB more in the repository's footprint;
    only git's backends run it (its first word names git? no: dd; the prefix says git)."""
    require_backend("git-pygit2")
    code, out, err = _time(
        tmp_path,
        "git: dd if=/dev/zero of=made bs=64k count=16 status=none",
        "--backends",
        "git-pygit2,svn-fs",
        "--check",
        "test -s made",
    )
    assert code == 0, err
    (bench,) = read(tmp_path / "t.json").benchmarks
    assert bench.label == "git-pygit2" and bench.op.startswith("cmd[")
    assert bench.errors == 0 and bench.repos == 4
    assert bench.per_repo("io_write_syscall") == pytest.approx(1 << 20, rel=0.01)
    assert bench.per_repo("footprint_change") == pytest.approx(1 << 20, rel=0.05)
    assert "git-pygit2" in out and "svn-fs" not in out.split("results:")[0].split("\n\n")[-1]


def test_a_known_delay_is_the_round_time_and_a_shell_runs_only_where_needed(
    tmp_path: Path,
) -> None:
    """sleep 0.2 as its words (no shell): every round's time is 200 ms and a little (the
    process start); the same through a shell (a ';' in it) takes the shell's start more."""
    require_backend("git-pygit2")
    assert argv_of("sleep 0.2") == ["sleep", "0.2"]
    assert argv_of("sleep 0.2; true")[:2] == ["/bin/sh", "-c"]
    code, _, err = _time(tmp_path, "git: sleep 0.2", "--backends", "git-pygit2")
    assert code == 0, err
    (bench,) = read(tmp_path / "t.json").benchmarks
    assert all(0.2 <= s < 0.26 for s in bench.samples_s), bench.samples_s


def test_a_command_that_fails_is_an_error_never_a_fast_sample(tmp_path: Path) -> None:
    require_backend("git-pygit2")
    code, out, err = _time(
        tmp_path, "git: sh -c 'echo no such thing >&2; exit 3'", "--backends", "git-pygit2"
    )
    assert code != 0, out + err
    assert "run= exited with 3: no such thing" in (tmp_path / "t.json").read_text()


def test_a_command_that_breaks_the_repository_fails_its_verification(tmp_path: Path) -> None:
    """Removing the repository's refs leaves git's HEAD unreadable: the default
    verification (the payload's revision still the newest) fails every round."""
    require_backend("git-pygit2")
    code, _, _ = _time(tmp_path, "git: rm -rf refs packed-refs", "--backends", "git-pygit2")
    assert code != 0
    assert "verify:" in (tmp_path / "t.json").read_text()


def test_any_command_is_one_option_and_reads_back_as_given() -> None:
    command = "sh -c '[ -d . ] && printf %s a,b > x'"
    assert decode(encode(command)) == command
    spec = OperationSpec.parse(spec_text(command, prepare="git gc", vcs="git"))
    assert decode(spec.options["run"]) == command
    assert OperationSpec.parse(spec.text) == spec  # the result's name parses again


def test_bad_commands_are_one_line(tmp_path: Path) -> None:
    for args, says in (
        ([" "], "command ' ' is empty"),
        (["git: x", "git: x"], "the same command is given twice"),
        (["x" * 5000], "at most 4,096"),
        (["git gc", "--backends", "svn-fs"], "nothing to time: no backend of --backends"),
        *(
            (["git gc", "--timeout", bad], f"--timeout {bad!r} is not a number of seconds")
            for bad in ("0", "-1", "nan", "inf", "1e99", "soon")
        ),
    ):
        done = vcsbench("time", *args, "--out", str(tmp_path / "t.json"))
        assert done.returncode == 2, done.stderr
        assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1
    done = vcsbench("run", "--ops", "cmd", "--out", str(tmp_path / "r.json"))
    assert done.returncode == 2 and "operation cmd needs run=COMMAND" in done.stderr
    done = vcsbench("run", "--ops", "cmd[run=true,vcs=cvs]", "--out", str(tmp_path / "r.json"))
    assert done.returncode == 2 and "vcs='cvs' is not a VCS" in done.stderr


def test_a_command_that_only_reads_writes_access_times_and_the_report_says_so(
    tmp_path: Path,
) -> None:
    """cat of every file of a fresh svn repository (reads only): on ext4 with relatime,
    the first read of each file since it was written updates its inode, so the device
    is written; with mount=noatime nothing is. The preparation's own writes are settled
    before each round in both. The report's device table says why a read writes."""
    import os

    from vcsbench.report.headline import ATIME

    if os.geteuid() != 0:
        skip_or_fail("loop-mounted ext4 sandboxes need root")
    require_backend("svn-fs")
    read_all = "svn: find . -type f -exec cat {} + > /dev/null"
    relatime, noatime = "ext4:size=256M", "ext4:size=256M,mount=noatime"
    code, _, err = _time(tmp_path, read_all, "--backends", "svn-fs", fs=f"{relatime},{noatime}")
    assert code == 0, err
    by_fs = {b.fs: b for b in read(tmp_path / "t.json").benchmarks}
    assert by_fs[relatime].per_repo("io_write_device") > 0
    assert by_fs[noatime].per_repo("io_write_device") == 0
    assert by_fs[relatime].per_repo("io_write_logical") == 0  # the command wrote no file
    shown = vcsbench("report", str(tmp_path / "t.json"))
    assert ATIME.strip() in " ".join(shown.stdout.split())


def marked(mark: str) -> list[int]:
    """The processes started with ``MARK=mark`` in their environment (this test's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if f"MARK={mark}".encode() in environ:
                found.append(int(entry.name))
    return found


def command_groups(pid: int) -> list[Path]:
    """The command cgroups of run ``pid`` (``vcsbench-cmd-PID-TOKEN``) still there."""
    from vcsbench.sandbox.ownership import cgroup2_root

    root = cgroup2_root()
    return [] if root is None else list(root.glob(f"vcsbench-cmd-{pid}-*"))


def settled(mark: str, within_s: float = 5.0) -> list[int]:
    """``marked(mark)`` once it is empty, or what is still there after ``within_s``."""
    deadline = time.monotonic() + within_s
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def test_a_call_that_leaves_three_daemons_has_the_three_ended_as_it_exits(
    tmp_path: Path,
) -> None:
    """A command that forks three sleepers and exits 0: the call returns its status, and
    the three it left, counted and ended (their own session or not)."""
    from vcsbench.sandbox.ownership import cgroup2_root
    from vcsbench.workload.contained import call

    if cgroup2_root() is None:
        skip_or_fail("needs cgroup v2 to write to (root)")
    mark = uuid.uuid4().hex
    argv = ["/bin/sh", "-c", "for i in 1 2 3; do setsid sleep 300 & done; exit 0"]
    ended = call(argv, tmp_path, {**os.environ, "MARK": mark}, limit_s=30)
    assert not isinstance(ended, OSError)
    assert (ended.code, ended.left) == (0, 3)
    assert [] == settled(mark, 0)


def test_a_command_that_forks_a_daemon_leaves_no_process_of_its_own(tmp_path: Path) -> None:
    """Every execution forks a sleeper that outlives it (41 of them with the perturbation
    check, said before it runs): none is left when the run ends, and its sandbox is gone."""
    require_backend("git-pygit2")
    mark = uuid.uuid4().hex
    done = vcsbench(
        "time", "git: sh -c 'setsid sleep 300 & exit 0'", "--backends", "git-pygit2",
        "--repos", "3", "--fs", f"dir:{tmp_path}", "--out", str(tmp_path / "t.json"),
        env={"MARK": mark},
    )  # fmt: skip
    assert 0 == done.returncode, done.stdout[-1500:] + done.stderr
    assert "runs each command up to 39 more times beside the 3 asked" in done.stdout
    assert [] == settled(mark)
    assert [] == list(tmp_path.glob("vcsbench-*"))


def test_a_command_that_never_exits_is_ended_at_its_timeout_as_an_error(
    tmp_path: Path,
) -> None:
    require_backend("git-pygit2")
    mark = uuid.uuid4().hex
    started = time.monotonic()
    done = vcsbench(
        "time", "git: sleep 1000", "--backends", "git-pygit2", "--timeout", "1",
        *QUICK[:2], "--repos", "2", "--fs", f"dir:{tmp_path}", "--out", str(tmp_path / "t.json"),
        env={"MARK": mark},
    )  # fmt: skip
    took = time.monotonic() - started
    assert 1 == done.returncode, done.stdout[-1500:] + done.stderr
    assert "run= did not finish within 1 s (the limit of a call, --timeout)" in done.stdout
    assert took < 30
    assert 2 == (tmp_path / "t.json").read_text().count("did not finish within 1 s")
    assert [] == settled(mark)


@pytest.mark.serial
def test_an_interrupted_hung_command_is_ended_with_the_run(tmp_path: Path) -> None:
    """SIGINT while a round's command sleeps for ever: the run stops, and the command
    with it (the command leads a session of its own, so only vcsbench hears the signal)."""
    require_backend("git-pygit2")
    mark = uuid.uuid4().hex
    flag = tmp_path / "started"
    proc = subprocess.Popen(
        [sys.executable, "-m", "vcsbench.cli", "time",
         f"git: sh -c 'touch {flag}; exec sleep 1000'", "--backends", "git-pygit2", *QUICK,
         "--fs", f"dir:{tmp_path}", "--out", str(tmp_path / "t.json")],
        env={**os.environ, "MARK": mark}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        wait_for_file(flag)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert 130 == proc.returncode, err
    assert [] == settled(mark)
    assert [] == list(tmp_path.glob("vcsbench-*"))
    assert [] == command_groups(proc.pid)
    assert "nothing left mounted" in err and "left up" not in err


@pytest.mark.serial
def test_a_sigkilled_runs_hung_command_is_ended_by_cleanup(
    tmp_path: Path, isolated_state: Path
) -> None:
    """SIGKILL of the run while its command sleeps: ``vcsbench cleanup`` ends the command
    by the run's token (in its cgroup's name and its environment), then the sandbox."""
    require_backend("git-pygit2")
    mark = uuid.uuid4().hex
    flag = tmp_path / "started"
    proc = subprocess.Popen(
        [sys.executable, "-m", "vcsbench.cli", "time",
         f"git: sh -c 'touch {flag}; setsid sleep 1000 & exec sleep 1000'",
         "--backends", "git-pygit2", *QUICK, "--fs", f"dir:{tmp_path}",
         "--out", str(tmp_path / "t.json")],
        env={**os.environ, "MARK": mark}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for_file(flag)
        time.sleep(0.2)
        proc.kill()
        proc.wait(timeout=30)
        sleeping = [p for p in marked(mark) if Path(f"/proc/{p}/comm").read_text() == "sleep\n"]
        assert 2 == len(sleeping)  # the command and the daemon it forked, both left
        assert command_groups(proc.pid)
        cleaned = vcsbench("cleanup")
        assert 0 == cleaned.returncode, cleaned.stderr
        assert [] == settled(mark)
        assert [] == command_groups(proc.pid)
        assert [] == list(tmp_path.glob("vcsbench-*"))
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.serial
def test_two_commands_run_interleaved_and_the_answer_is_their_ratio_first(
    tmp_path: Path,
) -> None:
    """sleep 0.06 against sleep 0.02 (known delays), in alternating blocks on one backend:
    the answer, before every table, is the slower one's time over the faster's by block,
    about 3 (60 ms and 20 ms, each with the same process start), with its interval."""
    require_backend("git-pygit2")
    done = vcsbench(
        "time", "git: sleep 0.06", "git: sleep 0.02", "--backends", "git-pygit2",
        "--perturbation", "off", "--repos", "12", "--interleave", "6",
        "--fs", f"dir:{tmp_path}", "--out", str(tmp_path / "t.json"), "--store", "none",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    slow, fast = read(tmp_path / "t.json").benchmarks
    for bench in (slow, fast):
        blocks = bench.harness.interleaved
        assert blocks is not None and len(blocks.median_ms) == 6, bench.op
        assert bench.errors == 0 and bench.repos == 12
    place = slow.harness.interleaved.position  # type: ignore[union-attr]
    assert len(set(place)) == 2 and place.count(place[0]) == 3  # leads as often as it trails
    flat = " ".join(done.stdout.split())  # as the terminal wrapped it, unwrapped
    found = re.search(
        r"- 'sleep 0\.06' against 'sleep 0\.02' \(on git-pygit2, dir:\S+\): ([0-9.]+) times "
        r"as long \(between ([0-9.]+) and ([0-9.]+)\)",
        flat,
    )
    assert found is not None, flat[:2000]
    ratio, low, high = map(float, found.groups())
    # (60 + s) / (20 + s) for a start s of 0-13 ms: under 3, and over it only by a late
    # wake-up; its interval clear of 1 (a verdict: slower)
    assert 2.2 < ratio < 3.3 and 1.5 < low <= ratio <= high
    assert found.start() < flat.index("median ms")
    assert "2 commands in 6 interleaved blocks, against 'sleep 0.02'" in flat
