"""Every kind of plot, drawn at the size it is saved at, looked at: no figure-level text
(a title above the axes, the footer below them) lies over any axes, its labels and tick
labels included -- a file that exists is not yet a plot one can read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest
from helpers import DATA, REPO

from vcsbench.report import loadplots, plots
from vcsbench.results import read


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    """Each test's figures closed after it (pyplot keeps them: past 20 open it warns, and
    a warning fails the project's tests)."""
    yield
    plt.close("all")


def overlaps(fig: Any) -> list[str]:
    """Figure-level texts that cover an axes (as ``savefig(bbox_inches="tight")`` sees it)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t for t in [fig._suptitle, *fig.texts] if t is not None and t.get_text()]
    found = []
    for text in texts:
        box = text.get_window_extent(renderer)
        for ax in fig.axes:
            if box.overlaps(ax.get_tightbbox(renderer)):
                found.append(f"{text.get_text()[:50]!r} over {ax.get_title()[:30]!r}")
    return found


BENCH_PLOTS: dict[str, Callable[[list[Any]], Any]] = {
    "summary": plots.summary,
    "boxplot": lambda b: plots.latency_boxplot(b, "create+commit · hello"),
    "cdf": lambda b: plots.latency_cdf(b, "create+commit · hello"),
    "timeline": lambda b: plots.timeline(b, "create+commit · hello"),
    "footprint": lambda b: plots.footprint(b, "create+commit · hello"),
    "growth": lambda b: plots.growth_plot(b, "create+commit · hello", size=4),
}


@pytest.mark.parametrize("data", ["tiny-tmpfs.json", "tiny-ext4.json"])
@pytest.mark.parametrize("kind", sorted(BENCH_PLOTS))
def test_no_title_or_footer_lies_over_the_axes(kind: str, data: str) -> None:
    benches = read(Path(DATA / data)).benchmarks
    fig = BENCH_PLOTS[kind](benches)
    assert overlaps(fig) == []
    assert fig.axes and all(ax.get_window_extent().width > 100 for ax in fig.axes)


@pytest.mark.parametrize("kind", sorted(loadplots.PLOTTERS))
def test_no_title_or_footer_lies_over_a_load_plots_axes(kind: str) -> None:
    run = read(REPO / "results" / "reference" / "markus2011.json.gz")
    assert run.load is not None
    entry = run.load.paths[0]
    fig = loadplots.PLOTTERS[kind](run.load, entry)
    assert overlaps(fig) == []
