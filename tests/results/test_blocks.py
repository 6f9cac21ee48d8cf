"""Cost as repositories accumulate: block percentiles, growth and slope against values
worked out by hand, on synthetic rounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import DATA

from vcsbench.report.blocks import blocks, growth, quantile, slope_ms_per_1000
from vcsbench.results import parse
from vcsbench.results.layout import benchmark_part
from vcsbench.results.model import Benchmark


def bench_of(
    wall_ms: list[float],
    ok: list[bool] | None = None,
    device: list[float | None] | None = None,
    age: int = 0,
) -> Benchmark:
    document = json.loads((DATA / "tiny-ext4.json").read_text())
    entry = document["benchmarks"][0]
    info = benchmark_part(entry)
    info["rounds"] = {
        "t_start_s": [0.0] * len(wall_ms),
        "wall_ns": [int(w * 1e6) for w in wall_ms],
        "ok": ok or [True] * len(wall_ms),
        "values": {"io_write_device": device or [None] * len(wall_ms)},
    }
    info["age"] = age
    info["repos"] = info["rounds_asked"] = len(wall_ms)
    document["benchmarks"] = [entry]
    return parse(document, Path("x.json")).benchmarks[0]


def test_quantile_interpolates_between_order_statistics() -> None:
    values = [1.0, 2.0, 3.0, 4.0]
    # position q * (n - 1): 0.5 -> 1.5, 0.9 -> 2.7, 0.99 -> 2.97 (0-based)
    assert quantile(values, 0.5) == pytest.approx(2.5)
    assert quantile(values, 0.9) == pytest.approx(3.7)
    assert quantile(values, 0.99) == pytest.approx(3.97)
    assert quantile([7.0], 0.99) == 7.0


def test_blocks_percentiles_device_bytes_and_what_was_present() -> None:
    walls = [float(i) for i in range(1, 11)]  # 1..10 ms
    device = [1000.0 * i for i in range(1, 11)]
    ok = [True] * 10
    ok[1] = False  # a failed round is no sample: block 0 is 1, 3, 4 ms
    found = blocks(bench_of(walls, ok, device, age=100), size=4)
    assert [(b.present, b.rounds, b.ok) for b in found] == [(100, 4, 3), (104, 4, 4), (108, 2, 2)]
    assert found[0].p50_ms == pytest.approx(3.0)
    assert found[0].p90_ms == pytest.approx(3.8)  # 3 + 0.8 * (4 - 3)
    assert found[1].p50_ms == pytest.approx(6.5)
    assert found[1].p99_ms == pytest.approx(7.97)
    assert found[2].p50_ms == pytest.approx(9.5)
    assert found[0].device_written == pytest.approx((1000 + 3000 + 4000) / 3)
    assert found[1].device_written == pytest.approx(6500.0)


def test_growth_is_the_last_full_blocks_median_over_the_firsts() -> None:
    walls = [float(i) for i in range(1, 11)]
    assert growth(bench_of(walls), size=4) == pytest.approx(6.5 / 2.5)  # block 2 is short
    assert growth(bench_of(walls), size=6) is None  # one full block


def test_slope_is_the_least_squares_line_per_1000_repositories() -> None:
    walls = [2.0 + 0.5 * i for i in range(20)]  # +0.5 ms per repository present
    assert slope_ms_per_1000(bench_of(walls, age=5000)) == pytest.approx(500.0)
    flat = [3.0] * 20
    assert slope_ms_per_1000(bench_of(flat)) == pytest.approx(0.0)


def test_the_growth_plot_is_drawn_only_where_a_benchmark_has_two_blocks(tmp_path: Path) -> None:
    from vcsbench.report.plots import write_plots
    from vcsbench.results.environment import Machine
    from vcsbench.results.model import Run

    bench = bench_of([float(i) for i in range(1, 11)], age=1000)
    run = Run("x.json", [bench], Machine.from_json({}, "machine"))
    made = write_plots([run], tmp_path / "two", kinds=("growth",), block=4)
    assert [title.split(":")[0] for title, _ in made] == ["growth as repositories accumulate"]
    png = made[0][1].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    assert write_plots([run], tmp_path / "one", kinds=("growth",), block=20) == []
