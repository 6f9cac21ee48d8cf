"""Who wrote to the device: tasks' charges between two snapshots, with known work (a
child that writes K bytes), the device's kernel threads told from others', and a load
step on a loop device whose writers and unattributed share add up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import on_a_disk, run_args, vcsbench

from vcsbench.measure.writers import Task, device_thread, snapshot, top_writers
from vcsbench.report.format import writers_text
from vcsbench.results.layout import benchmark_part
from vcsbench.results.writers import Writers

# Timing- or signal-bound: run in make test's serial pass, alone on the machine.
pytestmark = pytest.mark.serial

K = 4 << 20


def test_a_child_that_writes_k_bytes_is_charged_k_bytes(tmp_path: Path) -> None:
    with on_a_disk(tmp_path) as disk:
        charged_to_a_writer(disk)


def charged_to_a_writer(tmp_path: Path) -> None:
    before = snapshot()
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys\n"
            "fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY)\n"
            f"os.write(fd, b'x' * {K}); os.fsync(fd); os.close(fd)\n"
            "sys.stdin.read()",  # alive, so that the snapshot after reads it by itself
            str(tmp_path / "k"),
        ],
        stdin=subprocess.PIPE,
    )
    try:
        for _ in range(100):  # written and fsync'd: the charge is there before it returns
            if (tmp_path / "k").exists() and (tmp_path / "k").stat().st_size == K:
                break
            subprocess.run(["sleep", "0.05"], check=True)
        found = top_writers(before, snapshot(), 2 * K, top=1000)
    finally:
        child.communicate(b"")
    mine = [w for w in found["top"] if w["pid"] == child.pid]  # type: ignore[union-attr, index]
    # The file's K bytes, and a few metadata blocks besides that its fsync writes (seen: one
    # 4 KiB page alone; five beside the other test worker's writes to the same filesystem).
    (charged,) = [w["write_bytes"] for w in mine]
    assert K <= charged <= K + 65536, charged
    assert mine[0]["kernel_thread"] is False


def test_the_devices_kernel_threads_count_others_are_apart_and_the_rest_is_no_tasks() -> None:
    """Device loop3 (7:3) wrote 10 MiB. Its journal thread was charged 1 MiB and its
    flusher 1 MiB, a process 3 MiB; the loop device's own worker (writing the image
    file: the same IO seen from below) and another disk's flusher are apart. A pid
    reused within the interval is a new task: all it wrote counts."""
    mib = 1 << 20
    before = {
        (10, 1): Task("jbd2/loop3-8", True, 5 * mib),
        (11, 1): Task("kworker/u8:2-flush-7:3", True, 0),
        (12, 1): Task("kworker/u8:4-loop3", True, 0),
        (13, 1): Task("kworker/u8:5-flush-254:0", True, 0),
        (20, 1): Task("svnserve", False, 7 * mib),
    }
    after = {
        (10, 1): Task("jbd2/loop3-8", True, 6 * mib),
        (11, 1): Task("kworker/u8:2-flush-7:3", True, mib),
        (12, 1): Task("kworker/u8:4-loop3", True, 10 * mib),
        (13, 1): Task("kworker/u8:5-flush-254:0", True, 9 * mib),
        (20, 2): Task("svnserve", False, 3 * mib),  # pid 20 again, started later
    }
    found = top_writers(before, after, 10 * mib, "loop3", "7:3")
    assert [("svnserve", 3 * mib), ("jbd2/loop3-8", mib), ("kworker/u8:2-flush-7:3", mib)] == [
        (w["name"], w["write_bytes"])
        for w in found["top"]  # type: ignore[union-attr]
    ]
    assert 5 * mib == found["charged_bytes"]
    assert 19 * mib == found["other_kernel_bytes"]
    assert 0.5 == pytest.approx(found["unattributed_share"])
    assert device_thread("xfsaild/loop3", "loop3", "7:3")
    assert not device_thread("jbd2/loop30-8", "loop3", "7:3")  # another device
    assert not device_thread("kworker/u8:4-loop3", "loop3", "7:3")


def test_a_child_reaped_in_the_interval_hands_its_parent_only_what_it_wrote_in_it() -> None:
    """A shell (pid 30) had written 1 MiB; its child (31) had written 8 MiB before the
    interval and 2 MiB in it, then was reaped: the shell's counter grows by 10 MiB, of
    which 2 MiB were written in the interval. A child born and reaped inside it (3 MiB)
    is the shell's growth whole."""
    mib = 1 << 20
    before = {(30, 1): Task("bash", False, mib, 1), (31, 5): Task("pytest", False, 8 * mib, 30)}
    after = {(30, 1): Task("bash", False, (1 + 8 + 2 + 3) * mib, 1)}
    found = top_writers(before, after, 100 * mib)
    assert [("bash", 5 * mib)] == [
        (w["name"], w["write_bytes"])
        for w in found["top"]  # type: ignore[union-attr]
    ]


