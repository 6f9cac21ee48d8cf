"""Reports, comparisons and plots, against small frozen result files (golden output)."""

from __future__ import annotations

import csv
import html as htmllib
import json
import os
import struct
from pathlib import Path

import pytest
from helpers import REPO, run_args, vcsbench
from hypothesis import given, settings
from hypothesis import strategies as st

from vcsbench.errors import VcsbenchError
from vcsbench.judge.limits import parse_gate
from vcsbench.report.document import Document, paragraph
from vcsbench.report.formats.html import page
from vcsbench.report.ratios import time_ratio
from vcsbench.results import read
from vcsbench.results.layout import benchmark_part
from vcsbench.results.stats import mann_whitney_p

DATA = REPO / "tests" / "data"
UPDATE = os.environ.get("VCSBENCH_UPDATE_GOLDEN") == "1"


def golden(name: str, actual: str) -> None:
    path = DATA / name
    if UPDATE:
        path.write_text(actual)
    assert path.read_text() == actual, f"differs from {path}; VCSBENCH_UPDATE_GOLDEN=1 rewrites"


def test_report_tables_match_the_golden_markdown() -> None:
    result = vcsbench("report", "tiny-tmpfs.json", "tiny-ext4.json", "--format", "md", cwd=DATA)
    assert result.returncode == 0, result.stderr
    golden("tiny.report.md", result.stdout)


def test_compare_matches_the_golden_text_and_names_the_filesystem() -> None:
    result = vcsbench("compare", "tiny-tmpfs.json", "tiny-ext4.json", cwd=DATA)
    assert result.returncode == 0, result.stderr
    assert "filesystem: tmpfs (rw,relatime)  →  ext4 (rw,relatime)" in result.stdout
    # two single runs, no calibration of the machine recorded: ratios, and no time verdict
    assert "~ 5.48x: no verdict: one run a side, no spread measured" in result.stdout
    golden("tiny.compare.txt", result.stdout)


def test_compare_reaches_every_format_with_the_same_figures() -> None:
    """The comparison is one document: html and csv carry the golden text's figures (the
    two medians and the ratio's cell of each benchmark), rst and latex too."""
    text = (DATA / "tiny.compare.txt").read_text()
    cells = ["0.595", "0.851", "~ 1.43x: no verdict: one run a side, no spread measured", "8.70"]
    assert all(cell in text for cell in cells)
    for fmt in ("html", "rst", "latex", "csv"):
        result = vcsbench("compare", "tiny-tmpfs.json", "tiny-ext4.json", "--format", fmt, cwd=DATA)
        assert result.returncode == 0, result.stderr
        shown = result.stdout.replace(r"\textasciitilde{}", "~")  # latex's tilde
        assert all(cell in shown for cell in cells), fmt
    sheet = vcsbench("compare", "tiny-tmpfs.json", "tiny-ext4.json", "--format", "csv", cwd=DATA)
    rows = list(csv.reader(sheet.stdout.splitlines()))
    assert rows[0][:3] == ["benchmark", "base median ms", "other median ms"]
    assert rows[2] == [
        "svn-fs create+commit hello tmpfs → ext4:size=256M", "1.59", "8.70",
        "~ 5.48x: no verdict: one run a side, no spread measured", "0/0",
    ]  # fmt: skip
    gated = vcsbench(
        "compare", "tiny-tmpfs.json", "tiny-ext4.json", "--format", "html", "--fail-on",
        "time:10%", cwd=DATA,
    )  # fmt: skip
    assert gated.returncode == 1 and gated.stdout.rstrip().endswith("</html>")
    assert "GATE FAILS svn-fs create+commit" in gated.stderr


def test_compare_gate_fails_closed_between_single_runs_of_an_uncalibrated_machine() -> None:
    result = vcsbench(
        "compare", "tiny-tmpfs.json", "tiny-ext4.json", "--fail-on", "time:10%", cwd=DATA
    )
    assert result.returncode == 1
    assert (
        "GATE FAILS svn-fs create+commit hello tmpfs → ext4:size=256M: time: too few runs to "
        "judge +10%: it has no run-to-run spread to judge by" in result.stdout
    )


