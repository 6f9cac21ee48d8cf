"""The footprint as a server keeps it.

A server does not keep repositories as they were written: git's are packed (``git gc``,
as ``git maintenance`` runs it), Subversion's full shards packed (``svnadmin pack``);
Mercurial's revlogs stay as written. After the last round, untimed, the chosen rounds'
repositories go through their VCS's own maintenance tool (whatever access path wrote
them), are verified again as their round was, and are scanned before and after: the
footprint as written and as kept are of the same repositories."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from vcsbench.backends import Backend
from vcsbench.bench.trouble import describe
from vcsbench.measure.footprint import Footprint, footprint
from vcsbench.workload.operation import Operation, RoundPaths

UNIT = "repositories kept"


@dataclass(frozen=True)
class AsKept:
    """The chosen repositories before and after their maintenance."""

    by: str
    repositories: int
    of: int
    written: Footprint
    kept: Footprint
    maintenance_s: float
    """Seconds of the maintenance, each repository's summed (several ran at once)."""

    def record(self) -> dict[str, Any]:
        """What the harness record keeps of it (the figures themselves are metrics)."""
        return {
            "by": self.by,
            "repositories": self.repositories,
            "of": self.of,
            "written_allocated_per_repo": self.written.allocated_bytes / self.repositories,
            "written_content_per_repo": self.written.content_bytes / self.repositories,
            "maintenance_s_per_repo": self.maintenance_s / self.repositories,
        }


def as_kept(
    operation: Operation,
    rounds: list[RoundPaths],
    of: int,
    progress: Callable[..., None] | None = None,
) -> AsKept | str:
    """``rounds``' repositories through their VCS's maintenance (of ``of`` that succeeded);
    the reason as one line where a step failed (the figure is then missing)."""
    backend = operation.backend
    by = backend.kept_by()
    tool = by.split(" (")[0]
    if not rounds:
        return "no round succeeded"
    measured = [p for paths in rounds for p in operation.measured(paths)]
    try:
        written = footprint(*measured)
    except OSError as exc:
        return f"the scan before maintenance failed: {describe(exc)}"
    if type(backend).keep is Backend.keep:  # kept as written: nothing to run or check
        return AsKept(by, len(rounds), of, written, written, 0.0)

    def keep(paths: RoundPaths) -> tuple[float, str]:
        """Seconds it took, and why it failed ("" where it did not)."""
        began = time.perf_counter()
        try:
            backend.keep(paths.repo)
        except Exception as exc:
            return 0.0, f"{tool} failed on {paths.repo.name}: {describe(exc)}"
        return time.perf_counter() - began, ""

    # The tools are processes of their own: as many at once as there are CPUs.
    spent, start, failed = 0.0, time.perf_counter(), ""
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        for done, (seconds, why) in enumerate(pool.map(keep, rounds), 1):
            spent, failed = spent + seconds, failed or why
            if progress is not None:
                progress(done, len(rounds), time.perf_counter() - start, unit=UNIT)
    if failed:
        return failed
    for paths, problems in zip(rounds, operation.verify_kept(rounds), strict=True):
        if problems:
            why = "; ".join(problems[:2])
            return f"after {tool}, {paths.repo.name} no longer verifies: {why}"
    try:
        kept = footprint(*measured)
    except OSError as exc:
        return f"the scan after maintenance failed: {describe(exc)}"
    return AsKept(by, len(rounds), of, written, kept, spent)