def test_a_loads_own_processes_are_apart_and_the_servers_are_ranked() -> None:
    """The run (100) started its engine (101), which ran a client program (102) and a local
    client (103, doing a local path's work: the server's); the run also started a server
    (200) with a child (201). Each wrote a known amount: the run's own are listed apart,
    the server's and the local client's ranked with the device's journal."""
    mib = 1 << 20
    before = {
        (100, 1): Task("vcsbench", False, 0, 1),
        (101, 1): Task("python3", False, 0, 100),
        (103, 1): Task("python3", False, 0, 101),
        (200, 1): Task("apache2", False, 0, 100),
        (10, 1): Task("jbd2/loop3-8", True, 0, 2),
    }
    after = {
        (100, 1): Task("vcsbench", False, 7 * mib, 1),
        (101, 1): Task("python3", False, 5 * mib, 100),
        (102, 1): Task("svn", False, 4 * mib, 101),
        (103, 1): Task("python3", False, 3 * mib, 101),
        (200, 1): Task("apache2", False, 2 * mib, 100),
        (201, 1): Task("apache2", False, 6 * mib, 200),
        (10, 1): Task("jbd2/loop3-8", True, 1 * mib, 2),
    }
    found = top_writers(before, after, 40 * mib, "loop3", "7:3", own_root=100, server={200, 103})
    ranked = [(w["name"], w["pid"], w["write_bytes"]) for w in found["top"]]  # type: ignore[union-attr]
    assert [
        ("apache2", 201, 6 * mib),
        ("python3", 103, 3 * mib),
        ("apache2", 200, 2 * mib),
        ("jbd2/loop3-8", 10, mib),
    ] == ranked
    apart = [(w["name"], w["pid"], w["write_bytes"]) for w in found["own"]]  # type: ignore[union-attr]
    assert [("vcsbench", 100, 7 * mib), ("python3", 101, 5 * mib), ("svn", 102, 4 * mib)] == apart
    assert 16 * mib == found["own_bytes"]
    assert 28 * mib == found["charged_bytes"]  # both: the share to no task is the rest
    assert 0.3 == pytest.approx(found["unattributed_share"])
    text = writers_text(Writers.from_json(found, "writers"))
    assert text.startswith("apache2 6.0 MiB, python3 3.0 MiB, apache2 2.0 MiB, 30% to no task")
    assert text.endswith("(apart, vcsbench's own processes: vcsbench 7.0 MiB, python3 5.0 MiB, "
                         "svn 4.0 MiB)")  # fmt: skip