def test_compare_of_a_run_with_itself_finds_nothing_significant() -> None:
    result = vcsbench("compare", "tiny-ext4.json", "tiny-ext4.json", cwd=DATA)
    assert result.returncode == 0
    assert "The two environments do not differ" in result.stdout
    assert "slower" not in result.stdout and "faster" not in result.stdout
    assert "~ 1.00x" in result.stdout


@pytest.mark.parametrize("fmt", ["md", "github", "rst", "latex", "csv", "html"])
def test_every_format_renders_every_backend(fmt: str) -> None:
    result = vcsbench("report", str(DATA / "tiny-ext4.json"), "--format", fmt)
    assert result.returncode == 0, result.stderr
    assert "git-pygit2" in result.stdout and "svn-fs" in result.stdout


def test_baseline_adds_a_ratio_column() -> None:
    result = vcsbench("report", str(DATA / "tiny-ext4.json"), "--baseline", "svn-fs")
    assert "vs svn-fs" in result.stdout and "1.00x" in result.stdout


def test_written_result_reads_back_complete() -> None:
    document = json.loads((DATA / "tiny-ext4.json").read_text())
    loaded = read(DATA / "tiny-ext4.json")
    assert len(document["benchmarks"]) == len(loaded.benchmarks)
    for raw, bench in zip(document["benchmarks"], loaded.benchmarks, strict=True):
        info = benchmark_part(raw)
        # The file predates age and layout: it reads as no age, the flat layout.
        later = ("clock", "repos_ok", "age", "layout")
        assert {k: v for k, v in info.items() if k not in later} == {
            k: v for k, v in bench.to_json().items() if k not in later
        }
        assert (bench.age, bench.layout) == (0, "flat")
        assert (info["backend"]["name"], info["op"]) == (bench.backend.name, bench.op)
    assert loaded.command.startswith("vcsbench run")


def test_one_clock_pytest_benchmarks_stats_are_the_runners_successful_rounds() -> None:
    document = json.loads((DATA / "tiny-ext4.json").read_text())
    for raw in document["benchmarks"]:
        rounds = benchmark_part(raw)["rounds"]
        ok_walls = [w / 1e9 for w, ok in zip(rounds["wall_ns"], rounds["ok"], strict=True) if ok]
        assert ok_walls == raw["stats"]["data"]


def test_schema_1_results_load_with_their_figures_migrated() -> None:
    document = json.loads((DATA / "schema1-ext4.json").read_text())
    run = read(DATA / "schema1-ext4.json")
    for raw, bench in zip(document["benchmarks"], run.benchmarks, strict=True):
        info = benchmark_part(raw)
        assert 1 == info["schema_version"]
        assert info["rounds"]["wall_ns"] == bench.rounds.wall_ns
        assert info["rounds"]["cpu_s"] == bench.rounds.values["cpu"]
        user, sys_ = info["metrics"]["cpu_user"]["total"], info["metrics"]["cpu_sys"]["total"]
        assert user + sys_ == bench.metric("cpu").total
        assert (
            info["metrics"]["footprint_allocated"] == bench.metric("footprint_allocated").to_json()
        )
        assert None is bench.metric("footprint_content").total
        assert "schema 1" in bench.metric("footprint_content").reason


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"benchmarks": [', "is not valid JSON (truncated or damaged?"),
        ("[1, 2, 3]", "is not a vcsbench result file"),
        ('{"benchmarks": [{"name": "x", "extra_info": {}}]}', "holds no vcsbench benchmarks"),
        (
            '{"benchmarks": [{"name": "x", "extra_info": {"vcsbench": {"schema_version": 99}}}]}',
            "vcsbench schema 99 is not one this version reads",
        ),
        (
            '{"benchmarks": [{"extra_info": {"vcsbench": {"schema_version": 2, "op": 5}}}]}',
            "benchmarks[0].extra_info.vcsbench lacks 'metrics'",
        ),
        (
            '{"benchmarks": [{"extra_info": {"vcsbench": {"schema_version": 2, "op": 5, '
            '"metrics": {}, "backend": {"name": "git-cli"}}}}]}',
            "benchmarks[0].extra_info.vcsbench.op is int, expected str",
        ),
    ],
)
def test_bad_result_file_is_one_clear_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    for command in (["report", str(path)], ["compare", str(path), str(path)]):
        result = vcsbench(*command)
        assert result.returncode == 2
        assert len(result.stderr.strip().splitlines()) == 1
        assert message in result.stderr


