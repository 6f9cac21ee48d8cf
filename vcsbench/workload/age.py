"""Pre-aged sandboxes: N repositories of the backend under test before the first round.

"What does the next repository cost when a million exist?" needs the million first. One
repository is made by the backend's own ``create``; it is copied (:mod:`vcsbench.workload.seeds`)
to each of the N places the rounds' layout gives (the names the rounds would use, before
theirs), in several processes: a copy costs a few system calls per file, not a VCS call.
Untimed; the results record N, the method and how long the filling took. A population
(:mod:`vcsbench.workload.population`) is filled the same way from one repository per history
length.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

from vcsbench.backends import Backend
from vcsbench.errors import Refusal
from vcsbench.measure.footprint import footprint
from vcsbench.measure.probes import syncfs
from vcsbench.process import as_helper
from vcsbench.workload.operation import RoundPaths
from vcsbench.workload.population import Population, describe, grow
from vcsbench.workload.seeds import Seed

CHUNK = 2000
"""Repositories per task handed to a filling process."""

Progress = Callable[..., None]
UNIT = "repositories filled in"


_SEEDS: dict[int, Seed] = {}
"""What each repository is a copy of, by its history length (0: ``--age N``'s one)."""
_LENGTHS: list[int] = []
"""Each repository's history length (a population's); empty: every one is ``_SEEDS[0]``."""


def _fill_chunk(task: tuple[Path, str, int, int]) -> int:
    workdir, layout, first, last = task
    for index in range(first, last):
        seed = _SEEDS[_LENGTHS[index] if _LENGTHS else 0]
        seed.copy_to(RoundPaths.of(workdir, index, layout).repo)
    return last - first


def _room(workdir: Path) -> str:
    st = os.statvfs(workdir)
    return f"{st.f_bavail * st.f_frsize:,} bytes and {st.f_favail:,} inodes free"


def check_room(seed: Path, workdir: Path, count: int, sandbox: str, layout: str = "flat") -> None:
    """Refuse in one line, before filling, an age the sandbox cannot hold: each copy takes
    the seed's inodes and allocated bytes (the hashed layout adds up to 256 + 65,536
    fan-out directories, counted at a block each)."""
    need = footprint(seed)
    _check_need(need.inodes * count, need.allocated_bytes * count, workdir, f"{count:,}", count,
                sandbox, layout)  # fmt: skip


def _check_need(
    inodes: int, allocated: int, workdir: Path, what: str, count: int, sandbox: str, layout: str
) -> None:
    st = os.statvfs(workdir)
    fanout = 0 if layout == "flat" else min(count, 256) + min(count, 256 * 256)
    inodes += fanout
    allocated += fanout * st.f_bsize
    short = (st.f_files and inodes > st.f_favail) or allocated > st.f_bavail * st.f_frsize
    if short:
        raise Refusal(
            f"--age {what} needs {inodes:,} inodes and {allocated:,} bytes in the sandbox "
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
    population: Population | None = None,
    kept: bool = False,
) -> dict[str, object]:
    """Make ``count`` repositories at the layout's places for rounds 0 .. count-1: alike
    (as the backend's ``create`` makes one), or a ``population`` of ``count`` (``kept``:
    each history as a server keeps it, through the backend's own maintenance)."""
    global _SEEDS, _LENGTHS
    start = time.perf_counter()
    seed = workdir / "seeds" / "age"
    seed.parent.mkdir(parents=True, exist_ok=True)
    about: dict[str, object] = {}
    if population is None:
        backend.create(seed)
        check_room(seed, workdir, count, sandbox, layout)
        _SEEDS, _LENGTHS = {0: Seed.read(seed)}, []
    else:
        scratch = workdir / "seeds" / "population-scratch"
        scratch.mkdir(parents=True, exist_ok=True)
        grown = grow(backend, seed.parent, scratch, population, kept=kept)
        _LENGTHS = population.commits()
        inodes = sum(grown.inodes[c] for c in _LENGTHS)
        allocated = sum(grown.allocated[c] for c in _LENGTHS)
        _check_need(inodes, allocated, workdir, population.text, count, sandbox, layout)
        _SEEDS = grown.seeds
        about = {"population": describe(population, _LENGTHS, grown)}
        if kept:
            about["kept_by"] = backend.kept_by()
    workers = processes or os.cpu_count() or 1
    tasks = [(workdir, layout, i, min(i + CHUNK, count)) for i in range(0, count, CHUNK)]
    done = 0
    try:
        if workers > 1 and len(tasks) > 1:
            # An executor, not a multiprocessing.Pool: a Pool's terminate after a failed
            # chunk could wait forever on its task thread (seen in a test run); shutdown
            # here cancels the chunks not started and waits for the running ones.
            pool = ProcessPoolExecutor(
                workers, mp_context=get_context("fork"), initializer=as_helper
            )
            try:
                for made in as_completed([pool.submit(_fill_chunk, task) for task in tasks]):
                    done += made.result()
                    if progress is not None:
                        progress(done, count, time.perf_counter() - start, unit=UNIT)
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
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
    if moved:  # one that holds its path (git-markus) or identity (svn's UUID) is told
        for index in range(count):
            backend.moved(RoundPaths.of(workdir, index, layout).repo)
    filled = time.perf_counter()
    syncfs(workdir)  # the filling's writeback done here, not in the first round's set-up
    entries = sorted(s.count + 1 for s in _SEEDS.values())
    how = (
        "one repository made by the backend's create, its files written again at each place"
        if population is None
        else "one repository built commit by commit through the backend and read at each "
        "history length; each repository of the population written as the one of its length"
    )
    _SEEDS, _LENGTHS = {}, []
    return {
        "repos": count,
        "entries_per_repo": entries[0] if len(entries) == 1 else [entries[0], entries[-1]],
        "fill_s": filled - start,
        "sync_s": time.perf_counter() - filled,
        "processes": workers if len(tasks) > 1 else 1,
        "method": how
        + " (mkdir/write, no VCS call)"
        + ("; each then made a repository of its own there (Backend.moved)" if moved else ""),
        **about,
    }
