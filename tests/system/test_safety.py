"""Safety on a shared machine: cleanup removes only what it can prove is vcsbench's.

Every victim here lives in a temporary directory of the test; planted state files go to
the test's own state directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from helpers import (
    CLI,
    run_args,
    skip_or_fail,
    small_run,
    vcsbench,
    vcsbench_loops,
    vcsbench_mounts,
    wait_for,
)

from vcsbench.results.layout import benchmark_part
from vcsbench.sandbox.state import boot_id, load_state


def plant(state_dir: Path, name: str, content: object) -> Path:
    path = state_dir / f"{name}.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def made(path: Path | str) -> dict[str, object]:
    """A record of ``path`` with its real identity, as an attacker could read it."""
    st = os.lstat(path)
    return {"path": str(path), "dev": st.st_dev, "ino": st.st_ino}


def claim(state_dir: Path, **fields: object) -> Path:
    """A well-formed state file of a dead run (another token), claiming ``fields``."""
    state: dict[str, object] = {
        "format": 2,
        "token": secrets.token_hex(16),
        "pid": 999999,
        "starttime": "1",
        "boot_id": boot_id(),
        "kind": "dir",
        "uid": os.geteuid(),
        "temp_root": tempfile.gettempdir(),
        "dirs": [],
        "processes": [],
        "steps": [],
    }
    state.update(fields)
    return plant(state_dir, "claim", state)


def precious(tmp_path: Path, name: str = "precious") -> Path:
    victim = tmp_path / name
    victim.mkdir(mode=0o700)
    (victim / "data").write_text("keep me")
    return victim


def test_a_planted_work_directory_without_the_runs_marker_is_left(
    isolated_state: Path, tmp_path: Path
) -> None:
    victim = precious(tmp_path, "vcsbench-lookalike")
    planted = claim(isolated_state, workdir=made(victim))
    result = vcsbench("cleanup")
    assert "keep me" == (victim / "data").read_text()
    assert 1 == result.returncode
    assert f"state file {planted}" in result.stderr
    assert "does not hold the run's ownership marker" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_directory_marked_by_another_run_is_left(isolated_state: Path, tmp_path: Path) -> None:
    victim = precious(tmp_path)
    (victim / ".vcsbench-owner").write_text(secrets.token_hex(16))
    claim(isolated_state, workdir=made(victim), dirs=[made(victim)])
    result = vcsbench("cleanup")
    assert "keep me" == (victim / "data").read_text()
    assert "does not hold the run's ownership marker" in result.stderr


def test_a_planted_image_is_left(isolated_state: Path, tmp_path: Path) -> None:
    image = tmp_path / "disk.img"
    image.write_bytes(b"\0" * 4096)
    claim(isolated_state, kind="ext4", image=made(image), user_image_dir=str(tmp_path))
    result = vcsbench("cleanup")
    assert image.exists()
    assert "does not carry vcsbench's image name" in result.stderr


def test_an_image_with_vcsbenchs_name_but_another_identity_is_left(
    isolated_state: Path, tmp_path: Path
) -> None:
    image = tmp_path / "vcsbench-ext4-1-x.img"
    image.write_bytes(b"\0" * 4096)
    record = made(image)
    record["ino"] = int(str(record["ino"])) + 1  # the run's image, since replaced
    claim(isolated_state, kind="ext4", image=record, user_image_dir=str(tmp_path))
    result = vcsbench("cleanup")
    assert image.exists()
    assert "not the regular file of yours recorded" in result.stderr


def test_a_foreign_tmpfs_at_a_vcsbench_name_is_not_unmounted(
    root: None, isolated_state: Path
) -> None:
    point = tempfile.mkdtemp(prefix="vcsbench-tmpfs-")
    subprocess.run(["mount", "-t", "tmpfs", "vcsbench-tmpfs", point], check=True)
    try:
        claim(isolated_state, kind="tmpfs", mountpoint=made(point))
        result = vcsbench("cleanup")
        assert "is mounted from vcsbench-tmpfs, not from the run's tmpfs" in result.stderr
        assert point in vcsbench_mounts()
    finally:
        subprocess.run(["umount", point], check=False)
        os.rmdir(point)


def starttime(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def test_a_hand_started_session_leader_is_never_killed(isolated_state: Path) -> None:
    sleeper = subprocess.Popen(["setsid", "sleep", "60"], env={"PATH": os.environ["PATH"]})
    try:
        time.sleep(0.2)
        pid = int(subprocess.check_output(["pgrep", "-n", "-P", str(sleeper.pid)]) or 0)
    except (subprocess.CalledProcessError, ValueError):
        pid = sleeper.pid  # setsid exec'd sleep itself
    try:
        record = {"pid": pid, "starttime": starttime(pid), "cgroup": None}
        claim(isolated_state, processes=[record])
        result = vcsbench("cleanup")
        assert starttime(pid), "the process was killed"
        assert "carries neither the run's token nor its cgroup: left running" in result.stderr
    finally:
        subprocess.run(["kill", str(pid)], check=False)
        sleeper.wait()


@pytest.mark.parametrize("carries_token", [True, False])
def test_a_group_member_its_leader_left_is_ended_only_with_the_runs_token(
    isolated_state: Path, carries_token: bool
) -> None:
    token = secrets.token_hex(16)
    env = {"PATH": os.environ["PATH"], **({"VCSBENCH_OWNER": token} if carries_token else {})}
    leader = subprocess.Popen(  # starts a member, then waits for its stdin to close
        ["sh", "-c", "sleep 60 & echo $!; read _"], env=env, start_new_session=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert leader.stdout is not None and leader.stdin is not None
    member = int(leader.stdout.readline())
    try:
        record = {"pid": leader.pid, "starttime": starttime(leader.pid), "cgroup": None}
        member_start = starttime(member)
        leader.stdin.close()
        leader.wait(timeout=10)  # the leader is gone; its member runs on in its group
        claim(isolated_state, token=token, processes=[record])
        result = vcsbench("cleanup")
        assert 0 == result.returncode, result.stderr
        alive = Path(f"/proc/{member}").exists() and starttime(member) == member_start
        state = Path(f"/proc/{member}/stat").read_text().split(")")[1].split()[0] if alive else ""
        assert (alive and state != "Z") is not carries_token
        assert [] == list(isolated_state.glob("*.json"))
    finally:
        subprocess.run(["kill", "-9", str(member)], check=False, capture_output=True)
        leader.stdout.close()


def test_a_cgroup_with_vcsbenchs_name_is_left_with_its_processes(
    root: None, isolated_state: Path
) -> None:
    from vcsbench.sandbox.ownership import cgroup2_root

    base = cgroup2_root()
    if base is None:
        skip_or_fail("no writable cgroup v2 hierarchy")
        return
    group = base / f"vcsbench-git-daemon-{os.getpid()}"
    group.mkdir()
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        (group / "cgroup.procs").write_text(str(sleeper.pid))
        record = {"pid": sleeper.pid, "starttime": starttime(sleeper.pid), "cgroup": made(group)}
        claim(isolated_state, processes=[record])
        result = vcsbench("cleanup")
        assert sleeper.poll() is None and group.is_dir()
        assert "does not carry the run's token" in result.stderr
    finally:
        sleeper.kill()
        sleeper.wait()
        group.rmdir()


def test_a_state_file_of_the_earlier_format_is_reported_and_left(
    isolated_state: Path, tmp_path: Path
) -> None:
    victim = precious(tmp_path, "vcsbench-old")
    planted = plant(
        isolated_state,
        "old",
        {"pid": 999999, "starttime": "1", "boot_id": "x", "kind": "dir", "workdir": str(victim)},
    )
    result = vcsbench("cleanup")
    assert victim.is_dir() and 1 == result.returncode
    assert f"state file {planted} is of state format 1, not 2" in result.stderr


KILLED_RUN = [*CLI, *run_args("1000000"), "--progress", "lines"]


def killed_dir_run(tmp_path: Path, signum: int) -> Path:
    """A dir: sandbox run, stopped by ``signum`` mid-benchmark after a victim directory
    was bind-mounted into its work directory; the work directory."""
    proc = subprocess.Popen(
        [*KILLED_RUN, "--fs", f"dir:{tmp_path}", "--out", str(tmp_path / "r.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(proc, "rounds")
    (workdir,) = tmp_path.glob("vcsbench-*")
    inside = workdir / "mounted-here"
    inside.mkdir()
    subprocess.run(["mount", "--bind", str(tmp_path / "precious"), str(inside)], check=True)
    proc.send_signal(signum)
    proc.communicate(timeout=120)
    return workdir


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_removal_never_crosses_a_bind_mount_into_the_work_directory(
    root: None, isolated_state: Path, tmp_path: Path, signum: int
) -> None:
    victim = precious(tmp_path)
    workdir = killed_dir_run(tmp_path, signum)
    inside = workdir / "mounted-here"
    try:
        result = vcsbench("cleanup")
        assert "keep me" == (victim / "data").read_text()
        assert f"{inside} is mounted inside" in result.stderr or (
            f"{inside} is a mount point" in result.stderr
        )
        assert 1 == result.returncode and workdir.is_dir()
    finally:
        subprocess.run(["umount", str(inside)], check=False)
    again = vcsbench("cleanup")
    assert 0 == again.returncode, again.stderr
    assert not workdir.exists() and "keep me" == (victim / "data").read_text()
    assert [] == list(isolated_state.glob("*.json"))


@pytest.mark.parametrize(
    "content",
    [
        '{"format": 2, "pid": 1, "starttime": "0", "boot_id": "", "kind": "tmpfs", '
        '"mountpoint": 5}',
        "not json at all",
        '["a", "list"]',
        '{"format": 2, "pid": 1}',
        '{"format": 2, "token": "t", "pid": 1, "starttime": "0", "boot_id": "", "kind": "dir", '
        '"uid": 0, "temp_root": "/tmp", "rm": "/"}',
    ],
)
def test_a_malformed_state_file_is_one_line_and_never_blocks_a_run(
    isolated_state: Path, tmp_path: Path, content: str
) -> None:
    planted = plant(isolated_state, "bad", content)
    result = vcsbench("cleanup")
    assert 1 == result.returncode
    assert "Traceback" not in result.stderr
    assert 1 == sum(1 for line in result.stderr.splitlines() if str(planted) in line)
    run = small_run(tmp_path, repos="2")
    assert 0 == run.returncode, run.stdout[-1500:] + run.stderr
    assert planted.exists()


def test_a_state_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared-state"
    shared.mkdir()
    os.chmod(shared, 0o777)
    result = vcsbench("cleanup", env={"VCSBENCH_STATE_DIR": str(shared)})
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert "can be written by others (mode 777)" in line and "chmod 700" in line


def test_a_new_state_directory_is_made_0700(tmp_path: Path) -> None:
    fresh = tmp_path / "new-state"
    result = small_run(tmp_path, repos="1", env={"VCSBENCH_STATE_DIR": str(fresh)})
    assert 0 == result.returncode, result.stderr
    assert 0o700 == fresh.stat().st_mode & 0o777
    assert [] == list(fresh.iterdir())


def test_what_a_run_makes_is_proven_by_its_token(tmp_path: Path) -> None:
    from vcsbench.sandbox import Sandbox, parse_fs_spec
    from vcsbench.sandbox.ownership import prove_dir

    with Sandbox(parse_fs_spec(f"dir:{tmp_path}")) as sandbox:
        assert sandbox._state_path is not None
        state = load_state(sandbox._state_path)
        assert state.workdir is not None
        assert None is prove_dir(state.workdir, state.token, "work directory")
        assert "marker" in str(prove_dir(state.workdir, secrets.token_hex(16), "work directory"))


SETUP_ONLY = textwrap.dedent("""
    import sys
    from vcsbench.sandbox import Sandbox, parse_fs_spec
    with Sandbox(parse_fs_spec(sys.argv[1])):
        pass