def test_bad_gate_names_what_is_accepted() -> None:
    with pytest.raises(
        VcsbenchError, match="'speed:5%' is not NAME:N% with N above 0 and NAME one of time"
    ):
        parse_gate("time:10%,speed:5%")


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0.001, 10), min_size=2, max_size=30),
    st.lists(st.floats(0.001, 10), min_size=2, max_size=30),
)
def test_mann_whitney_p_is_a_probability_and_symmetric(a: list[float], b: list[float]) -> None:
    p = mann_whitney_p(a, b)
    assert 0.0 <= p <= 1.0
    assert p == pytest.approx(mann_whitney_p(b, a))


def test_mann_whitney_separates_shifted_samples() -> None:
    base = [1.0 + 0.01 * i for i in range(20)]
    assert mann_whitney_p(base, [x + 1 for x in base]) < 0.001
    assert mann_whitney_p(base, list(reversed(base))) > 0.9


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    return int(width), int(height)


def test_plots_of_a_real_run_are_valid_non_trivial_images(tmp_path: Path) -> None:
    result = vcsbench(
        "report",
        str(DATA / "tiny-tmpfs.json"),
        str(DATA / "tiny-ext4.json"),
        "--format",
        "html",
        "--out",
        str(tmp_path),
        "--plot-format",
        "svg",
    )
    assert result.returncode == 0, result.stderr
    plots = sorted((tmp_path / "plots").glob("*.png"))
    kinds = {p.stem.split("-")[0] for p in plots}
    assert {"summary", "latency", "cdf", "timeline", "footprint"} == kinds
    for png in plots:
        width, height = png_size(png)
        assert width > 300 and height > 200 and png.stat().st_size > 10_000
        assert png.with_suffix(".svg").read_text().startswith("<?xml")
    page = (tmp_path / "report.html").read_text()
    assert page.count("data:image/png;base64,") == len(plots)
    assert "<table>" in page


def test_a_backend_has_the_same_colour_in_every_plot_and_its_variants_other_markers() -> None:
    from vcsbench.report.plotkit import style

    assert style("svn-fs")[0] == style("svn-fs[fs-type=fsx]")[0]
    assert style("svn-fs")[1] != style("svn-fs[fs-type=fsx]")[1]
    colours = {
        style(name)[0] for name in ("git-pygit2", "git-cli", "svn-fs", "svn-pysvn", "svn-cli")
    }
    assert 5 == len(colours)
    assert style("hg-cli") == style("hg-cli")


def test_plot_colours_follow_the_backend_not_the_speed_rank(tmp_path: Path) -> None:
    import matplotlib.colors

    from vcsbench.report.plotkit import style
    from vcsbench.report.plots import latency_cdf

    run = read(DATA / "tiny-ext4.json")
    rows = run.benchmarks
    for order in (rows, list(reversed(rows))):
        fig = latency_cdf(order, "t")
        lines = {line.get_label(): line.get_color() for line in fig.axes[0].get_lines()}
        for bench in rows:
            assert matplotlib.colors.to_hex(style(bench.label)[0]) == matplotlib.colors.to_hex(
                lines[bench.label]
            )


def test_two_runs_of_one_backend_stay_apart_in_every_format(tmp_path: Path) -> None:
    first, second = tmp_path / "nofsync.json", tmp_path / "fsync.json"
    for path in (first, second):
        path.write_text((DATA / "tiny-ext4.json").read_text())
    for fmt in ("md", "github", "rst", "latex", "html"):
        result = vcsbench("report", str(first), str(second), "--format", fmt)
        assert 0 == result.returncode, result.stderr
        assert "nofsync" in result.stdout and "fsync" in result.stdout
    csv_text = vcsbench("report", str(first), str(second), "--format", "csv").stdout
    assert str(first) in csv_text and str(second) in csv_text


