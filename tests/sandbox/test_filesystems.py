"""Sandboxes: spec parsing, lifecycle, teardown on signals and after SIGKILL, full disks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import run_args, vcsbench, vcsbench_loops, vcsbench_mounts

from vcsbench.errors import VcsbenchError
from vcsbench.sandbox import Sandbox, parse_fs_list, parse_fs_spec


def test_spec_with_options_containing_commas_is_read_whole() -> None:
    spec = parse_fs_spec("ext4:size=8G,mkfs=-N 2000000,mount=noatime,data=journal")
    assert (spec.kind, spec.size_bytes) == ("ext4", 8 << 30)
    assert spec.mkfs_args == ("-N", "2000000")
    assert spec.mount_options == "noatime,data=journal"


def test_spec_list_splits_only_where_a_kind_follows() -> None:
    specs = parse_fs_list("tmpfs:size=1G,ext4:mount=noatime,data=ordered,xfs")
    assert [s.text for s in specs] == ["tmpfs:size=1G", "ext4:mount=noatime,data=ordered", "xfs"]


def test_a_filesystem_named_twice_is_one_line() -> None:
    with pytest.raises(VcsbenchError, match="names tmpfs twice: its rows could not be told"):
        parse_fs_list("tmpfs,ext4,tmpfs")


def test_filesystems_alternate_in_blocks_with_both_sandboxes_up(root: None, tmp_path: Path) -> None:
    """--fs tmpfs,ext4: the two filesystems' benchmarks run in one group, in alternating
    blocks (block k of each before block k+1 of either), and the report sets ext4
    against tmpfs by block."""
    out = tmp_path / "r.json"
    result = vcsbench(
        *run_args("20", "git-pygit2", "create+commit"),
        "--fs", "tmpfs,ext4:size=256M", "--out", str(out), "--progress", "none",
    )  # fmt: skip
    assert 0 == result.returncode, result.stdout[-2000:] + result.stderr
    from vcsbench.results import read

    tmpfs, ext4 = read(out).benchmarks
    assert ("tmpfs", "ext4") == (tmpfs.filesystem.fstype, ext4.filesystem.fstype)
    blocks = [b.harness.interleaved for b in (tmpfs, ext4)]
    assert blocks[0] is not None and blocks[1] is not None
    assert blocks[0].order_seed == blocks[1].order_seed
    assert ("git-pygit2 on tmpfs", "git-pygit2 on ext4:size=256M") == blocks[0].variants
    # 20 rounds in the 6 blocks a verdict needs (3 or 4 rounds each)
    assert ((0, 4), (4, 7), (7, 10), (10, 14), (14, 17), (17, 20)) == blocks[0].rounds
    assert blocks[0].rounds == blocks[1].rounds
    spans = [
        [(b.rounds.t_start_s[i], b.rounds.t_start_s[j - 1]) for i, j in found.rounds]
        for b, found in zip((tmpfs, ext4), blocks, strict=True)
    ]
    for k in range(5):  # block k of each before block k+1 of either
        assert max(s[k][1] for s in spans) < min(s[k + 1][0] for s in spans)
    assert 20 == tmpfs.verified == ext4.verified
    report = vcsbench("report", str(out), "--baseline", "tmpfs")
    assert 0 == report.returncode, report.stderr
    row = next(
        x for x in report.stdout.splitlines() if x.startswith("| git-pygit2 ") and "ext4" in x
    )
    assert "x [" in row and any(
        w in row for w in ("slower", "faster", "no significant", "under 1%")
    )
    assert "git-pygit2 on ext4:size=256M" in report.stdout


def test_dir_spec_points_at_an_existing_directory(tmp_path: Path) -> None:
    assert tmp_path.resolve() == parse_fs_spec(f"dir:{tmp_path}").path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ntfs", "unknown filesystem kind 'ntfs'"),
        ("ext4:size=lots", "size 'lots' is not a size like 512M or 8G"),
        ("ext4:speed=9", "unknown option 'speed=9' for ext4; accepted: size=..., mkfs=..."),
        ("tmpfs:mkfs=-N 5", "unknown option 'mkfs=-N 5' for tmpfs"),
        ("xfs:size=1G,size=2G", "size is given twice"),
        ("btrfs:", "nothing after ':'"),
        ("dir:", "dir needs a path"),
        ("dir:/no/such/place", "/no/such/place is not an existing directory"),
        ("ext4:mkfs='unclosed", "mkfs options cannot be split"),
    ],
)
def test_malformed_spec_is_one_line_naming_the_bad_value(text: str, message: str) -> None:
    with pytest.raises(VcsbenchError) as caught:
        parse_fs_spec(text)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("xfs:mkfs=-l logdev=/tmp/victim", "mkfs option -l 'logdev=/tmp/victim' names a device"),
        ("xfs:mkfs=-l logdev=victim", "names a device or file (logdev=victim)"),
        ("ext4:mkfs=/dev/vdb", "'/dev/vdb' is an argument"),
        ("ext4:mkfs=-F victim.img", "'victim.img' is an argument"),
        ("ext4:mkfs=-J device=/dev/vdb", "mkfs option -J 'device=/dev/vdb' names a device"),
        ("ext4:mkfs=-d /etc", "mkfs option -d is not one vcsbench passes on"),
        ("ext4:mkfs=-qdtree", "mkfs option -d is not one vcsbench passes on"),
        ("ext4:mkfs=-z undo", "mkfs option -z is not one vcsbench passes on"),
        ("xfs:mkfs=-p proto", "mkfs option -p is not one vcsbench passes on"),
        ("btrfs:mkfs=--rootdir=/etc", "mkfs option --rootdir is not one vcsbench passes on"),
        ("btrfs:mkfs=-f /dev/vdb", "'/dev/vdb' is an argument"),
        ("ext4:mkfs=-N", "mkfs option -N needs a value"),
        ("ext4:mount=ro", "mount option 'ro': a sandbox is written to"),
        ("ext4:mount=noatime,bind", "mount option 'bind'"),
        ("xfs:mount=logdev=/dev/vdb", "mount option 'logdev=/dev/vdb' names a device or file"),
        ("ext4:mount=X-mount.mkdir", "is an instruction to mount(8) itself"),
    ],
)
def test_mkfs_and_mount_take_options_alone(text: str, message: str) -> None:
    """mkfs= and mount= pass options to programs run as root: never a device, a file or
    a directory for them to read or write, and never a mount that is not the sandbox's
    own image, read-write."""
    with pytest.raises(VcsbenchError) as caught:
        parse_fs_spec(text)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "mkfs", "mount"),
    [
        ("ext4:mkfs=-N 2000000 -O ^has_journal -E lazy_itable_init=0,nodiscard", 6, ""),
        ("ext4:mkfs=-Fq -N2000000,mount=noatime,data=journal", 2, "noatime,data=journal"),
        ("xfs:mkfs=-f -l size=64m -d agcount=4", 5, ""),
        ("btrfs:mkfs=-f --nodesize=16384 -m single", 4, ""),
    ],
)
def test_mkfs_and_mount_options_pass_as_given(text: str, mkfs: int, mount: str) -> None:
    spec = parse_fs_spec(text)
    assert mkfs == len(spec.mkfs_args)
    assert mount == spec.mount_options


@pytest.mark.parametrize("directory", ["/", "/etc", "/usr", "/proc"])
def test_an_image_dir_that_dir_refuses_is_refused(directory: str) -> None:
    result = vcsbench(*run_args("1"), "--image-dir", directory, "--fs", "ext4")
    assert 2 == result.returncode, result.stdout[-500:]
    (line,) = result.stderr.strip().splitlines()
    assert f"--image-dir '{directory}'" in line
    assert "give a directory of your own" in line


def test_dir_sandbox_removes_only_its_own_subdirectory(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with Sandbox(parse_fs_spec(f"dir:{tmp_path}")) as sandbox:
        assert sandbox.root.parent == tmp_path.resolve()
        (sandbox.root / "repo").mkdir()
        assert sandbox.info is not None and sandbox.info.fstype
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_managed_sandbox_without_root_names_dir_as_the_way_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(VcsbenchError) as caught, Sandbox(parse_fs_spec("tmpfs")):
        pass
    assert "a tmpfs sandbox needs root (mount, losetup)" in str(caught.value)
    assert "use dir:PATH" in str(caught.value)
    assert "" == vcsbench_mounts()


@pytest.mark.parametrize("kind", ["tmpfs", "ext4", "xfs", "btrfs"])
@pytest.mark.serial
def test_managed_sandbox_is_made_used_and_leaves_nothing(
    root: None, kind: str, tmp_path: Path
) -> None:
    spec = parse_fs_spec(kind if kind == "tmpfs" else f"{kind}:size=512M")
    with Sandbox(spec, image_dir=tmp_path) as sandbox:
        info = sandbox.info
        assert info is not None and kind == info.fstype
        (sandbox.root / "file").write_bytes(b"x" * 4096)
        assert sandbox.root.as_posix() in vcsbench_mounts()
        if kind != "tmpfs":
            assert info.device_stat_path and Path(info.device_stat_path).exists()
            assert info.image_path and Path(info.image_path).exists()
    assert vcsbench_mounts() == ""
    assert vcsbench_loops() == ""
    assert list(tmp_path.iterdir()) == []
    assert not sandbox.root.exists()


RUNNER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from vcsbench.backends import make_backend
    from vcsbench.sandbox import Sandbox, parse_fs_spec
    backend = make_backend("svn-fs")
    with Sandbox(parse_fs_spec(sys.argv[1]), Path(sys.argv[2])) as sandbox:
        i = 0
        while True:
            backend.create(sandbox.root / f"r{i}")
            i += 1
            if i == 20:
                print("ready", sandbox.root, flush=True)
""")


