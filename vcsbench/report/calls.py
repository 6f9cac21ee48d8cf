"""The system calls each operation made, by kind: a table beside a group's times, where
they were counted. A count is the same in every round where the work is (the kernel
counts each call); where it moved between rounds the cell gives its range, so a reader
sees at once which counts are exact and which are not."""

from __future__ import annotations

import statistics

from vcsbench.report.document import Block, Table, paragraph, table
from vcsbench.report.format import counted
from vcsbench.results.counted import COUNTED
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


def profile_blocks(rows: list[Benchmark]) -> list[Block]:
    """The cost profile of a group's benchmarks from their counted rounds: instructions
    and every kind of system call per operation, side by side; nothing where none was
    counted, and a line for each benchmark whose counts are missing, with why."""
    counted = [b for b in rows if b.counted is not None and b.counted.rounds]
    missing = [
        f"{b.label}: {next(iter(b.counted.missing.values()))}"
        for b in rows
        if b.counted is not None and not b.counted.rounds and b.counted.missing
    ]
    blocks: list[Block] = []
    if counted:
        names = [n for n in COUNTED if any(b.counted and b.counted.series(n) for b in counted)]
        body = []
        for b in counted:
            assert b.counted is not None
            body.append(
                [b.label, *(count_text([float(v) for v in b.counted.series(n)]) for n in names)]
            )
        rounds = sorted({b.counted.rounds for b in counted if b.counted is not None})
        seconds = sum(b.counted.seconds for b in counted if b.counted is not None)
        blocks += [
            paragraph(
                "Cost profile per operation, from counted rounds outside the timed ones "
                f"({' or '.join(map(str, rounds))} a benchmark, {seconds:,.0f} s in all): "
                "instructions in user space (valgrind's callgrind, the operation's children "
                "included) and system calls by kind (the kernel's tracepoints); one figure "
                "where every counted round made the same, else the range and median."
            ),
            table(["backend", *(COUNTED[n][0] for n in names)], body, 1),
        ]
        gaps = sorted(
            {
                f"{COUNTED[n][0]}: {why}"
                for b in counted
                if b.counted
                for n, why in b.counted.missing.items()
                if n in names or n == "instructions"
            }
        )
        if gaps:
            blocks.append(paragraph("Not counted: " + "; ".join(gaps[:3]) + "."))
    if missing:
        blocks.append(paragraph("No counted rounds: " + "; ".join(missing) + "."))
    return blocks


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
