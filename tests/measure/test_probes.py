"""Probes against known work, and the calibration command that checks the rig."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import vcsbench

from vcsbench.measure import calibrate
from vcsbench.measure.footprint import footprint
from vcsbench.measure.probes import Probe, read_process


def du(args: str, path: Path) -> int:
    return int(
        subprocess.run(
            ["du", args, "-s", str(path)], capture_output=True, text=True, check=True
        ).stdout.split()[0]
    )


@pytest.mark.parametrize("processes", [1, 3])
def test_footprint_equals_du_to_the_byte(processes: int, tmp_path: Path) -> None:
    for i in range(30):
        sub = tmp_path / f"d{i % 4}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{i}").write_bytes(os.urandom(i * 1013))
    # Links to one file from several top-level entries, so from several walkers.
    os.link(tmp_path / "d0" / "f4", tmp_path / "hard")
    os.link(tmp_path / "d0" / "f4", tmp_path / "d1" / "hard")
    result = footprint(tmp_path, processes=processes)
    assert du("-B1", tmp_path) == result.allocated_bytes
    assert du("-b", tmp_path) == result.apparent_bytes
    assert result.inodes == 35  # 30 files, 4 directories, the root; the link is no inode


@pytest.mark.parametrize("where", ["a forked walker", "this process"])
def test_a_walker_that_fails_fails_the_footprint(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b", "c", "d"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f").write_bytes(b"x")
    real = os.scandir
    parent = os.getpid()

    def scandir(path: str) -> object:
        forked = os.getpid() != parent
        if str(path) != str(tmp_path) and forked == (where == "a forked walker"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(OSError, match=rf"Permission denied: '?{tmp_path}/[a-d]"):
        footprint(tmp_path, processes=2)
    monkeypatch.undo()
    assert footprint(tmp_path, processes=2).inodes == 9  # the root, 4 directories, 4 files


def test_waited_child_writes_count_in_syscall_bytes(tmp_path: Path) -> None:
    before = read_process()
    subprocess.run(
        [sys.executable, "-c", f"open({str(tmp_path / 'x')!r}, 'wb').write(b'x' * 1000000)"],
        check=True,
    )
    assert (read_process() - before).wchar >= 1_000_000


def test_probe_delta_attributes_a_write_to_the_region(tmp_path: Path) -> None:
    probe = Probe(tmp_path, None)
    before = probe.before()
    (tmp_path / "f").write_bytes(b"y" * 65536)
    delta = Probe.delta(before, probe.after(), 0)
    assert delta.process.wchar >= 65536
    assert delta.device is None


@pytest.mark.serial
def test_calibration_passes_in_every_sandbox_kind(root: None) -> None:
    result = vcsbench("doctor", "--calibrate")
    assert result.returncode == 0, result.stdout + result.stderr
    for kind in ("tmpfs", "ext4", "xfs", "btrfs"):
        lines = [line for line in result.stdout.splitlines() if f"] {kind} " in line]
        # The first sandbox also measures the harness against a bare loop, per backend:
        # a timing of the machine as it is, which may warn but never fails the rig.
        assert len(lines) == (9 if kind == "tmpfs" else 7), lines
        assert all(line.startswith(("[PASS]", "[n/a ]", "[WARN]")) for line in lines)
    assert "all checks passed" in result.stdout


def test_footprint_splits_file_content_from_directory_bytes(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_bytes(b"x" * 1000)
    (tmp_path / "g").write_bytes(b"y" * 24)
    os.symlink("a/f", tmp_path / "link")
    result = footprint(tmp_path)
    dirs = os.lstat(tmp_path).st_size + os.lstat(tmp_path / "a").st_size
    assert 1000 + 24 + len("a/f") == result.content_bytes
    assert dirs == result.dir_bytes
    assert du("-b", tmp_path) == result.apparent_bytes
    assert 5 == result.inodes


def test_footprint_of_a_container_can_leave_the_container_out(tmp_path: Path) -> None:
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "f").write_bytes(b"z" * 10)
    assert 2 == footprint(tmp_path, roots=False).inodes
    assert 3 == footprint(tmp_path).inodes


@pytest.mark.serial
def test_the_probes_own_read_of_proc_is_not_charged_to_the_region(tmp_path: Path) -> None:
    probe = Probe(tmp_path, None, sync=False)
    before = probe.before()
    delta = Probe.delta(before, probe.after(), 0)
    assert (0, 0) == (delta.process.rchar, delta.process.wchar)


@pytest.mark.parametrize(
    ("check", "args"),
    [
        (calibrate.check_syscall_bytes, ("ext4", 16 << 20, (16 << 20) + 300_000)),
        (calibrate.check_logical_write, ("ext4", 16 << 20, 0)),
        (calibrate.check_device_write, ("ext4", "loop0", 16 << 20, 4096, 3)),
        (calibrate.check_device_write, ("ext4", "loop0", 16 << 20, 64 << 20, 300)),
        (calibrate.check_waited_child, ("ext4", 4 << 20, 0, "write_bytes")),
        (calibrate.check_footprint_allocated, ("ext4", 4096, 8192)),
        (calibrate.check_footprint_apparent, ("ext4", 100, 101, 3)),
        (calibrate.check_probe_overhead, ("ext4", 50_000, 9_000_000)),
        (calibrate.check_timer, ("clock_gettime", 1e-9, [5_000] * 100)),
    ],
)
def test_every_calibration_check_can_fail(check: Any, args: tuple[Any, ...]) -> None:
    result = check(*args)
    assert False is result.ok
    assert result.line().startswith("[FAIL]")


def test_calibration_checks_pass_on_what_the_rig_should_see() -> None:
    assert calibrate.check_probe_overhead("ext4", 76_000, 374_000).ok
    assert calibrate.check_device_write("ext4", "loop0", 16 << 20, 16838656, 23).ok
    assert calibrate.check_timer("clock_gettime", 1e-9, [40, 50, 60]).ok
