"""Variants that ran interleaved (``--interleave``): each against a baseline, block by
block, with how the blocks agreed."""

from __future__ import annotations

from collections.abc import Iterator

from vcsbench.judge.paired import LEVEL, METHOD, Paired, paired
from vcsbench.report.document import Block, paragraph, table
from vcsbench.report.format import fmt_ms
from vcsbench.report.origins import named_release, release_of
from vcsbench.results.commands import op_shown
from vcsbench.results.harness import Interleaved
from vcsbench.results.model import Benchmark


def _blocks(bench: Benchmark) -> Interleaved | None:
    return bench.harness.interleaved


def _groups(benches: list[Benchmark]) -> dict[tuple[str, str, str], list[Benchmark]]:
    """The interleaved groups, in run order: (op, payload, where) -> its members. Blocks
    pair only within the group that ran them (one run, one order seed); ``where`` is
    the filesystem the group ran on, or the filesystems it alternated between, and the
    file it came from where the same group is in two."""
    found: dict[tuple[str, object], list[Benchmark]] = {}
    for bench in benches:
        blocks = _blocks(bench)
        if blocks is not None:
            found.setdefault((bench.source, blocks.order_seed), []).append(bench)
    groups: dict[tuple[str, str, str], list[Benchmark]] = {}
    for rows in found.values():
        first = rows[0]
        where = ", ".join(dict.fromkeys(b.fs for b in rows))
        # commands set against each other (vcsbench time A B): each named
        ops = " against ".join(dict.fromkeys(op_shown(b.op) for b in rows))
        labels = list(dict.fromkeys(b.label for b in rows))
        if _commands(rows) and len(labels) == 1:
            ops += f" on {labels[0]}"
        key = (ops, first.payload.name, where)
        if key in groups:
            key = (first.op, first.payload.name, f"{where} ({first.source})")
        groups[key] = rows
    return groups


def _commands(rows: list[Benchmark]) -> bool:
    """Whether the group's members differ by operation: commands set against each other
    (``vcsbench time A B``), each then named by its command."""
    return len({b.op for b in rows}) > 1


def _name(bench: Benchmark, rows: list[Benchmark]) -> str:
    """A member as its table names it: the variant, and its filesystem where the group
    alternated between several."""
    several = len({b.fs for b in rows}) > 1
    label = named_release(bench.label, release_of(rows)(bench))
    if _commands(rows):  # each by its command, and its backend where there are several
        label = op_shown(bench.op) + (f" on {label}" if len({b.label for b in rows}) > 1 else "")
    return f"{label} on {bench.fs}" if several else label


def _base(rows: list[Benchmark], baseline: str | None) -> Benchmark:
    """The group's member named as the baseline; else its fastest, as the headline's
    ratios are to the fastest: one direction of ratio in a report."""
    named = next((b for b in rows if baseline in (b.label, b.fs)), None)
    if named is not None:
        return named
    timed = [b for b in rows if b.median_ms is not None]
    return min(timed, key=lambda b: b.median_ms or 0.0) if timed else rows[0]


def _against(base: Benchmark, rows: list[Benchmark]) -> Iterator[tuple[Benchmark, Paired | None]]:
    """Each member of a group but ``base``, with its blocks against the base's (None with
    fewer than 2 blocks both have)."""
    base_blocks = _blocks(base)
    assert base_blocks is not None
    for bench in rows:
        mine = _blocks(bench)
        if bench is not base and mine is not None:
            yield bench, paired(base_blocks.median_ms, mine.median_ms)


def block_regressions(benches: list[Benchmark], baseline: str | None, limit: float) -> list[str]:
    """The gate on an interleaved run: each variant significantly slower than its group's
    baseline (the blocks as the unit: the interval of the block ratios above 1) by more
    than ``limit``."""
    found = []
    for (op, _, fs), rows in _groups(benches).items():
        # a gate's reference is the one named, else the group's first as the run listed
        # it: a fixed reference, never whichever happened to be fastest
        base = next((b for b in rows if baseline in (b.label, b.fs)), rows[0])
        for bench, pair in _against(base, rows):
            if pair is not None and pair.significant and pair.ratio > 1 + limit:
                found.append(
                    f"{op} {rows[0].payload.shown} {fs}: {_name(bench, rows)} "
                    f"time {pair.ratio:.3f}x "
                    f"[{pair.low:.3f}–{pair.high:.3f}] of {_name(base, rows)}, by block, exceeds "
                    f"+{limit * 100:g}%"
                )
    return found


def interleaved(benches: list[Benchmark], baseline: str | None = None) -> list[Block]:
    """A table per interleaved group: every variant's median, its ratio to the baseline
    (``baseline`` where it is one of the group, else the group's fastest) as the
    median of the block ratios with its interval, the verdict, and the variant's median
    in each block."""
    out: list[Block] = []
    for (op, _, fs), rows in _groups(benches).items():
        base = _base(rows, baseline)
        base_blocks = _blocks(base)
        assert base_blocks is not None
        body = []
        for bench in rows:
            mine = _blocks(bench)
            assert mine is not None
            medians = mine.median_ms
            if bench is base:
                cell, verdict = "baseline", ""
            else:
                found = paired(base_blocks.median_ms, medians)
                if found is None:
                    cell, verdict = "—", "fewer than 2 blocks with figures"
                else:
                    cell = f"{found.ratio:.3f}x [{found.low:.3f}–{found.high:.3f}]"
                    verdict = found.verdict()
            body.append(
                [
                    _name(bench, rows),
                    fmt_ms(bench.median_ms) if bench.median_ms is not None else "—",
                    cell,
                    verdict,
                    " ".join(fmt_ms(m) if m is not None else "—" for m in medians),
                ]
            )
        blocks = len(base_blocks.median_ms)
        kind = "commands" if _commands(rows) else "variants"
        out += [
            paragraph(
                f"{op} · payload {rows[0].payload.shown} · fs {fs}: {len(rows)} {kind} in "
                f"{blocks} interleaved blocks, against {_name(base, rows)}."
            ),
            table(
                [kind[:-1], "median ms", f"vs {_name(base, rows)}, by block", "verdict",
                 "median ms per block"],
                body,
                1,
                frozenset({"verdict", "median ms per block"}),
            ),
        ]  # fmt: skip
    if out:
        out.insert(0, paragraph(f"{METHOD} Interval: at least {100 * LEVEL:.0f}%."))
    return out


def answers(benches: list[Benchmark]) -> list[str]:
    """A sentence per member of an interleaved group against the group's fastest, its
    ratio by block read in words: the answer of ``vcsbench time A B``."""
    from vcsbench.report.ratios import Ratio

    out = []
    for (op, _, fs), rows in _groups(benches).items():
        base = _base(rows, None)
        # commands are named by themselves already: what is left to say is the backend
        labels = list(dict.fromkeys(b.label for b in rows))
        if not _commands(rows):
            where = f"{op}, "
        else:
            where = f"on {labels[0]}, " if len(labels) == 1 else ""
        for bench, found in _against(base, rows):
            if bench.median_ms is None:
                said = "no ratio: every round failed"
            elif found is None:
                said = "no ratio (fewer than 2 blocks with figures)"
            else:
                said = Ratio.by_block(found).in_words(3)
            out.append(f"{_name(bench, rows)} against {_name(base, rows)} ({where}{fs}): {said}.")
    return out
