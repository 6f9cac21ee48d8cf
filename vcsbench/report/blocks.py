"""Cost as repositories accumulate: a benchmark's rounds in blocks of consecutive rounds.

Round ``i`` of a benchmark ran with ``age + i`` repositories already present in its
sandbox (``age``: those the sandbox was filled with before the first round). A block is
``size`` consecutive rounds; for each, the latency percentiles of its successful rounds,
the device bytes written and the space the filesystem gave them. The growth is the last
full block's median over the first's; the slope a least-squares line through every
successful round's latency against the repositories present.
"""

from __future__ import annotations

from dataclasses import dataclass

from vcsbench.results.model import Benchmark
from vcsbench.results.stats import quantile

DEFAULT_BLOCK = 1000


@dataclass(frozen=True)
class Block:
    present: int
    """Repositories in the sandbox before the block's first round."""
    rounds: int
    ok: int
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    device_written: float | None
    """Bytes the device wrote in the block's successful rounds, per round."""
    fs_used: float | None
    """Bytes of the filesystem the block's successful rounds used, per round (statvfs)."""


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def blocks(bench: Benchmark, size: int = DEFAULT_BLOCK) -> list[Block]:
    """The benchmark's rounds in blocks of ``size`` (the last may be shorter)."""
    if size < 1:
        raise ValueError(f"block size {size} is not >= 1")
    rounds = bench.rounds
    device = rounds.values.get("io_write_device", [])
    used = rounds.values.get("fs_used_delta", [])
    out = []
    for start in range(0, len(rounds), size):
        end = min(start + size, len(rounds))
        ok = [i for i in range(start, end) if rounds.ok[i]]
        walls = sorted(rounds.wall_ns[i] / 1e6 for i in ok)
        out.append(
            Block(
                present=bench.age + start,
                rounds=end - start,
                ok=len(ok),
                p50_ms=quantile(walls, 0.50) if walls else None,
                p90_ms=quantile(walls, 0.90) if walls else None,
                p99_ms=quantile(walls, 0.99) if walls else None,
                device_written=_mean([device[i] for i in ok]) if device else None,
                fs_used=_mean([used[i] for i in ok]) if used else None,
            )
        )
    return out


def growth(bench: Benchmark, size: int = DEFAULT_BLOCK) -> float | None:
    """The last full block's median latency over the first block's; None with fewer than
    two full blocks."""
    full = [b for b in blocks(bench, size) if b.rounds == size and b.p50_ms]
    if len(full) < 2 or full[0].p50_ms is None or full[-1].p50_ms is None:
        return None
    return full[-1].p50_ms / full[0].p50_ms


def slope_ms_per_1000(bench: Benchmark) -> float | None:
    """Least-squares slope of latency (ms) against repositories present, per 1,000."""
    rounds = bench.rounds
    points = [(bench.age + i, rounds.wall_ns[i] / 1e6) for i in range(len(rounds)) if rounds.ok[i]]
    if len(points) < 2:
        return None
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    return 1000 * sxy / sxx
