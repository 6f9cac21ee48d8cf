"""Probes against known work, and the calibration command that checks the rig."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import vcsbench

from vcsbench.measure.probes import Probe, footprint, read_process


def du(args: str, path: Path) -> int:
    return int(
        subprocess.run(
            ["du", args, "-s", str(path)], capture_output=True, text=True, check=True
        ).stdout.split()[0]
    )


def test_footprint_equals_du_to_the_byte(tmp_path: Path) -> None:
    for i in range(30):
        sub = tmp_path / f"d{i % 4}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{i}").write_bytes(os.urandom(i * 1013))
    os.link(tmp_path / "d0" / "f4", tmp_path / "hard")
    result = footprint(tmp_path)
    assert du("-B1", tmp_path) == result.allocated_bytes
    assert du("-b", tmp_path) == result.apparent_bytes
    assert result.inodes == 35  # 30 files, 4 directories, the root; the link is no inode


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


def test_calibration_passes_in_every_sandbox_kind(root: None) -> None:
    result = vcsbench("doctor", "--calibrate")
    assert result.returncode == 0, result.stdout + result.stderr
    for kind in ("tmpfs", "ext4", "xfs", "btrfs"):
        lines = [line for line in result.stdout.splitlines() if f"] {kind} " in line]
        assert len(lines) == 7, lines
        assert all(line.startswith(("[PASS]", "[n/a ]")) for line in lines)
    assert "all checks passed" in result.stdout