def test_each_load_step_names_who_wrote_to_its_device(root: None, tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    result = vcsbench(
        "load", "--paths", "local:git-pygit2", "--students", "8", "--steps", "2",
        "--step-seconds", "2", "--fs", "ext4:size=256M,write-iops=4000", "--out", str(out),
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    (step,) = json.loads(out.read_text())["vcsbench_load"]["loads"][0]["steps"]
    found, device = step["writers"], step["device"]
    top = found["top"]
    assert top and top[0]["write_bytes"] > 0
    assert any(not w["kernel_thread"] for w in top)  # the clients, which commit
    charged = found["charged_bytes"]
    assert charged >= sum(w["write_bytes"] for w in top)
    assert found["unattributed_share"] == pytest.approx(
        max(0.0, 1 - charged / device["write_bytes"])
    )
    report = vcsbench("report", str(out))  # a throttled load's file reads as a run's does
    assert 0 == report.returncode, report.stderr
    assert "limits: 4,000 write IO/s; the device delivered" in report.stdout
    assert "Who wrote to the device, per step" in report.stdout
    # the profile's own count of what it limited, beside the device's requests
    ios, requests = device["throttle_write_ios"], device["write_requests"]
    assert ios > 0 and requests > 0
    assert f"limits counted {ios:,} write IOs for the device's {requests:,}" in report.stdout
    assert f"{found['unattributed_share']:.0%} to no task" in report.stdout


def test_each_benchmark_names_who_wrote_to_its_device(root: None, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("20", "git-pygit2,svn-fs", "commit"), "--fs", "ext4:size=128M",
        "--out", str(out),
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    benches = json.loads(out.read_text())["benchmarks"]
    for bench in benches:
        found = benchmark_part(bench)["writers"]
        device = benchmark_part(bench)["metrics"]["io_write_device"]["total"]
        # the rounds alone wrote this much to the device; the benchmark's writers were
        # charged with at least the part of it their processes wrote
        assert found["top"] and found["charged_bytes"] > 0 and device > 0
    report = vcsbench("report", str(out))
    assert "Who wrote to the device over each benchmark" in report.stdout
    for bench in benches:
        assert f"{bench['extra_info']['vcsbench']['backend']['variant']}: " in report.stdout


def test_another_tenants_writes_elsewhere_are_not_the_devices_writers() -> None:
    """A benchmark's process (100) and its worker (101) are ranked whatever they hold; a
    process that holds a file on the device (300) is ranked; another tenant's (400, 50
    MiB to its own disk, holding nothing on this one) is not, and its charge is said
    apart -- before, it headed the device's writers."""
    mib = 1 << 20
    before = {
        (100, 1): Task("pytest", False, 0, 1),
        (101, 1): Task("python3", False, 0, 100),
        (300, 1): Task("rsync", False, 0, 1),
        (400, 1): Task("postgres", False, 0, 1),
    }
    after = {
        (100, 1): Task("pytest", False, 3 * mib, 1),
        (101, 1): Task("python3", False, 4 * mib, 100),
        (300, 1): Task("rsync", False, 2 * mib, 1),
        (400, 1): Task("postgres", False, 50 * mib, 1),
    }
    found = top_writers(
        before, after, 20 * mib, "loop3", "7:3", server={100}, on_device=lambda pid: pid == 300
    )
    ranked = [(w["name"], w["write_bytes"]) for w in found["top"]]  # type: ignore[union-attr]
    assert ranked == [("python3", 4 * mib), ("pytest", 3 * mib), ("rsync", 2 * mib)]
    assert found["elsewhere_bytes"] == 50 * mib
    assert found["charged_bytes"] == 9 * mib


def test_a_process_holds_the_device_of_a_file_it_has_open(tmp_path: Path) -> None:
    """holds_device: a child with a file open on the disk holds its device; one whose
    working directory is a tmpfs and that has nothing open there does not."""
    from vcsbench.measure.writers import holds_device

    with on_a_disk(tmp_path) as disk:
        dev = os.stat(disk).st_dev
        holding = subprocess.Popen(
            [sys.executable, "-c", "import sys; f = open(sys.argv[1], 'w'); sys.stdin.read()",
             str(disk / "open")],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd="/dev/shm",
        )  # fmt: skip
        apart = subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.stdin.read()"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd="/dev/shm",  # nothing of its own on the disk: its output too goes nowhere
        )  # fmt: skip
        try:
            for _ in range(100):  # the file opened
                if (disk / "open").exists():
                    break
                subprocess.run(["sleep", "0.05"], check=True)
            assert holds_device(holding.pid, dev)
            assert not holds_device(apart.pid, dev)
        finally:
            holding.communicate(b"")
            apart.communicate(b"")