Runner = Callable[[str, Path], tuple[subprocess.Popen[str], str]]


@pytest.fixture
def start_runner() -> Iterator[Runner]:
    """Starts a process that loops creating repositories in a sandbox; ends it after."""
    started: list[subprocess.Popen[str]] = []

    def start(spec: str, image_dir: Path) -> tuple[subprocess.Popen[str], str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", RUNNER, spec, str(image_dir)], stdout=subprocess.PIPE, text=True
        )
        started.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("ready"), line
        return proc, line.split()[1]

    yield start
    for proc in started:
        if proc.poll() is None:
            stop(proc, signal.SIGTERM)


def stop(proc: subprocess.Popen[str], signum: int) -> None:
    proc.send_signal(signum)
    proc.wait(timeout=60)
    assert proc.stdout is not None
    proc.stdout.close()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("spec", ["tmpfs", "ext4:size=256M"])
def test_signal_mid_run_leaves_nothing_mounted_and_no_image(
    root: None, start_runner: Runner, spec: str, signum: int, tmp_path: Path
) -> None:
    proc, mountpoint = start_runner(spec, tmp_path)
    assert mountpoint in vcsbench_mounts()
    stop(proc, signum)
    assert vcsbench_mounts() == ""
    assert vcsbench_loops() == ""
    assert list(tmp_path.iterdir()) == []
    assert not Path(mountpoint).exists()


