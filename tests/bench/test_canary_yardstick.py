"""The bare loop's canary (tools/barecalls.py) is vcsbench's, call for call.

The yardstick imports no vcsbench code, so its canary is a copy of
:class:`vcsbench.bench.canary.CanaryTimer`'s; the two had drifted apart once (the loop
fsync'd its first file while writing the others; git-pygit2's bare-loop ratio read
0.94-0.97x then, 0.97-0.98x once they were the same). Both are run here with their
filesystem calls recorded: the same calls, in the same order, with the same flags and
the same bytes.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO

from vcsbench.bench.canary import CanaryTimer


def _bareloop() -> Any:
    spec = importlib.util.spec_from_file_location("barecalls", REPO / "tools" / "barecalls.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _recorded(monkeypatch: pytest.MonkeyPatch, canary: Any, where: Path) -> list[tuple]:
    """The calls one canary makes: mkdir, open (file name, flags), write (its bytes),
    fsync, close -- its directory's own name left out (each names it its own way)."""
    calls: list[tuple] = []
    names: dict[int, str] = {}
    real_open, real_write, real_close, real_fsync = os.open, os.write, os.close, os.fsync
    real_mkdir = Path.mkdir

    def opened(path: Any, flags: int, *rest: Any) -> int:
        fd = real_open(path, flags, *rest)
        names[fd] = Path(path).name
        calls.append(("open", Path(path).name, flags, *rest))
        return fd

    def wrote(fd: int, data: bytes) -> int:
        calls.append(("write", names.get(fd), bytes(data)))
        return real_write(fd, data)

    def closed(fd: int) -> None:
        calls.append(("close", names.pop(fd, None)))
        real_close(fd)

    def synced(fd: int) -> None:
        calls.append(("fsync", names.get(fd)))
        real_fsync(fd)

    def made(self: Path, *args: Any, **kwargs: Any) -> None:
        calls.append(("mkdir", self.parent == where))
        real_mkdir(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(os, "open", opened)
        patch.setattr(os, "write", wrote)
        patch.setattr(os, "close", closed)
        patch.setattr(os, "fsync", synced)
        patch.setattr(Path, "mkdir", made)
        canary()
    return calls


def test_the_bare_loops_canary_makes_vcsbenchs_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bareloop = _bareloop()
    ours_root, loops_root = tmp_path / "ours", tmp_path / "loop"
    ours_root.mkdir()
    loops_root.mkdir()
    timer = CanaryTimer(ours_root, rounds=100)
    assert timer.time_once() is not None  # the first makes its root: compared, the next
    ours = _recorded(monkeypatch, timer.time_once, ours_root)
    loops = _recorded(monkeypatch, lambda: bareloop.canary_once(loops_root, 0), loops_root)
    assert timer.failed == 0
    assert ours == loops
    writes = [call for call in ours if call[0] == "write"]
    assert len(writes) == 10 and all(len(call[2]) == 4096 for call in writes)
    assert [call[0] for call in ours[-3:]] == ["open", "fsync", "close"]
    assert list(ours_root.iterdir()) == [] and list(loops_root.iterdir()) == []