def test_csv_is_data_that_parses_as_numbers() -> None:
    import csv
    import io

    text = vcsbench("report", str(DATA / "tiny-ext4.json"), "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    run = read(DATA / "tiny-ext4.json")
    assert len(run.benchmarks) == len(rows)
    for row, bench in zip(rows, run.benchmarks, strict=True):
        assert bench.median_ms == pytest.approx(float(row["median_ms"]))
        assert bench.per_repo("io_write_device") == float(row["io_write_device_per_repo (B)"])
        assert bench.repos == int(row["repos"])


def test_the_median_interval_is_the_order_statistic_one() -> None:
    from vcsbench.report.headline import median_interval

    # n = 100: the 95% interval runs from the 40th to the 61st smallest value.
    assert (40.0, 61.0) == median_interval([float(i) for i in range(1, 101)])
    assert None is median_interval([1.0, 2.0, 3.0])


def test_every_report_format_opens_with_the_headline() -> None:
    for fmt in ("md", "github", "rst", "latex", "html"):
        text = vcsbench("report", str(DATA / "tiny-ext4.json"), "--format", fmt).stdout
        assert "Headline" in text
        assert text.index("Headline") < text.index("create+commit · payload hello")
    md = vcsbench("report", str(DATA / "tiny-ext4.json")).stdout
    run = read(DATA / "tiny-ext4.json")
    fast, slow = sorted(run.benchmarks, key=lambda b: b.median_ms or 0.0)
    assert fast.median_ms is not None and slow.median_ms is not None
    # one after the other, no run-to-run spread recorded: the ratio, marked as without interval
    assert f"{slow.median_ms / fast.median_ms:.2f}x †" in md


@pytest.mark.parametrize("flag", ["--plots", "--out"])
def test_an_unwritable_plot_or_report_path_is_one_line(flag: str) -> None:
    result = vcsbench("report", str(DATA / "tiny-ext4.json"), flag, "/proc/vcsbench-report")
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert f"{flag} /proc/vcsbench-report" in line and "cannot be written" in line


def test_a_markdown_report_links_its_plots(tmp_path: Path) -> None:
    result = vcsbench(
        "report", str(DATA / "tiny-ext4.json"), "--plots", str(tmp_path / "plots"), cwd=tmp_path
    )
    assert 0 == result.returncode, result.stderr
    links = [line for line in result.stdout.splitlines() if line.startswith("![")]
    assert links and all("](plots/" in line for line in links)
    for line in links:
        assert (tmp_path / line.split("](")[1].rstrip(")")).exists()


def with_rounds(
    wall_ns: list[int], steal: float = 0.0, sample: dict[str, float] | None = None
) -> object:
    from vcsbench.results import parse

    document = json.loads((DATA / "tiny-ext4.json").read_text())
    entry = document["benchmarks"][0]
    info = benchmark_part(entry)
    info["rounds"] = {
        "t_start_s": [0.0] * len(wall_ns),
        "wall_ns": wall_ns,
        "ok": [True] * len(wall_ns),
        "values": {},
    }
    info["repos"] = info["rounds_asked"] = len(wall_ns)
    info["sampler"]["samples"] = [{"cpu_steal_pct": steal, "loadavg_1m": 0.1, **(sample or {})}] * 3
    document["benchmarks"] = [entry]
    return parse(document, Path("x.json"))


def test_stability_warnings_name_noisy_rounds_and_a_busy_host() -> None:
    from vcsbench.report.stability import warnings

    steady = with_rounds([1_000_000 + i for i in range(40)])
    noisy = with_rounds([1_000_000 * (1 + (i % 4)) for i in range(40)])
    stolen = with_rounds([1_000_000 + i for i in range(40)], steal=20.0)
    assert [] == warnings(steady.benchmarks, 2)  # type: ignore[attr-defined]
    (line,) = warnings(noisy.benchmarks, 2)  # type: ignore[attr-defined]
    assert line.startswith("unsteady rounds: git-pygit2 create+commit hello")
    (line,) = warnings(stolen.benchmarks, 2)  # type: ignore[attr-defined]
    assert "the hypervisor took CPU time" in line


@pytest.mark.parametrize(
    ("sample", "busy"),
    [
        ({"loadavg_1m": 3.0}, True),  # an earlier result: its load average
        ({"loadavg_1m": 3.0, "runnable": 1}, False),  # the minute before (a filling, ended)
        ({"loadavg_1m": 0.5, "runnable": 3}, True),  # three tasks ready to run, two CPUs
    ],
)
def test_a_busy_machine_is_what_is_runnable_during_the_rounds(
    sample: dict[str, float], busy: bool
) -> None:
    from vcsbench.report.stability import warnings

    steady = with_rounds([1_000_000 + i for i in range(40)], sample=sample)
    found = warnings(steady.benchmarks, 2)  # type: ignore[attr-defined]
    assert busy == any("the machine was busy" in line for line in found), found


def test_the_html_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    import shutil
    import subprocess

    import matplotlib.image
    from helpers import skip_or_fail

    chromium = shutil.which("chromium")
    if chromium is None:
        skip_or_fail("chromium is not installed (make test installs it)")
    result = vcsbench(
        "report", str(DATA / "tiny-ext4.json"), "--format", "html", "--out", str(tmp_path)
    )
    assert 0 == result.returncode, result.stderr
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            str(chromium),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1280,1600",
            f"--screenshot={shot}",
            (tmp_path / "report.html").as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    image = matplotlib.image.imread(shot)
    assert (1600, 1280) == image.shape[:2]
    ink = (image[:, :, :3].mean(axis=2) < 0.9).mean()
    assert ink > 0.01, f"only {ink:.2%} of the page is not white"


def test_log_axis_labels_never_collide_and_a_narrow_range_gets_two() -> None:
    import matplotlib.pyplot as plt

    from vcsbench.report.plotkit import plain_log_ticks

    for values in ([0.9, 1.1], [8.0, 10.0], [13.0, 14.5], [0.2, 300.0]):
        fig, ax = plt.subplots()
        ax.plot(values, [1, 2])
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis, values)
        low, high = ax.get_xlim()
        fig.canvas.draw()
        shown = [t for t in ax.xaxis.get_majorticklocs() if low <= t <= high]
        formatter = ax.xaxis.get_major_formatter()
        labels = [formatter(t, i) for i, t in enumerate(shown)]
        plt.close(fig)
        assert len(shown) >= 2, (values, shown)
        assert len(labels) == len(set(labels))
        assert len(labels) <= 10


