"""A baseline along another axis than the backend: a filesystem.

"Is xfs better than ext4?" is one run over both (``--fs ext4,xfs``) and ``report --baseline
ext4``: per backend, operation and payload, each other filesystem's time, device bytes and
allocated bytes as a ratio to the baseline's, the time with a 95% interval.
"""

from __future__ import annotations

from vcsbench.report.document import Block, paragraph, table
from vcsbench.report.headline import ratio_interval
from vcsbench.results.model import Benchmark


def filesystems(benches: list[Benchmark]) -> list[str]:
    return list(dict.fromkeys(b.fs for b in benches))


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or base is None:
        return "—"
    if base == 0:
        return "—" if value else "1.00x"
    return f"{value / base:.2f}x"


def fs_baseline(benches: list[Benchmark], base_fs: str) -> list[Block]:
    """A row per (backend variant, operation, payload, other filesystem): time, device
    bytes written and allocated bytes per repository against ``base_fs``'s."""
    base = {(b.label, b.op, b.payload.name): b for b in benches if b.fs == base_fs}
    rows = []
    for bench in benches:
        key = (bench.label, bench.op, bench.payload.name)
        other = base.get(key)
        if bench.fs == base_fs or other is None:
            continue
        median, base_median = bench.median_ms, other.median_ms
        time = "—"
        if median is not None and base_median:
            interval = ratio_interval(bench, other)
            spread = f" [{interval[0]:.2f}–{interval[1]:.2f}]" if interval else ""
            time = f"{median / base_median:.2f}x{spread}"
        rows.append(
            [
                *key,
                bench.fs,
                time,
                _ratio(bench.per_repo("io_write_device"), other.per_repo("io_write_device")),
                _ratio(
                    bench.per_repo("footprint_allocated"), other.per_repo("footprint_allocated")
                ),
            ]
        )
    if not rows:
        return [paragraph(f"No benchmark ran both on {base_fs} and on another filesystem.")]
    header = [
        "backend", "operation", "payload", "fs", f"time vs {base_fs}",
        f"device bytes vs {base_fs}", f"allocated vs {base_fs}",
    ]  # fmt: skip
    return [
        paragraph(
            f"Each filesystem against {base_fs}, per backend, operation and payload: median "
            "time (with a 95% interval from each median's interval; the rounds are the "
            "samples, so drift between the two benchmarks is not accounted for), device "
            "bytes written and allocated bytes per repository. Below 1: less than on "
            f"{base_fs}."
        ),
        table(header, rows, 4),
    ]