""")


@pytest.mark.serial
def test_sigterm_at_any_instant_of_set_up_leaves_nothing_mounted(
    root: None, tmp_path: Path, isolated_state: Path
) -> None:
    """The sweep: 40 delays across the set-up of an ext4 sandbox."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", SETUP_ONLY, "ext4:size=64M"], check=True)
    setup_s = time.perf_counter() - start
    outcomes: list[int] = []
    for i in range(40):
        proc = subprocess.Popen(
            [sys.executable, "-c", SETUP_ONLY, "ext4:size=64M"], stderr=subprocess.DEVNULL
        )
        time.sleep(setup_s * i / 40)
        proc.send_signal(signal.SIGTERM)
        outcomes.append(proc.wait(timeout=60))
        assert "" == vcsbench_mounts(), f"try {i}: left mounted"
        assert "" == vcsbench_loops(), f"try {i}: loop device left"
        assert [] == list(isolated_state.glob("*.json")), f"try {i}: state left"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("/", "/ is a system directory"),
        ("/etc", "/etc is a system directory"),
        ("/proc", "/proc is on /proc"),
        ("/sys/kernel", "/sys/kernel is on /sys"),
        ("/dev", "/dev is on /dev"),
    ],
)
def test_unsafe_dir_targets_are_refused_in_one_line(target: str, message: str) -> None:
    result = vcsbench("run", "--fs", f"dir:{target}", "--repos", "1")
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert message in line


