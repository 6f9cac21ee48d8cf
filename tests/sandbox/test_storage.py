"""Storage profiles: the sandbox's loop device throttled, proved with known work; the
rules recorded, removed, and never touched where they are not the run's."""

from __future__ import annotations

import json
import mmap
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from fakes import FakeBackend
from helpers import CLI, run_args, vcsbench, vcsbench_loops, vcsbench_mounts

from vcsbench.bench.plan import RoundPlan
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.errors import VcsbenchError
from vcsbench.results.layout import benchmark_part
from vcsbench.sandbox import Sandbox, parse_fs_spec, throttle
from vcsbench.sandbox.throttle import PROFILES, device_number, rules_on, set_rule
from vcsbench.workload.operation import Operation, RoundPaths
from vcsbench.workload.payloads import Payload

# Timing- or signal-bound: run in make test's serial pass, alone on the machine.
pytestmark = pytest.mark.serial

K = 100
"""Direct 4 KiB writes per round: each one IO at the device."""
IOPS = 100


class DirectWrites(Operation):
    """K direct 4 KiB writes into a file made (and flushed) before the round: exactly K
    write IOs at the device in the timed region, so at IOPS the round takes K / IOPS s
    (less the first slice the kernel's throttle lets through at once, at most 0.1 s)."""

    name = "direct-writes"
    needs = frozenset({"create"})

    def __init__(self, backend: FakeBackend) -> None:
        super().__init__(backend, Payload("known", "known bytes", {}, None))
        self.buffer = mmap.mmap(-1, 4096)

    def prepare(self, paths: RoundPaths) -> None:
        self.backend.create(paths.repo)
        (paths.repo / "data").write_bytes(b"\0" * (K * 4096))

    def run(self, paths: RoundPaths) -> None:
        fd = os.open(paths.repo / "data", os.O_WRONLY | os.O_DIRECT)
        try:
            with memoryview(self.buffer) as view:
                for i in range(K):
                    if os.pwrite(fd, view, i * 4096) != 4096:
                        raise OSError("a short direct write")
        finally:
            os.close(fd)

    def expected(self) -> dict[str, bytes]:
        return {}


def test_a_profile_is_parsed_with_explicit_limits_winning() -> None:
    spec = parse_fs_spec("xfs:profile=hdd,write-iops=200,read-bw=64M")
    assert "hdd" == spec.profile
    assert {**PROFILES["hdd"].limits, "write_iops": 200, "read_bps": 64 << 20} == dict(spec.limits)
    assert () == parse_fs_spec("ext4:size=1G").limits


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tmpfs:profile=hdd", "profile= limits a block device, and tmpfs has none"),
        ("ext4:profile=floppy", "unknown storage profile 'floppy'; use one of hdd, sata-ssd"),
        ("ext4:write-iops=fast", "write-iops=fast is not a whole number of IOs per second"),
        ("ext4:write-bw=0", "write-bw=0 must be more than 0 bytes/s"),
        ("dir:/tmp,profile=hdd", "vcsbench never throttles it"),
    ],
)
def test_a_bad_storage_option_is_one_line(spec: str, message: str) -> None:
    result = vcsbench("run", "--fs", spec, "--repos", "1")
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert message in line, line


def test_known_direct_writes_take_the_time_the_write_iops_limit_says(
    root: None, tmp_path: Path
) -> None:
    spec = parse_fs_spec(f"ext4:size=256M,write-iops={IOPS}")
    with Sandbox(spec, image_dir=tmp_path) as sandbox:
        assert sandbox.info is not None and sandbox.info.throttle is not None
        check = sandbox.info.throttle["measured"]["write_iops"]
        devno = device_number(f"/dev/{sandbox.info.device}")
        assert {"write_iops": IOPS} == rules_on(devno)
        backend = FakeBackend()
        run = BenchmarkRun(DirectWrites(backend), sandbox.info, sandbox.root / "b", RoundPlan(3))
        run.run_all()
        bench = run.finish(backend.describe())
    assert {} == rules_on(devno)  # removed with the sandbox
    # What the sandbox measured of its device, and what the rounds took: both follow.
    assert abs(check["measured"] - IOPS) <= 0.1 * IOPS, check
    assert [] == sandbox.info.throttle["problems"]
    assert bench.filesystem.throttle is not None
    assert {"write_iops": IOPS} == bench.filesystem.throttle.limits
    requests = bench.rounds.values["io_write_requests_device"]
    assert all(r is not None and K <= r <= K + 20 for r in requests), requests  # + the journal
    # No round beats the limit (but for the first slice the throttle lets through at
    # once); none takes much longer (IOs the harness made between rounds, the round's
    # start and end falling between the throttle's dispatches).
    expected_s = K / IOPS
    assert all(0.9 * expected_s <= s for s in bench.samples_s), bench.samples_s
    assert sorted(bench.samples_s)[1] <= 1.3 * expected_s, bench.samples_s


