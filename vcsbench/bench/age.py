"""Pre-aged sandboxes: N repositories of the backend under test before the first round.

"What does the next repository cost when a million exist?" needs the million first. One
repository is made by the backend's own ``create``; it is copied (:mod:`vcsbench.workload.seeds`)
to each of the N places the rounds' layout gives (the names the rounds would use, before
theirs), in several processes: a copy costs a few system calls per file, not a VCS call.
Untimed; the results record N, the method and how long the filling took.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from multiprocessing import get_context
from pathlib import Path

from vcsbench.backends import Backend
from vcsbench.errors import Refusal
from vcsbench.measure.footprint import footprint
from vcsbench.process import as_helper
from vcsbench.workload.operation import RoundPaths
from vcsbench.workload.seeds import Seed

CHUNK = 2000
"""Repositories per task handed to a filling process."""

Progress = Callable[..., None]
UNIT = "repositories filled in"


_SEED = Seed([], 0o755)


def _fill_chunk(task: tuple[Path, str, int, int]) -> int:
    workdir, layout, first, last = task
    for index in range(first, last):
        _SEED.copy_to(RoundPaths.of(workdir, index, layout).repo)
    return last - first


def _room(workdir: Path) -> str:
    st = os.statvfs(workdir)
    return f"{st.f_bavail * st.f_frsize:,} bytes and {st.f_favail:,} inodes free"


def check_room(seed: Path, workdir: Path, count: int, sandbox: str, layout: str = "flat") -> None:
    """Refuse in one line, before filling, an age the sandbox cannot hold: each copy takes
    the seed's inodes and allocated bytes (the hashed layout adds up to 256 + 65,536
    fan-out directories, counted at a block each)."""
    need = footprint(seed)
    st = os.statvfs(workdir)
    fanout = 0 if layout == "flat" else min(count, 256) + min(count, 256 * 256)
    inodes = need.inodes * count + fanout
    allocated = need.allocated_bytes * count + fanout * st.f_bsize
    short = (st.f_files and inodes > st.f_favail) or allocated > st.f_bavail * st.f_frsize
    if short:
        raise Refusal(
            f"--age {count:,} needs {inodes:,} inodes and {allocated:,} bytes in the sandbox "
            f"{sandbox}, which has {_room(workdir)}; give it more room with size=... "
            "(or mkfs=-N ... for inodes), or ask for a smaller --age"
        )


def fill(
    backend: Backend,
    workdir: Path,
    count: int,
    layout: str,
    progress: Progress | None = None,
    processes: int | None = None,
    sandbox: str = "",
) -> dict[str, object]:
    """Make ``count`` repositories at the layout's places for rounds 0 .. count-1."""
    global _SEED
    start = time.perf_counter()
    seed = workdir / "seeds" / "age"
    seed.parent.mkdir(parents=True, exist_ok=True)
    backend.create(seed)
    check_room(seed, workdir, count, sandbox, layout)
    _SEED = Seed.read(seed)
    workers = processes or os.cpu_count() or 1
    tasks = [(workdir, layout, i, min(i + CHUNK, count)) for i in range(0, count, CHUNK)]
    done = 0
    try:
        if workers > 1 and len(tasks) > 1:
            with get_context("fork").Pool(workers, initializer=as_helper) as pool:
                for made in pool.imap_unordered(_fill_chunk, tasks):
                    done += made
                    if progress is not None:
                        progress(done, count, time.perf_counter() - start, unit=UNIT)
        else:
            for task in tasks:
                done += _fill_chunk(task)
                if progress is not None:
                    progress(done, count, time.perf_counter() - start, unit=UNIT)
    except OSError as exc:
        raise Refusal(
            f"--age {count:,}: filling the sandbox {sandbox} failed after about {done:,} "
            f"repositories ({exc.strerror or exc}); it has {_room(workdir)}"
        ) from None
    moved = type(backend).moved is not Backend.moved
    if moved:  # a repository that holds its own path (git-markus) is told where it is
        for index in range(count):
            backend.moved(RoundPaths.of(workdir, index, layout).repo)
    return {
        "repos": count,
        "entries_per_repo": len(_SEED.entries) + 1,
        "fill_s": time.perf_counter() - start,
        "processes": workers if len(tasks) > 1 else 1,
        "method": "one repository made by the backend's create, its files written again at "
        "each place (mkdir/write, no VCS call)"
        + ("; each then told its new path (Backend.moved)" if moved else ""),
    }