def test_a_dir_inside_a_sandbox_is_refused(tmp_path: Path) -> None:
    inside = tmp_path / "vcsbench-tmpfs-abc" / "x"
    inside.mkdir(parents=True)
    result = vcsbench("run", "--fs", f"dir:{inside}", "--repos", "1")
    assert 2 == result.returncode
    assert "is inside a vcsbench sandbox" in result.stderr


def test_a_harness_failure_after_the_rounds_keeps_the_benchmark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakes import FakeBackend, KnownWrite

    from vcsbench.bench import harness
    from vcsbench.bench.plan import RoundPlan
    from vcsbench.bench.rounds import BenchmarkRun
    from vcsbench.sandbox import Sandbox, parse_fs_spec

    def broken_scan(*paths: Path, roots: bool = True) -> None:
        raise PermissionError(13, "Permission denied", str(paths[0]))

    with Sandbox(parse_fs_spec(f"dir:{tmp_path}")) as sandbox:
        assert sandbox.info is not None
        run = BenchmarkRun(
            KnownWrite(FakeBackend()), sandbox.info, sandbox.root / "b", RoundPlan(4)
        )
        run.run_all()
        monkeypatch.setattr(harness, "footprint", broken_scan)
        bench = run.finish(FakeBackend().describe())
    assert 4 == len(bench.samples_s) and 0 == bench.errors
    assert None is bench.metric("footprint_allocated").total
    assert (
        "the footprint scan failed: PermissionError" in bench.metric("footprint_allocated").reason
    )
    assert bench.metric("io_write_syscall").total is not None