def throttled_device(state: Path, proc: subprocess.Popen[str], within_s: float = 60) -> str:
    """The device the run's state file names as throttled, once its rule is set (the
    run then goes on to its rounds): the moment to kill it."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline and proc.poll() is None:
        for state_file in state.glob("*.json"):
            try:
                devno = json.loads(state_file.read_text()).get("throttle_device")
            except ValueError:  # being written
                continue
            if devno and rules_on(devno):
                return str(devno)
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"no throttled device within {within_s} s: {proc.communicate()[0]}")


def test_a_killed_throttled_run_leaves_no_rule_after_cleanup(
    root: None, tmp_path: Path, isolated_state: Path
) -> None:
    argv = [*CLI, *run_args("5000"), "--progress", "lines"]
    proc = subprocess.Popen(
        [*argv, "--fs", "ext4:size=256M,write-iops=400", "--image-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    devno = throttled_device(isolated_state, proc)
    assert {"write_iops": 400} == rules_on(devno)
    proc.kill()
    proc.communicate()
    assert {"write_iops": 400} == rules_on(devno)  # a rule outlives its process
    result = vcsbench("cleanup")
    assert 0 == result.returncode, result.stderr
    assert {} == rules_on(devno)
    assert "" == vcsbench_mounts() and "" == vcsbench_loops()
    assert [] == list(isolated_state.glob("*.json"))


def test_a_rule_on_a_device_not_proven_the_runs_is_reported_and_left(
    root: None, tmp_path: Path, isolated_state: Path
) -> None:
    """A state file names a throttled loop device that now backs another file (someone
    else's): cleanup says so and leaves the rule, the device and the file."""
    other = tmp_path / "someone-elses.img"
    other.write_bytes(b"\0" * (1 << 20))
    device = subprocess.run(
        ["losetup", "--find", "--show", str(other)], capture_output=True, text=True, check=True
    ).stdout.strip()
    devno = device_number(device)
    try:
        set_rule(devno, "write_iops", 123)
        image = tmp_path / "vcsbench-ext4-1-x.img"
        image.write_bytes(b"\0" * 4096)
        (tmp_path / f"{image.name}.owner").write_text("0" * 32)  # the image proven: the
        st = os.lstat(image)  # device's backing is what is not
        state = {
            "format": 2,
            "token": "0" * 32,
            "pid": 999999,
            "starttime": "1",
            "boot_id": Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
            "kind": "ext4",
            "uid": os.geteuid(),
            "temp_root": str(tmp_path),
            "user_image_dir": str(tmp_path),
            "image": {"path": str(image), "dev": st.st_dev, "ino": st.st_ino},
            "loop_device": device,
            "throttle_device": devno,
            "throttle": {"write_iops": 123},
            "dirs": [],
            "processes": [],
            "steps": [],
        }
        (isolated_state / "claim.json").write_text(json.dumps(state))
        result = vcsbench("cleanup")
        assert f"throttle rules on {devno} (123 write IO/s)" in result.stderr
        assert "not backed by the image recorded" in result.stderr
        assert {"write_iops": 123} == rules_on(devno)
        assert other.exists()
    finally:
        set_rule(devno, "write_iops", 0)
        subprocess.run(["losetup", "-d", device], check=False)


def test_a_new_loop_device_that_carries_a_rule_is_refused_and_left(
    root: None, tmp_path: Path, isolated_state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stale rule follows the device number: the next sandbox on that number would be
    throttled without saying so. Such a rule (here one the kernel is said to hold: a real
    one on a free loop device's number could catch another run's sandbox) is refused in
    one line, before anything is throttled, and left."""
    monkeypatch.setattr(throttle, "rules_on", lambda devno: {"read_iops": 77})
    with (
        pytest.raises(VcsbenchError) as refused,
        Sandbox(parse_fs_spec("ext4:size=64M"), image_dir=tmp_path),
    ):
        pass
    assert "already carries block throttle rules this run did not set (77 read IO/s)" in str(
        refused.value
    )
    assert "" == vcsbench_mounts() and "" == vcsbench_loops()
    assert [] == list(isolated_state.glob("*.json"))


def test_no_rule_is_left_by_an_interrupted_set_up(
    root: None, tmp_path: Path, isolated_state: Path
) -> None:
    proc = subprocess.Popen(
        [*CLI, *run_args("5"), "--fs", "ext4:size=64M,profile=hdd",
         "--image-dir", str(tmp_path), "--out", str(tmp_path / "r.json")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    devno = None
    deadline = time.monotonic() + 60
    try:  # a state file is never seen half made: every read here parses
        while devno is None and time.monotonic() < deadline:  # the measuring has begun
            for path in isolated_state.glob("*.json"):
                with_rule = json.loads(path.read_text())
                if "throttled" in with_rule["steps"]:
                    devno = with_rule["throttle_device"]
            time.sleep(0.05)
    finally:
        if devno is None:
            proc.kill()
            proc.communicate(timeout=60)
    assert devno is not None
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert 128 + signal.SIGTERM == proc.returncode
    assert {} == rules_on(devno)
    assert "" == vcsbench_mounts() and "" == vcsbench_loops()


def throttled_copy(tmp_path: Path, measured: object) -> Path:
    from helpers import DATA

    document = json.loads((DATA / "tiny-ext4.json").read_text())
    for bench in document["benchmarks"]:
        benchmark_part(bench)["filesystem"]["throttle"] = {
            "profile": "hdd",
            "source": "a 7,200 rpm disk",
            "described": "80 write IO/s",
            "mechanism": "cgroup v1",
            "limits": {"write_iops": 80},
            "measured": {"write_iops": measured},
            "expected": {"write_iops": 80},
            "problems": ["61 write IO/s against 80 (-24 %): the machine cannot honour it"],
            "notes": [],
        }
    path = tmp_path / "throttled.json"
    path.write_text(json.dumps(document))
    return path


def test_a_report_says_the_profile_what_was_delivered_and_what_was_not(tmp_path: Path) -> None:
    result = vcsbench("report", str(throttled_copy(tmp_path, 61.0)))
    assert 0 == result.returncode, result.stderr
    assert (
        "ext4:size=256M: profile hdd: 80 write IO/s (a 7,200 rpm disk); the device delivered "
        "61 write IO/s; NOT HONOURED: 61 write IO/s against 80" in result.stdout
    )
    assert "warning**: ext4:size=256M: the storage profile was not honoured" in result.stdout


def test_a_measured_rate_that_is_not_a_number_is_one_line(tmp_path: Path) -> None:
    path = throttled_copy(tmp_path, "NaN")
    path.write_text(path.read_text().replace('"NaN"', "NaN"))
    result = vcsbench("report", str(path))
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert "throttle.measured" in line and "nan" in line.lower(), line


def test_a_history_is_replayed_off_the_throttled_device(root: None, tmp_path: Path) -> None:
    """On a throttled sandbox the seed (a replayed history) is built where the run keeps
    seeds, off the device, and copied in: said in the replay's figures, and the rounds on
    the copy verified."""
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("2", "svn-fs", "log", "history:synthetic:30",
                   fs="ext4:size=128M,write-iops=400", out=out),
        "--image-dir", str(tmp_path), "--progress", "none",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr + result.stdout
    (bench,) = [benchmark_part(b) for b in json.loads(out.read_text())["benchmarks"]]
    assert 0 == bench["errors"] and 2 == bench["verified"]
    assert {"commits": 30.0, "unthrottled": 1.0} == {
        k: v for k, v in bench["harness"]["replay"].items() if k in ("commits", "unthrottled")
    }


def test_an_image_claimed_by_name_and_inode_alone_is_reported_and_left(
    tmp_path: Path, isolated_state: Path
) -> None:
    """A planted claim names a vcsbench-named image by its right device and inode, in a
    directory the claim says is the user's: without the run's token beside it (the marker
    a run writes as it makes an image) cleanup leaves it, and says why; with a marker
    holding another token, too."""
    image = tmp_path / "vcsbench-ext4-1-x.img"
    image.write_bytes(b"\0" * 4096)
    st = os.lstat(image)
    state = {
        "format": 2, "token": "0" * 32, "pid": 999999, "starttime": "1",
        "boot_id": Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
        "kind": "ext4", "uid": os.geteuid(), "temp_root": str(tmp_path),
        "user_image_dir": str(tmp_path),
        "image": {"path": str(image), "dev": st.st_dev, "ino": st.st_ino},
        "dirs": [], "processes": [], "steps": [],
    }  # fmt: skip
    for marker in (None, "1" * 32):
        if marker is not None:
            (tmp_path / f"{image.name}.owner").write_text(marker)
        (isolated_state / "claim.json").write_text(json.dumps(state))
        result = vcsbench("cleanup")
        assert f"image {image} has no marker beside it with the run's token" in result.stderr
        assert image.exists()
    (tmp_path / f"{image.name}.owner").write_text("0" * 32)  # the claim's own token: proven
    (isolated_state / "claim.json").write_text(json.dumps(state))
    result = vcsbench("cleanup")
    assert not image.exists() and not (tmp_path / f"{image.name}.owner").exists()
