"""The system calls each operation made, by kind: a table beside a group's times, where
they were counted. A count is the same in every round where the work is (the kernel
counts each call); where it moved between rounds the cell gives its range, so a reader
sees at once which counts are exact and which are not."""

from __future__ import annotations

import statistics

from vcsbench.report.document import Block, Table, paragraph, table
from vcsbench.report.format import counted
from vcsbench.results.metrics import CALL_METRICS, METRICS
from vcsbench.results.model import Benchmark


def round_counts(bench: Benchmark, name: str) -> list[float]:
    """The counts of ``name`` in the benchmark's successful rounds."""
    values = bench.rounds.values.get(name) or []
    return [v for v, ok in zip(values, bench.rounds.ok, strict=False) if ok and v is not None]


def count_text(found: list[float]) -> str:
    """One count (the same in every round), or its range and median across rounds."""
    if not found:
        return "—"
    low, high = min(found), max(found)
    if low == high:
        return f"{low:,.0f}"
    return f"{low:,.0f}–{high:,.0f} (median {statistics.median(found):,.1f})"


def calls_blocks(rows: list[Benchmark]) -> list[Block]:
    """A paragraph and a table of the calls per operation of a group's benchmarks, or
    nothing where none was counted."""
    kinds = counted(rows, CALL_METRICS)
    if not kinds:
        return []
    body = [[b.label, *(count_text(round_counts(b, k)) for k in kinds)] for b in rows]
    found: Table = table(["backend", *(METRICS[k].label for k in kinds)], body, 1)
    return [
        paragraph(
            "System calls per operation, counted by the kernel (its syscall tracepoints, "
            "the operation's waited children included): one figure where every round made "
            "the same, else the range over the rounds."
        ),
        found,
    ]