def test_a_per_round_series_shorter_than_the_rounds_is_one_line(tmp_path: Path) -> None:
    document = json.loads((DATA / "tiny-tmpfs.json").read_text())
    rounds = benchmark_part(document["benchmarks"][0])["rounds"]
    key = next(iter(rounds["values"]))
    rounds["values"][key].pop()
    path = tmp_path / "short.json"
    path.write_text(json.dumps(document))
    result = vcsbench("report", str(path))
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"vcsbench: error: {path}: ")
    assert f".values.{key}: {len(rounds['wall_ns']) - 1} values but" in line


@pytest.mark.parametrize("fmt", ["md", "github", "rst", "latex", "html"])
def test_a_load_result_reports_its_step_figures_in_every_format(fmt: str) -> None:
    from vcsbench.report.format import number

    path = REPO / "results" / "reference" / "markus2011.json.gz"
    load = read(path).load
    assert load is not None
    result = vcsbench("report", str(path), "--format", fmt)
    assert 0 == result.returncode, result.stderr
    for entry in load.paths:
        assert entry.path in result.stdout
        for step in entry.steps:
            assert number(step.p95_ms) in result.stdout
            assert number(step.ops_per_s) in result.stdout


def test_names_from_a_file_are_inert_in_latex(tmp_path: Path) -> None:
    from vcsbench.report.formats.markup import latex_escape

    assert r"50\% \& \$x\_y \{\} \textbackslash{}input" == latex_escape("50% & $x_y {} \\input")
    document = json.loads((DATA / "tiny-ext4.json").read_text())
    for entry in document["benchmarks"]:
        benchmark_part(entry)["backend"]["variant"] = r"\input{/etc/passwd}%"
    (tmp_path / "x.json").write_text(json.dumps(document))
    text = vcsbench("report", str(tmp_path / "x.json"), "--format", "latex").stdout
    assert r"\input{" not in text and r"\textbackslash{}input\{/etc/passwd\}\%" in text


