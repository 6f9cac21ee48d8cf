"""A baseline along another axis than the backend: a filesystem, or an operation's options.

"Is xfs better than ext4?" is one run over both (``--fs ext4,xfs``) and ``report --baseline
ext4``: per backend, operation and payload, each other filesystem's time, device bytes and
allocated bytes as a ratio to the baseline's, the time with its interval and verdict (by
block: the filesystems of one run alternate in blocks). "What do 100
revisions cost a commit?" is ``--ops 'commit,commit[history=100]'`` and ``--baseline
commit``: the same, per backend, payload and filesystem, for each other variant of the
operation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vcsbench.report.document import Block, paragraph, table
from vcsbench.report.ratios import BY_BLOCK, EXPLAINED, OVER_RUNS_EXPLAINED, over_runs, time_ratio
from vcsbench.results.model import Benchmark


def filesystems(benches: list[Benchmark]) -> list[str]:
    return list(dict.fromkeys(b.fs for b in benches))


def operations(benches: list[Benchmark]) -> list[str]:
    """The operations as run, options included (``commit``, ``commit[history=100]``)."""
    return list(dict.fromkeys(b.op for b in benches))


def _op_name(op: str) -> str:
    return op.split("[", 1)[0]


@dataclass(frozen=True)
class Axis:
    name: str
    """What the baseline is, as the table's column names it."""
    value: Callable[[Benchmark], str]
    """The benchmark's place on the axis."""
    key: Callable[[Benchmark], tuple[str, ...]]
    """What must be the same for two benchmarks to be set against each other."""
    key_columns: tuple[str, ...]
    same: str
    """The paragraph's words for what ``key`` holds equal."""


FS = Axis(
    "fs",
    lambda b: b.fs,
    lambda b: (b.label, b.op, b.payload.name),
    ("backend", "operation", "payload"),
    "per backend, operation and payload",
)
OP = Axis(
    "operation",
    lambda b: b.op,
    lambda b: (b.label, _op_name(b.op), b.payload.name, b.fs),
    ("backend", "operation", "payload", "fs"),
    "per backend, payload and filesystem",
)


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or base is None:
        return "—"
    if base == 0:
        return "—" if value else "1.00x"
    return f"{value / base:.2f}x"


def axis_baseline(
    benches: list[Benchmark],
    axis: Axis,
    base_value: str,
    runs: dict[str, str] | None = None,
    machines: dict[str, str] | None = None,
) -> list[Block]:
    """A row per benchmark off the baseline on ``axis`` whose key has a baseline benchmark:
    time, device bytes written and allocated bytes per repository against it. A benchmark
    is set against the baseline of its own run where there is one (else of another run of
    its machine, else of another machine). ``runs``: a label per result file where
    several hold the same benchmark; each row then says its run, and a pair interleaved in
    two runs or more of one machine gets a row over them, the run as the unit.
    ``machines``: a label per machine where the results come from several; each row says
    its machine, and no row over runs mixes two."""
    runs, machines = runs or {}, machines or {}
    base: dict[tuple[str, ...], Benchmark] = {}
    same_machine: dict[tuple[str, tuple[str, ...]], Benchmark] = {}
    own: dict[tuple[str, tuple[str, ...]], Benchmark] = {}
    for b in benches:
        if axis.value(b) == base_value:
            base[axis.key(b)] = b
            same_machine[(b.machine, axis.key(b))] = b
            own[(b.source, axis.key(b))] = b
    # A row per benchmark, grouped by what it is and where it ran (its machine).
    rows: dict[tuple[tuple[str, ...], str, str], list[list[str]]] = {}
    by_block: dict[tuple[tuple[str, ...], str, str], list[float]] = {}
    for bench in benches:
        other = (
            own.get((bench.source, axis.key(bench)))
            or same_machine.get((bench.machine, axis.key(bench)))
            or base.get(axis.key(bench))
        )
        if axis.value(bench) == base_value or other is None:
            continue
        group = (axis.key(bench), axis.value(bench), bench.machine)
        found = time_ratio(bench, other)
        if found is not None and found.how == BY_BLOCK:
            by_block.setdefault(group, []).append(found.value)
        time = f"{found.text(3)} {found.verdict()}" if found else "—"
        rows.setdefault(group, []).append(
            [
                *axis.key(bench),
                axis.value(bench),
                *([machines.get(bench.machine, "")] if machines else []),
                *([runs.get(bench.source, "")] if runs else []),
                time,
                _ratio(bench.per_repo("io_write_device"), other.per_repo("io_write_device")),
                _ratio(
                    bench.per_repo("footprint_allocated"), other.per_repo("footprint_allocated")
                ),
            ]
        )
    combined = False
    for (key, value, machine), ratios in by_block.items():
        found = over_runs(ratios) if runs else None  # (runs: the same benchmark in several)
        if found is not None:
            rows[(key, value, machine)].append(
                [
                    *key, value, *([machines.get(machine, "")] if machines else []),
                    f"over {len(ratios)} runs", f"{found.text(3)} {found.verdict()}", "—", "—",
                ]
            )  # fmt: skip
            combined = True
    if not rows:
        elsewhere = "on another filesystem" if axis is FS else "as another variant of its operation"
        on = "on" if axis is FS else "as"
        return [paragraph(f"No benchmark ran both {on} {base_value} and {elsewhere}.")]
    where = "operation as run" if axis is OP else axis.name
    header = [
        *axis.key_columns, where, *(["machine"] if machines else []),
        *(["run"] if runs else []), f"time vs {base_value}",
        f"device bytes vs {base_value}", f"allocated vs {base_value}",
    ]  # fmt: skip
    return [  # the figures first, then how they were obtained
        table(
            header,
            [r for group in rows.values() for r in group],
            len(axis.key_columns) + 1 + bool(machines) + bool(runs),
        ),
        paragraph(
            f"Each {axis.name} against {base_value}, {axis.same}: median time, with its "
            "interval and verdict, device bytes written and allocated bytes per repository. "
            f"Below 1: less than {base_value}. {EXPLAINED}"
            + (OVER_RUNS_EXPLAINED if combined else "")
        ),
    ]