@pytest.mark.serial
def test_sigkilled_runs_leftovers_are_cleaned_by_the_next_run(
    root: None, start_runner: Runner, tmp_path: Path, isolated_state: Path
) -> None:
    proc, mountpoint = start_runner("ext4:size=256M", tmp_path)
    stop(proc, signal.SIGKILL)
    assert mountpoint in vcsbench_mounts()
    assert len(list(isolated_state.glob("*.json"))) == 1
    result = vcsbench("cleanup")
    assert result.returncode == 0
    assert f"removed {mountpoint}" in result.stdout
    assert vcsbench_mounts() == ""
    assert vcsbench_loops() == ""
    assert list(tmp_path.iterdir()) == []
    assert list(isolated_state.iterdir()) == []


@pytest.mark.serial
def test_next_sandbox_cleans_a_killed_runs_tmpfs(
    root: None, start_runner: Runner, tmp_path: Path
) -> None:
    proc, mountpoint = start_runner("tmpfs", tmp_path)
    stop(proc, signal.SIGKILL)
    with Sandbox(parse_fs_spec("tmpfs")) as sandbox:
        assert mountpoint not in vcsbench_mounts()
        assert sandbox.root.as_posix() in vcsbench_mounts()
    assert vcsbench_mounts() == ""


@pytest.mark.serial
def test_cleanup_leaves_a_live_runs_sandbox_alone(
    root: None, start_runner: Runner, tmp_path: Path
) -> None:
    proc, mountpoint = start_runner("tmpfs", tmp_path)
    try:
        vcsbench("cleanup")
        assert mountpoint in vcsbench_mounts()
    finally:
        stop(proc, signal.SIGTERM)
    assert vcsbench_mounts() == ""


def test_full_tiny_image_gives_a_clear_error_and_is_torn_down(root: None, tmp_path: Path) -> None:
    result = vcsbench(
        *run_args("200", "svn-fs"),
        "--fs",
        "ext4:size=4M",
        "--image-dir",
        str(tmp_path),
        "--out",
        str(tmp_path / "out" / "full.json"),
    )
    assert result.returncode != 0
    # 1,024 inodes in a 4 MiB ext4; an svn repository takes about 40.
    assert "operations failed (the sandbox ext4:size=4M ran out of inodes at round" in result.stdout
    assert "give it more inodes with mkfs=-N" in result.stdout
    assert vcsbench_mounts() == ""
    assert vcsbench_loops() == ""
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_failed_teardown_step_keeps_the_state_and_says_which_step(
    root: None,
    isolated_state: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from vcsbench.sandbox import cleanup as state_module
    from vcsbench.sandbox.state import load_state

    real_step = state_module._step

    def busy(argv: list[str]) -> str | None:
        if argv[0] == "umount":
            return f"{' '.join(argv)}: target is busy"
        return real_step(argv)

    sandbox = Sandbox(parse_fs_spec("tmpfs"))
    sandbox.__enter__()
    mountpoint = sandbox.root.as_posix()
    monkeypatch.setattr(state_module, "_step", busy)
    failures = sandbox.close()
    assert failures and failures[0].startswith(f"unmount umount {mountpoint}: target is busy")
    (state_file,) = isolated_state.glob("*.json")
    line = capsys.readouterr().err.strip()
    assert 1 == len(line.splitlines())
    assert "teardown of tmpfs sandbox failed: unmount" in line and str(state_file) in line
    assert mountpoint in vcsbench_mounts()
    monkeypatch.setattr(state_module, "_step", real_step)
    assert [] == state_module.teardown(load_state(state_file))
    assert "" == vcsbench_mounts()
