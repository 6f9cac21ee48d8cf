"""Variants that ran interleaved (``--interleave``): each against a baseline, block by
block, with how the blocks agreed."""

from __future__ import annotations

from typing import Any

from vcsbench.report.document import Block, paragraph, table
from vcsbench.report.format import fmt_ms
from vcsbench.results.model import Benchmark
from vcsbench.results.paired import LEVEL, METHOD, paired


def _blocks(bench: Benchmark) -> dict[str, Any] | None:
    found = bench.harness.get("interleaved")
    if isinstance(found, dict) and isinstance(found.get("median_ms"), list):
        return found
    return None


def _groups(benches: list[Benchmark]) -> dict[tuple[str, str, str], list[Benchmark]]:
    """The interleaved groups: (op, payload, fs) -> its variants, in run order. Blocks
    pair only within the group that ran them (its order seed): the same benchmark from
    two runs is two groups, the later one's key naming the file it came from."""
    groups: dict[tuple[str, str, str], list[Benchmark]] = {}
    seeds: dict[tuple[str, str, str], object] = {}
    for bench in benches:
        blocks = _blocks(bench)
        if blocks is None:
            continue
        key = (bench.op, bench.payload.name, bench.fs)
        seed = (bench.source, blocks.get("order_seed"))
        if seeds.setdefault(key, seed) != seed:
            key = (bench.op, bench.payload.name, f"{bench.fs} ({bench.source})")
            seeds.setdefault(key, seed)
        groups.setdefault(key, []).append(bench)
    return groups


def _base(rows: list[Benchmark], baseline: str | None) -> Benchmark:
    return next((b for b in rows if b.label == baseline), rows[0])


def block_regressions(benches: list[Benchmark], baseline: str | None, limit: float) -> list[str]:
    """The gate on an interleaved run: each variant significantly slower than its group's
    baseline (the blocks as the unit: the interval of the block ratios above 1) by more
    than ``limit``."""
    found = []
    for (op, payload, fs), rows in _groups(benches).items():
        base = _base(rows, baseline)
        base_blocks = _blocks(base)
        assert base_blocks is not None
        for bench in rows:
            mine = _blocks(bench)
            if bench is base or mine is None:
                continue
            pair = paired(base_blocks["median_ms"], mine["median_ms"])
            if pair is not None and pair.significant and pair.ratio > 1 + limit:
                found.append(
                    f"{op} {payload} {fs}: {bench.label} time {pair.ratio:.3f}x "
                    f"[{pair.low:.3f}–{pair.high:.3f}] of {base.label}, by block, exceeds "
                    f"+{limit * 100:g}%"
                )
    return found


def interleaved(benches: list[Benchmark], baseline: str | None = None) -> list[Block]:
    """A table per interleaved group: every variant's median, its ratio to the baseline
    (``baseline`` where it is one of the group, else the group's first variant) as the
    median of the block ratios with its interval, the verdict, and the variant's median
    in each block."""
    out: list[Block] = []
    for (op, payload, fs), rows in _groups(benches).items():
        labels = [b.label for b in rows]
        base = _base(rows, baseline)
        base_blocks = _blocks(base)
        assert base_blocks is not None
        body = []
        for bench in rows:
            mine = _blocks(bench)
            assert mine is not None
            medians = mine["median_ms"]
            if bench is base:
                cell, verdict = "baseline", ""
            else:
                found = paired(base_blocks["median_ms"], medians)
                if found is None:
                    cell, verdict = "—", "fewer than 2 blocks with figures"
                else:
                    cell = f"{found.ratio:.3f}x [{found.low:.3f}–{found.high:.3f}]"
                    verdict = found.verdict()
            body.append(
                [
                    bench.label,
                    fmt_ms(bench.median_ms) if bench.median_ms is not None else "—",
                    cell,
                    verdict,
                    " ".join(fmt_ms(m) if m is not None else "—" for m in medians),
                ]
            )
        blocks = len(base_blocks["median_ms"])
        out += [
            paragraph(
                f"{op} · payload {payload} · fs {fs}: {len(labels)} variants in {blocks} "
                f"interleaved blocks, against {base.label}."
            ),
            table(
                ["variant", "median ms", f"vs {base.label}, by block", "verdict",
                 "median ms per block"],
                body,
                1,
                frozenset({"verdict", "median ms per block"}),
            ),
        ]  # fmt: skip
    if out:
        out.insert(0, paragraph(f"{METHOD} Interval: at least {100 * LEVEL:.0f}%."))
    return out
