"""A seed -- a repository made once and written again at each round's place -- held in
memory when small, copied from its directory when large: the same copy either way, and
memory that does not grow with the repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vcsbench.workload.seeds import Seed, snapshot


def _tree(root: Path) -> dict[str, tuple[str, bytes, int]]:
    found: dict[str, tuple[str, bytes, int]] = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(directory, name)
            rel = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode & 0o7777
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path).encode(), 0)
            elif path.is_dir():
                found[rel] = ("dir", b"", mode)
            else:
                found[rel] = ("file", path.read_bytes(), mode)
    return found


def _repository_like(root: Path) -> None:
    (root / "objects" / "ab").mkdir(parents=True)
    for i in range(200):
        (root / "objects" / "ab" / f"{i:038x}").write_bytes(bytes([i]) * (i * 7))
    (root / "hooks").mkdir(mode=0o700)
    script = root / "hooks" / "run"
    script.write_bytes(b"#!/bin/sh\n")
    script.chmod(0o755)
    (root / "HEAD").symlink_to("objects/ab")


def test_a_seed_over_its_budget_is_copied_from_disk_as_the_one_held(tmp_path: Path) -> None:
    root = tmp_path / "seed"
    _repository_like(root)
    assert snapshot(root, budget=4096) is None  # 200 files: over 4 KiB of bookkeeping
    held = Seed.held(root)
    assert held.entries is not None and 205 == held.count  # 3 directories, 202 files
    lazy = Seed(None, root.stat().st_mode & 0o7777, root)
    assert 205 == lazy.count
    held.copy_to(tmp_path / "a" / "held")
    lazy.copy_to(tmp_path / "b" / "lazy")
    want = _tree(root)
    assert want == _tree(tmp_path / "a" / "held") == _tree(tmp_path / "b" / "lazy")
    assert 0o700 == want["hooks"][2] and 0o755 == want["hooks/run"][2]


def test_a_large_seeds_copy_keeps_memory_flat(tmp_path: Path) -> None:
    """64 MiB in 4,096 files, read as a seed and copied twice: the process's peak grows
    by far less than the seed (held in memory it would grow by all of it)."""
    root = tmp_path / "big"
    (root / "d").mkdir(parents=True)
    chunk = os.urandom(16 << 10)
    for i in range(4096):
        (root / "d" / f"{i:05d}").write_bytes(chunk)
    code = (  # VmHWM: this process's own peak (ru_maxrss keeps the parent's across exec)
        "import sys\n"
        "from pathlib import Path\n"
        "from vcsbench.workload.seeds import Seed\n"
        "def hwm():\n"
        "    status = open('/proc/self/status').read()\n"
        "    return int(status.split('VmHWM:')[1].split()[0])\n"
        "before = hwm()\n"
        "seed = Seed.read(Path(sys.argv[1]))\n"
        "for n in range(2): seed.copy_to(Path(sys.argv[2]) / str(n))\n"
        "print(seed.entries is None, hwm() - before)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(root), str(tmp_path / "copies")],
                          capture_output=True, text=True, check=True)  # fmt: skip
    lazy, grew = done.stdout.split()
    assert "True" == lazy
    assert int(grew) < 16 << 10, f"peak grew {grew} KiB copying a 64 MiB seed"
    assert _tree(root) == _tree(tmp_path / "copies" / "1")