def test_load_plots_say_1_client_and_write_latency_ticks_as_plain_numbers() -> None:
    from vcsbench.report.loadplots import PLOTTERS

    load = read(REPO / "results" / "reference" / "markus2011.json.gz").load
    assert load is not None
    entry = load.paths[0]
    for kind, plot in PLOTTERS.items():
        fig = plot(load, entry)
        fig.canvas.draw()
        latency_axis = fig.axes[0]
        ticks = [t.get_text() for t in latency_axis.get_yticklabels() if t.get_text()]
        assert ticks and all("10^" not in t and "times" not in t for t in ticks), (kind, ticks)
        assert all(float(t.replace(",", "")) > 0 for t in ticks), (kind, ticks)
        if kind == "percentiles":
            labels = [t.get_text() for t in latency_axis.get_legend().get_texts()]
            assert "1 client" == labels[0] and "2 clients" == labels[1]


def _sampled(bench: object, count: int) -> object:
    """The benchmark with ``count`` machine samples whose Dirty and iowait move."""
    import dataclasses

    samples = [
        {"t_s": bench.rounds.t_start_s[0] + 0.5 * i, "cpu_iowait_pct": float(i % 3),  # type: ignore[attr-defined]
         "device_busy_pct": None, "dirty_bytes": (i % 4) << 20, "writeback_bytes": 0}
        for i in range(count)
    ]  # fmt: skip
    return dataclasses.replace(bench, sampler={"interval_s": 0.5, "samples": samples})  # type: ignore[type-var]


def test_timeline_series_are_the_machines_apart_per_benchmark_and_only_with_enough_points() -> None:
    import matplotlib.colors

    from vcsbench.report.plotkit import style
    from vcsbench.report.plots import timeline

    rows = read(DATA / "tiny-ext4.json").benchmarks[:2]
    fig = timeline([_sampled(b, 12) for b in rows], "t")  # type: ignore[misc]
    memory = fig.axes[-1]
    lines = {line.get_label(): line for line in memory.get_lines()}
    assert {f"Dirty (whole machine) ({b.label})" for b in rows} == set(lines)
    colours = {matplotlib.colors.to_hex(line.get_color()) for line in lines.values()}
    assert {matplotlib.colors.to_hex(style(b.label)[0]) for b in rows} == colours
    assert 2 == len(colours)
    # Two samples of a short benchmark are no timeline: left out, and the title says so.
    fig = timeline([_sampled(b, 2) for b in rows], "t")  # type: ignore[misc]
    assert 1 == len(fig.axes)
    assert "machine series left out: 2 sample(s) only, one every 0.5 s" in (fig.axes[0].get_title())


def test_the_summary_plot_has_a_device_panel_only_where_a_device_was_measured() -> None:
    from vcsbench.report.plots import summary

    with_device = summary(read(DATA / "tiny-ext4.json").benchmarks)
    assert 2 == len(with_device.axes)
    tmpfs = summary(read(DATA / "tiny-tmpfs.json").benchmarks)
    assert 1 == len(tmpfs.axes)
    assert "no device panel" in tmpfs.texts[0].get_text() or "no device panel" in (
        tmpfs._suptitle.get_text()  # type: ignore[union-attr]
    )


def test_a_filesystem_baseline_sets_every_other_filesystem_against_it() -> None:
    from vcsbench.report.ratios import time_ratio

    ext4, tmpfs = read(DATA / "tiny-ext4.json"), read(DATA / "tiny-tmpfs.json")
    report = vcsbench(
        "report", str(DATA / "tiny-ext4.json"), str(DATA / "tiny-tmpfs.json"),
        "--baseline", "ext4:size=256M",
    )  # fmt: skip
    assert 0 == report.returncode, report.stderr
    assert "### Against ext4:size=256M" in report.stdout
    for base, other in zip(ext4.benchmarks, tmpfs.benchmarks, strict=True):
        assert base.label == other.label
        found = time_ratio(other, base)
        assert found is not None and found.interval is None  # two runs, no spread recorded
        allocated = other.per_repo("footprint_allocated") / base.per_repo("footprint_allocated")  # type: ignore[operator]
        row = next(
            line for line in report.stdout.splitlines()
            if line.startswith(f"| {other.label} ") and "| tmpfs " in line
            and "x †" in line
        )  # fmt: skip
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert cells[4] == f"{other.median_ms / base.median_ms:.3f}x † no verdict (†)"  # type: ignore[operator]
        assert cells[5] == "—"  # tmpfs has no device
        assert cells[6] == f"{allocated:.2f}x"
    wrong = vcsbench("report", str(DATA / "tiny-ext4.json"), "--baseline", "xfs")
    assert 2 == wrong.returncode
    assert wrong.stderr.strip() == (
        "vcsbench: error: baseline 'xfs' is neither a backend, a filesystem nor an operation "
        "of these results; backends: git-pygit2, svn-fs; filesystems: ext4:size=256M; "
        "operations: create+commit"
    )