def test_compare_gate_fails_when_the_new_run_has_errors_the_base_did_not(tmp_path: Path) -> None:
    from helpers import DATA, retotal

    document = json.loads((DATA / "tiny-ext4.json").read_text())
    info = benchmark_part(document["benchmarks"][0])
    info["errors"] = 2
    info["rounds"]["ok"][:2] = [False, False]
    retotal(info)  # as vcsbench writes them: totals over the rounds that succeeded
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document))
    result = vcsbench("compare", str(DATA / "tiny-ext4.json"), str(broken), "--fail-on", "time:50%")
    assert 1 == result.returncode
    assert "error rate rose from 0 of 12 to 2 of 12 rounds" in result.stdout


RUN_LONG = [*CLI, *run_args("100000", "svn-fs"), "--progress", "lines"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.serial
def test_an_interrupted_run_exits_128_plus_the_signal_with_one_line(
    tmp_path: Path, signum: int
) -> None:
    proc = subprocess.Popen(
        [*RUN_LONG, "--fs", f"dir:{tmp_path}", "--out", str(tmp_path / "r.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(proc, "rounds")
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert 128 + signum == proc.returncode
    lines = [line for line in err.splitlines() if line.startswith("vcsbench:")]
    name = signal.Signals(signum).name
    assert 1 == len(lines), err
    assert lines[0].startswith(f"vcsbench: interrupted by {name} during svn-fs create hello")
    assert "1 sandbox(es) torn down, nothing left mounted" in lines[0]
    assert ["r.json"] == [p.name for p in tmp_path.iterdir()] or [] == list(tmp_path.iterdir())


def test_a_failed_run_never_prints_an_earlier_runs_results_as_its_own(
    root: None, tmp_path: Path
) -> None:
    out = tmp_path / "s.json"
    common = run_args("3")
    first = vcsbench(*common, "--fs", "tmpfs", "--out", str(out))
    assert 0 == first.returncode and "results: " in first.stdout
    before = out.read_bytes()
    second = vcsbench(
        *common, "--fs", "ext4:size=64K", "--image-dir", str(tmp_path), "--out", str(out)
    )
    assert 0 != second.returncode
    assert "results: " not in second.stdout and "tmpfs" not in second.stdout.split("===")[-1]
    assert before == out.read_bytes()


def run_payload(tree: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return vcsbench(
        *run_args(
            "1", "git-pygit2", "create+commit", tree, fs=f"dir:{tmp_path}", out=tmp_path / "r.json"
        ),
        timeout=60,
    )


def test_a_tree_payload_with_a_name_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "good.txt").write_text("x")
    with open(os.fsencode(tree) + b"/bad\xff.txt", "wb") as handle:
        handle.write(b"y")
    result = run_payload(f"tree:{tree}", tmp_path)
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert "file name 'bad\\\\xff.txt' is not UTF-8" in line


@pytest.mark.parametrize("target", ["/proc", "/sys/kernel"])
def test_a_tree_payload_on_the_kernels_filesystems_is_refused_without_reading(
    tmp_path: Path, target: str
) -> None:
    result = run_payload(f"tree:{target}", tmp_path)
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert "whose files are the kernel's, not content" in line


def test_a_fifo_in_a_tree_payload_is_refused_not_read(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    os.mkfifo(tree / "pipe")
    result = run_payload(f"tree:{tree}", tmp_path)  # reading it would block: 60 s timeout
    assert 2 == result.returncode
    assert "pipe is not a regular file" in result.stderr


def test_a_tree_payload_deeper_than_python_recurses_is_one_line(tmp_path: Path) -> None:
    """1,100 directories deep (Python's os.walk recursed past its limit: a traceback)."""
    depth, here, back = 1100, tmp_path / "tree", os.getcwd()
    here.mkdir()
    (here / "top.txt").write_text("x")
    try:
        os.chdir(here)  # names relative to the last directory: the whole path is too long
        for _ in range(depth):
            os.mkdir("d")
            os.chdir("d")
        Path("f").write_text("x")
        os.chdir(back)
        result = run_payload(f"tree:{here}", tmp_path)
    finally:
        os.chdir(here)  # taken down from the bottom, as deep as it was made
        for _ in range(depth):
            os.chdir("d")
        with contextlib.suppress(FileNotFoundError):
            os.unlink("f")
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")
        os.chdir(back)
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert "lies more than 256 directories deep, deeper than a payload's path may" in line


def test_a_tree_payload_file_larger_than_a_payload_is_refused_before_it_is_read(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    with open(tree / "sparse.img", "wb") as handle:
        handle.truncate(3 << 30)  # 3 GiB of hole: read whole, the run would hold 3 GiB
    result = run_payload(f"tree:{tree}", tmp_path)
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert f"sparse.img is {3 << 30:,} bytes, more than the 2 GiB a payload's files" in line


@pytest.mark.parametrize(
    "content",
    ["[" * 100_000 + "]" * 100_000, '{"pid": 1, "pad": "' + "x" * (2 << 20) + '"}'],
    ids=["deep", "huge"],
)
def test_a_deep_or_huge_state_file_is_one_line_and_never_blocks_a_run(
    isolated_state: Path, tmp_path: Path, content: str
) -> None:
    planted = plant(isolated_state, "bad", content)
    result = vcsbench("cleanup")
    assert 1 == result.returncode
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if str(planted) in line]
    assert 1 == len(lines) and ("nested too deeply" in lines[0] or "larger than" in lines[0])
    run = run_payload("hello", tmp_path)
    assert 0 == run.returncode, run.stderr


def victim_file(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    return victim


RUN_SMALL = ["--backends", "git-pygit2", "--repos", "2", "--progress", "none"]


def test_an_out_that_is_a_directory_is_refused_before_the_first_round(
    isolated_state: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results.json"
    out.mkdir()
    result = vcsbench(
        "run", *RUN_SMALL, "--ops", "create", "--fs", f"dir:{tmp_path}", "--out", str(out)
    )
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert f"--out {out}: is a directory, not a file" in line
    assert "rounds" not in result.stdout and [] == list(isolated_state.iterdir())


@pytest.mark.parametrize("link", ["results.json", "results.md"])
def test_a_symlink_where_a_study_writes_is_refused_before_it_runs(
    isolated_state: Path, tmp_path: Path, link: str
) -> None:
    victim = victim_file(tmp_path)
    (tmp_path / link).symlink_to(victim)
    result = vcsbench(
        "study",
        "markus2013",
        *RUN_SMALL,
        "--fs",
        f"dir:{tmp_path}",
        "--out",
        str(tmp_path / "results.json"),
    )
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert "is a symlink" in line
    assert "keep me" == victim.read_text() and [] == list(isolated_state.iterdir())


def test_a_symlinked_server_log_directory_is_refused_before_a_load(
    isolated_state: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "load-logs").symlink_to(victim)
    result = vcsbench(
        "load",
        "--paths",
        "local:git-pygit2",
        "--fs",
        f"dir:{tmp_path}",
        "--steps",
        "1",
        "--step-seconds",
        "1",
        "--students",
        "4",
        "--out",
        str(tmp_path / "load.json"),
    )
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert "the server log directory beside --out," in line and "is a symlink" in line
    assert [] == list(victim.iterdir()) and [] == list(isolated_state.iterdir())


def test_report_and_export_never_write_through_a_symlink(tmp_path: Path) -> None:
    from helpers import DATA

    victim = victim_file(tmp_path)
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "report.md").symlink_to(victim)
    (tmp_path / "export.json").symlink_to(victim)
    (tmp_path / "plots").symlink_to(reports)
    tiny = str(DATA / "tiny-ext4.json")
    for argv in (
        ["report", tiny, "--out", str(reports)],
        ["export", tiny, "--out", str(tmp_path / "export.json")],
        ["report", tiny, "--plots", str(tmp_path / "plots")],
    ):
        result = vcsbench(*argv)
        assert 2 == result.returncode, argv
        (line,) = result.stderr.strip().splitlines()
        assert "is a symlink" in line, line
    assert "keep me" == victim.read_text()
    assert ["report.md"] == [p.name for p in reports.iterdir()]


def test_an_out_in_missing_directories_says_what_it_made(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper" / "r.json"
    result = vcsbench(
        "run", *RUN_SMALL, "--ops", "create", "--fs", f"dir:{tmp_path}", "--out", str(out)
    )
    assert 0 == result.returncode, result.stderr
    made = f"{tmp_path / 'new'}, {tmp_path / 'new' / 'deeper'}"
    assert f"vcsbench: made the directories {made} for the results" in result.stderr
    assert out.is_file()


@pytest.mark.serial
def test_the_workers_of_a_killed_run_die_with_it(
    root: None, tmp_path: Path, isolated_state: Path
) -> None:
    """Rounds in recycled worker processes: a SIGKILL of the run ends them too (they had
    gone on writing into the sandbox, so cleanup could only unmount it lazily)."""
    import psutil

    temp = Path(tempfile.gettempdir())
    before = set(temp.glob("vcsbench-*"))  # this session's other tests' are not this one's
    proc = subprocess.Popen(
        [*KILLED_RUN, "--recycle", "500", "--fs", "tmpfs", "--out", str(tmp_path / "r.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_for(proc, "rounds")
    helpers = psutil.Process(proc.pid).children(recursive=True)
    assert len(helpers) >= 2  # the spawner and a worker (and the sampler)
    proc.kill()
    proc.communicate()
    _, alive = psutil.wait_procs(helpers, timeout=5)
    assert [] == [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]
    result = vcsbench("cleanup")
    assert 0 == result.returncode, result.stderr
    assert "" == vcsbench_mounts() and [] == list(isolated_state.glob("*.json"))
    assert set() == set(temp.glob("vcsbench-*")) - before, "nothing outside"


@pytest.mark.serial
def test_the_closing_line_of_an_interrupted_set_up_names_only_what_is_up(
    root: None, tmp_path: Path, isolated_state: Path
) -> None:
    argv = [*KILLED_RUN[:-2], "--progress", "none", "--fs", "ext4:size=64M", "--repos", "1"]
    start = time.perf_counter()
    subprocess.run([*argv, "--out", str(tmp_path / "once.json")], capture_output=True, check=True)
    whole_s = time.perf_counter() - start
    for i in range(8):
        proc = subprocess.Popen(
            [*argv, "--out", str(tmp_path / f"r{i}.json")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(whole_s * i / 8)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        closing = [line for line in err.splitlines() if "interrupted by" in line]
        mounted = vcsbench_mounts()
        if closing and "left up:" in closing[0]:
            assert mounted, f"try {i}: said left up, nothing was: {closing[0]}"
        else:
            assert "" == mounted, f"try {i}: left mounted, said {closing}"
        vcsbench("cleanup")
