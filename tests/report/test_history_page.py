"""``vcsbench history --html``: a series' page and its plot, on a store whose series has a
known change (a release 25 % slower from run 9; the machine 20 % slower from run 5, the
canary with it)."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

from helpers import planted_history_store, skip_or_fail, vcsbench

from vcsbench.report.history import judged
from vcsbench.report.history_page import levels, series_plot
from vcsbench.store.store import Store


def test_the_plot_draws_each_runs_median_and_the_levels_either_side_of_the_change(
    tmp_path: Path,
) -> None:
    with Store(planted_history_store(tmp_path)) as store:
        (series,) = list(store.series("git-pygit2 create+commit"))
    judge = judged(series)
    assert [judge.points[c.index] + 1 for c in judge.changes] == [9]
    found = levels(series, judge)
    assert [(a, b) for a, b, _ in found] == [(1, 8), (9, 12)]
    # the median's level after the change over before: the machine's 1.2 (runs 5-12)
    # is in both, in part; the release's 1.25 in the second alone
    before = [p.median_ms or 0 for p in series.points[:8]]
    after = [p.median_ms or 0 for p in series.points[8:]]
    mean = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))  # noqa: E731
    assert found[0][2] == mean(before) and found[1][2] == mean(after)
    fig = series_plot(series, judge)
    top, low = fig.axes[:2]
    dots = top.lines[0]
    assert list(dots.get_xdata()) == list(range(1, 13))
    assert list(dots.get_ydata()) == [p.median_ms for p in series.points]
    assert any("run 9: 1.2" in t.get_text() and "slower" in t.get_text() for t in top.texts)
    canary = low.lines[0]
    assert list(canary.get_ydata()) == [1.0] * 4 + [1.2] * 8
    assert [t.get_text()[:24] for t in low.texts] == ["the machine, run 5: 1.20"]


def test_the_page_holds_every_series_and_renders_in_headless_chromium(tmp_path: Path) -> None:
    store = planted_history_store(tmp_path)
    out = tmp_path / "page"
    result = vcsbench("history", "git-pygit2", "--store", str(store), "--html", str(out))
    assert 0 == result.returncode, result.stderr
    assert f"page: {out / 'history.html'}" in result.stdout
    html = (out / "history.html").read_text()
    (png,) = re.findall(r'src="([^"]+\.png)"', html)
    assert (out / png).stat().st_size > 5000
    assert "git-pygit2 create+commit hello ext4" in html
    assert re.search(r"1\.2\dx slower \[", html)
    chromium = shutil.which("chromium")
    if chromium is None:
        skip_or_fail("chromium is not installed (make test installs it)")
    import matplotlib.image

    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,1600",
            f"--screenshot={shot}", (out / "history.html").as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    image = matplotlib.image.imread(shot)
    assert (1600, 1280) == image.shape[:2]
    # the plot drawn: blue dots (the medians) on the page, not only text
    rgb = image[:, :, :3]
    blue = ((rgb[:, :, 2] > 0.6) & (rgb[:, :, 0] < 0.3) & (rgb[:, :, 1] < 0.6)).mean()
    assert blue > 0.0005, f"{blue:.4%} of the page is the plot's blue"


def test_html_refuses_a_pattern_no_series_matches(tmp_path: Path) -> None:
    store = planted_history_store(tmp_path)
    result = vcsbench(
        "history", "svn-nothing", "--store", str(store), "--html", str(tmp_path / "p")
    )
    assert result.returncode == 2
    assert "--html: no series matches 'svn-nothing'" in result.stderr
    assert not (tmp_path / "p").exists()