def test_an_operation_baseline_sets_its_other_variants_against_it(tmp_path: Path) -> None:
    """``--baseline commit`` in a run of commit and commit[history=4]: per backend, the
    second against the first, from the figures the results hold."""
    out = tmp_path / "r.json"
    made = vcsbench(
        *run_args("6", "git-pygit2,svn-fs", "commit,commit[history=4]", fs=f"dir:{tmp_path}",
                   out=out),
    )  # fmt: skip
    assert 0 == made.returncode, made.stderr
    report = vcsbench("report", str(out), "--baseline", "commit")
    assert 0 == report.returncode, report.stderr
    assert "### Against commit" in report.stdout
    assert "Each operation against commit, per backend, payload and filesystem" in report.stdout
    benches = read(out).benchmarks
    for label in ("git-pygit2", "svn-fs"):
        base = next(b for b in benches if b.label == label and b.op == "commit")
        other = next(b for b in benches if b.label == label and b.op == "commit[history=4]")
        found = time_ratio(other, base)
        assert found is not None
        row = next(
            line for line in report.stdout.splitlines()
            if line.startswith(f"| {label} ") and "| commit[history=4] " in line
        )  # fmt: skip
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert cells[:5] == [label, "commit", "hello", f"dir:{tmp_path}", "commit[history=4]"]
        assert cells[5] == f"{found.text(3)} {found.verdict()}"
        allocated = other.per_repo("footprint_allocated") / base.per_repo("footprint_allocated")  # type: ignore[operator]
        assert cells[7] == f"{allocated:.2f}x"


def test_a_report_with_no_device_figure_says_so_instead_of_a_table_of_n_a() -> None:
    tmpfs = vcsbench("report", str(DATA / "tiny-tmpfs.json"))
    assert 0 == tmpfs.returncode, tmpfs.stderr
    assert (
        "Device KiB written per repository: not measured here (no block device under this "
        "filesystem), so no table."
    ) in tmpfs.stdout
    ext4 = vcsbench("report", str(DATA / "tiny-ext4.json"))
    assert "Device KiB written per repository (journal, metadata and writeback included;" in (
        ext4.stdout
    )


def test_the_html_page_sets_markdown_code_spans_as_code() -> None:
    """The documents write `code` for the Markdown formats; the HTML page shows it as
    code, never as backticks, and a lone backtick (a name from a result file) as text."""
    doc = Document("t").add(
        paragraph("a commit of the `submission` payload; the open loop (`--shape open`)"),
        paragraph("a name with one ` in it <b>"),
    )
    out = page([doc])
    assert "<code>submission</code>" in out and "<code>--shape open</code>" in out
    assert "a name with one ` in it &lt;b&gt;" in out
    body = out.split("<body>")[1].split("<script>")[0]
    assert 1 == htmllib.unescape(body).count("`")


def test_a_rows_only_figure_is_its_median_never_the_fastest_of_nothing() -> None:
    """The tiny run with one backend left: each row has one figure, which the headline
    gives as its median alone; with both, the faster is marked and the other has a ratio."""
    from vcsbench.report.headline import time_cell

    svn, git = read(DATA / "tiny-ext4.json").benchmarks[:2]
    assert svn.median_ms is not None and git.median_ms is not None
    alone = time_cell(svn, svn, alone=True)
    assert alone.endswith(" ms") and "(" not in alone and "x" not in alone
    fastest, other = sorted((svn, git), key=lambda b: b.median_ms or 0.0)
    assert time_cell(fastest, fastest).endswith("ms (fastest)")
    assert "x" in time_cell(other, fastest).split("ms, ")[1]
