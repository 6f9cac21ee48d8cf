"""The studies: each table sets this run's figures (checked against the result file) beside
the published ones; the variants they compare do what their options say, and bad option
values are refused in one line before anything runs."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, run_args, skip_or_fail, vcsbench

from vcsbench.backends import make_backend
from vcsbench.backends._git import git_env, loose_objects
from vcsbench.backends.git_markus import HOOK, bare_of, work_of
from vcsbench.errors import VcsbenchError
from vcsbench.report.format import fmt_num
from vcsbench.report.terminal import for_terminal
from vcsbench.results import read
from vcsbench.results.model import Benchmark
from vcsbench.studies import STUDIES
from vcsbench.workload.payloads import load_payload


def rows(table: str) -> dict[str, list[str]]:
    """Markdown table rows by their first cell (every table of the file, later wins)."""
    out = {}
    for line in table.splitlines():
        if line.startswith("| ") and not line.startswith("|:"):
            cells = [cell.strip() for cell in line.split("|")[1:-1]]
            out[cells[0]] = cells
    return out


def headers(table: str) -> list[str]:
    line = next(line for line in table.splitlines() if line.startswith("| "))
    return [cell.strip() for cell in line.split("|")[1:-1]]


def median_ms(bench: Benchmark) -> float:
    return statistics.median(bench.rounds.series("wall")) * 1000


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x"


def time_ratio(a: float, b: float) -> str:
    """A time ratio between benchmarks that ran one after the other, with no run-to-run
    spread recorded (the tests' data directory has none): no interval, marked."""
    return f"{a / b:.2f}x †"


def study(tmp_path: Path, *args: str) -> tuple[str, list[Benchmark]]:
    out = tmp_path / "study.json"
    result = vcsbench(
        "study", *args, "--out", str(out), "--image-dir", str(tmp_path), "--perturbation", "off",
        env={"COLUMNS": "100"},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    table = out.with_suffix(".md").read_text()
    # The terminal gets the same text fitted to its width; the file keeps the Markdown.
    assert for_terminal(table, 100) in result.stdout
    assert f"table: {out.with_suffix('.md')}" in result.stdout
    return table, read(out).benchmarks


def test_git_fsync_sets_gits_published_figures_beside_this_runs(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        skip_or_fail("git-fsync runs on a loop-mounted ext4 (root)")
    table, benches = study(tmp_path, "git-fsync", "--repos", "2", "--fs", "ext4")
    found = rows(table)
    cols = headers(table)
    by_mode = {b.backend.options.get("core.fsyncMethod") or "none": b for b in benches}
    none = by_mode["none"]
    published = {"none": ("0.06", "1.00x"), "fsync": ("1.88", "31.33x"), "batch": ("0.15", "2.50x")}
    for mode, bench in by_mode.items():
        cells = dict(zip(cols, found[bench.label], strict=True))
        assert cells["N"] == "2" and cells["errors"] == "0"
        expected = "1.00x" if bench is none else time_ratio(median_ms(bench), median_ms(none))
        assert cells["time ratio"] == expected  # the base against itself: exact
        shown = (cells["c0f4752ed2 Linux s"], cells["c0f4752ed2 ratio"])
        assert shown == published.get(mode, ("—", "—"))
    # 500 objects flushed one by one: at least one device write request each.
    fsync = dict(zip(cols, found[by_mode["fsync"].label], strict=True))
    assert float(fsync["device write requests"].replace(",", "")) >= 500
    flush = (median_ms(by_mode["fsync"]) - median_ms(none)) / 500
    assert f"= {flush:.2f} ms here, 3.64 ms in the published run" in table
    assert "c0f4752ed2" in table and "p0008" in table


def test_markus_today_sets_markus_against_the_2013_way(tmp_path: Path) -> None:
    table, benches = study(tmp_path, "markus-today", "--repos", "3", "--fs", f"dir:{tmp_path}")
    cols = headers(table)
    index = {(b.backend.name, b.op): b for b in benches}
    base = index[("git-pygit2", "create+commit")]
    found = {
        tuple(cells[:2]): dict(zip(cols, cells, strict=True)) for cells in rows(table).values()
    }
    create = found[("MarkUs: create (its own first commit and push)", "git-markus")]
    markus = index[("git-markus", "create")]
    assert create["time vs 2013 way"] == time_ratio(median_ms(markus), median_ms(base))
    inodes = markus.per_repo("footprint_inodes")
    base_inodes = base.per_repo("footprint_inodes")
    assert inodes is not None and base_inodes is not None
    assert create["inodes vs 2013 way"] == ratio(inodes, base_inodes)
    assert found[("2013 study: create+commit", "git-pygit2")]["2013 ms/repo"] == "22.3"
    assert found[("2013 study: create", "git-pygit2")]["2013 ms/repo"] == "12.1"
    assert "app/lib/git_repository.rb" in table


# svn-storage is the same study class with other variants (its options' refusals are below)
@pytest.mark.parametrize(("name", "backends"), [("git-storage", "git-cli,git-cli[objects=packed]")])
def test_storage_studies_set_each_variant_against_its_default(
    name: str, backends: str, tmp_path: Path
) -> None:
    table, benches = study(
        tmp_path, name, "--repos", "2", "--backends", backends, "--fs", f"dir:{tmp_path}"
    )
    sections = table.split("### ")[1:]
    assert len(sections) == 4  # create+commit and commit, of submission and many-files
    # The header says what ran, which --backends narrowed (not every variant of the study).
    (ran,) = [line for line in table.splitlines() if "Ran here:" in line]
    assert "Ran here: 8 benchmarks — git-cli (2 variants); " in ran
    assert "create+commit" in ran and "many-files" in ran and f"on dir:{tmp_path}." in ran
    for section in sections:
        op_payload = section.splitlines()[0].split(": ", 1)[1]
        op, payload = op_payload.split(", ")
        group = {b.label: b for b in benches if (b.op, b.payload.name) == (op, payload)}
        base_label, variant = backends.split(",")
        cells = dict(zip(headers(section), rows(section)[variant], strict=True))
        assert cells["time ratio"] == time_ratio(
            median_ms(group[variant]), median_ms(group[base_label])
        )
        # like with like: the footprint ratio is of the repositories as git gc keeps them
        kept = group[variant].per_repo("footprint_kept_allocated")
        base = group[base_label].per_repo("footprint_kept_allocated")
        assert kept is not None and base is not None
        assert cells["kept ratio"] == ratio(kept, base)
        assert cells["kept KiB"] == fmt_num(kept, 1024)
        assert "No figures for these choices are published" in section


@pytest.mark.parametrize(
    ("variant", "message"),
    [
        ("svn-fs[compression=gzip]", "option compression='gzip' is not known; use none, lz4"),
        ("svn-fs[fs-type=fsx,compression=zlib]", "applies to fs-type=fsfs only (not fsx)"),
        ("svn-cli[compatible-version=1.9,compression=lz4]", "needs FSFS format 8"),
        ("git-cli[core.fsync=often]", "option core.fsync='often' is not a component"),
        ("git-cli[core.fsyncMethod=later]", "use one of fsync, writeout-only, batch"),
        ("git-cli[objects=zipped]", "use loose (git add + git commit) or packed"),
        ("git-markus[colour=red]", "unknown option 'colour' for backend git-markus"),
    ],
)
def test_a_bad_variant_option_is_refused_naming_what_is_accepted(
    variant: str, message: str
) -> None:
    with pytest.raises(VcsbenchError, match=re.escape(message)):
        make_backend(variant)


def test_a_study_refuses_a_bad_variant_in_one_line_before_running() -> None:
    result = vcsbench("study", "svn-storage", "--backends", "svn-fs[compression=gzip]")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "vcsbench: error: option compression='gzip' is not known; use none, lz4, zlib or "
        "zlib-1 ... zlib-9"
    ]


def test_the_round_trips_are_the_least_squares_slope_of_time_against_the_round_trip() -> None:
    from vcsbench.studies.distance import line_fit

    # a client that waits 3 round trips and works 40 ms, each point measured a little off
    points = [(0.1, 40.3), (10.6, 71.8), (50.9, 192.7), (100.9, 342.7)]
    slope, intercept = line_fit(points) or (0.0, 0.0)
    assert 2.99 < slope < 3.01 and 39.9 < intercept < 40.4
    assert line_fit([(10.0, 1.0), (10.0, 2.0)]) is None  # one round trip: no slope


def test_the_round_trips_carry_the_interval_of_the_fit_and_two_distances_none() -> None:
    """The slope's interval from the residuals agrees with scipy's own interval of the
    slope; with two distances the fit has no residual to give one."""
    from scipy import stats

    from vcsbench.studies.distance import slope_text

    points = [(0.1, 40.3), (10.6, 71.8), (50.9, 192.7), (100.9, 342.7)]
    found = stats.linregress(*zip(*points, strict=True))
    half = stats.t.ppf(0.975, 2) * found.stderr
    assert f"{found.slope:.2f} [{found.slope - half:.2f}–{found.slope + half:.2f}]" == (
        slope_text(points)
    )
    assert "3.00 (2 distances: no interval)" == slope_text([(0.0, 40.0), (10.0, 70.0)])
    # a slope whose interval crosses zero: drift alone could have made it, and it says so
    flat = slope_text([(0.1, 40.0), (10.5, 46.0), (50.2, 38.0), (100.3, 44.0)])
    assert flat.endswith(" (holds 0: no round trip shown)") and flat.startswith("0.0")


def test_every_study_is_offered_with_its_defaults() -> None:
    result = vcsbench("study", "--help")
    text = " ".join(result.stdout.split())
    for study in STUDIES.values():
        assert f"{study.name}: " in text and f"--repos {study.repos};" in text


def test_fsfs_compression_changes_what_the_revision_stores(tmp_path: Path) -> None:
    payload = load_payload("submission")
    sizes = {}
    for value in ("none", "zlib"):
        with make_backend(f"svn-fs[compression={value}]") as backend:
            backend.ready(tmp_path)
            repo = tmp_path / value
            backend.create(repo)
            backend.commit(repo, payload.files, "m", tmp_path)
            assert backend.verify(repo, payload.files) == []
            assert f"compression = {value}" in (repo / "db" / "fsfs.conf").read_text()
            sizes[value] = (repo / "db" / "revs" / "0" / "1").stat().st_size
    # Uncompressed, the revision holds every byte of the payload; zlib holds less.
    assert sizes["none"] >= payload.total_bytes > sizes["zlib"]


@pytest.mark.parametrize("name", ["svn-fs", "svn-fs[compression=none]", "git-pygit2"])
def test_create_commit_makes_what_create_then_commit_makes(name: str, tmp_path: Path) -> None:
    """create+commit commits into the repository the library handed back (no second
    open); what it stores is what create, then commit, stores -- byte for byte where
    the bytes do not hold a time, and with the option that is read at open honoured."""
    payload = load_payload("submission")
    stored = {}
    with make_backend(name) as backend:
        backend.ready(tmp_path)
        for how in ("one", "two"):
            repo = tmp_path / how
            if how == "one":
                backend.create_commit(repo, payload.files, "m", tmp_path)
            else:
                backend.create(repo)
                backend.commit(repo, payload.files, "m", tmp_path)
            assert backend.verify(repo, payload.files) == []
            if name.startswith("svn-fs"):
                stored[how] = (repo / "db" / "revs" / "0" / "1").stat().st_size
                assert not (repo / "db" / "revs" / "0" / "2").exists()
            else:
                head = subprocess.run(
                    ["git", "-C", str(repo), "cat-file", "-p", "HEAD"],
                    capture_output=True,
                    text=True,
                    check=True,
                    env=git_env(),
                ).stdout
                stored[how] = head.split("\n")[0]  # the tree: the same files, the same id
                assert "parent " not in head
    assert stored["one"] == stored["two"]


def count_objects(repo: Path) -> dict[str, int]:
    out = subprocess.run(
        ["git", "-C", str(repo), "count-objects", "-v"],
        capture_output=True,
        text=True,
        check=True,
        env=git_env(),
    ).stdout
    return {k: int(v) for k, v in (line.split(": ") for line in out.splitlines())}


@pytest.mark.parametrize("objects", ["loose", "packed"])
def test_a_commit_writes_its_objects_loose_or_as_one_pack(objects: str, tmp_path: Path) -> None:
    files = load_payload("submission").files
    dirs = {rel.rsplit("/", 1)[0] for rel in files if "/" in rel}
    dirs |= {d.rsplit("/", 1)[0] for d in dirs if "/" in d}
    expected = len(files) + len(dirs) + 1 + 1  # blobs, trees (and the root's), the commit
    with make_backend(f"git-cli[objects={objects}]") as backend:
        backend.ready(tmp_path)
        repo = tmp_path / "repo"
        backend.create(repo)
        backend.commit(repo, files, "m", tmp_path)
        assert backend.verify(repo, files) == []
        counts = count_objects(repo)
        if objects == "packed":
            assert (counts["count"], counts["in-pack"], counts["packs"]) == (0, expected, 1)
        else:
            assert (counts["count"], counts["in-pack"]) == (expected, 0)
            assert loose_objects(repo) == expected
        status = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain"],
            capture_output=True,
            env=git_env(),
            check=True,
        )
        assert status.stdout == b"", "the index matches the commit, as after git commit"


def test_p0008_payload_is_gits_500_unique_files() -> None:
    files = load_payload("p0008").files
    assert len(files) == 500 and len(set(files.values())) == 500
    assert sorted({rel.rsplit("/", 1)[0] for rel in files}) == sorted(
        f"files/dir{i}" for i in range(1, 11)
    )
    assert files["files/dir1/file1.txt"] == b"1112912053.1\n"
    assert files["files/dir10/file50.txt"] == b"1112912053.500\n"


def test_markus_layout_bare_clone_reflog_and_hook(tmp_path: Path) -> None:
    files = load_payload("submission").files
    with make_backend("git-markus") as backend:
        backend.ready(tmp_path)
        repo = tmp_path / "student"
        backend.create(repo)
        backend.commit(repo, files, "submission", tmp_path)
        assert backend.verify(repo, files) == []

        def git(where: Path, *args: str) -> str:
            return subprocess.run(
                ["git", "--git-dir", str(where), *args],
                capture_output=True,
                text=True,
                check=True,
                env=git_env(),
            ).stdout.strip()

        bare = bare_of(repo)
        assert git(bare, "config", "core.logAllRefUpdates") == "true"
        assert git(bare, "config", "gc.reflogExpire") == "never"
        assert git(bare, "config", "core.bare") == "true"
        # Two pushes (the first commit, the submission), each in the bare reflog.
        assert len(git(bare, "reflog", "show", "--format=%H", "refs/heads/master").split()) == 2
        assert git(bare, "rev-parse", "HEAD") == git(work_of(repo) / ".git", "rev-parse", "HEAD")
        assert git(bare, "show", "HEAD~1:.required.json").startswith("{")
        assert (bare / "hooks" / HOOK).is_symlink()
        # The push is what verify checks: a bare repository a commit behind fails it.
        behind = git(bare, "rev-parse", "HEAD~1")
        (bare / "refs" / "heads" / "master").write_text(behind + "\n")
        assert "the clone's HEAD is not the bare repository's" in " ".join(backend.verify(repo, {}))


@pytest.mark.parametrize(
    ("backends", "said"),
    [
        ("git-pygit2,svn-fs", "this run has no git row that flushes; add `git-pygit2[fsync=true]`"),
        ("git-pygit2,git-pygit2[fsync=true],svn-fs", "compare svn with the fsync rows"),
    ],
)
def test_markus2013s_note_points_at_fsync_rows_only_where_the_run_has_them(
    tmp_path: Path, backends: str, said: str
) -> None:
    table, _ = study(
        tmp_path, "markus2013", "--backends", backends, "--repos", "2", "--fs", f"dir:{tmp_path}"
    )
    assert said in table


def test_markus2013s_svn_git_ratios_are_by_block_with_their_intervals(tmp_path: Path) -> None:
    """The study's answer is a ratio between backends: they alternate in blocks, and each
    time ratio is the median of the block ratios with its interval."""
    from vcsbench.judge.paired import paired

    table, benches = study(
        tmp_path, "markus2013", "--backends", "git-pygit2,svn-fs", "--repos", "20",
        "--fs", f"dir:{tmp_path}",
    )  # fmt: skip
    from vcsbench.studies.markus2013 import OP_LABELS

    by = {(b.backend.name, b.op): b for b in benches}
    for op, label in OP_LABELS.items():
        svn, git = by[("svn-fs", op)], by[("git-pygit2", op)]
        blocks = [b.harness.interleaved for b in (svn, git)]
        assert blocks[0] is not None and blocks[1] is not None
        assert blocks[0].order_seed == blocks[1].order_seed
        found = paired(blocks[1].median_ms, blocks[0].median_ms)
        assert found is not None
        (row,) = [
            cells
            for line in table.splitlines()
            if line.startswith("| svn-fs / git-pygit2 ")
            for cells in [[c.strip() for c in line.split("|")[1:-1]]]
            if cells[1] == label
        ]
        assert f"{found.ratio:.2f}x [{found.low:.2f}–{found.high:.2f}]" == row[2]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["markus2011", "--profile", "floppy"], "--profile 'floppy' is not a storage profile; "
         "use one of hdd, sata-ssd, cloud-ssd, usb-stick"),
        (["markus2011", "--profile", "hdd", "--fs", "tmpfs"], "profile= limits a block device"),
        (["markus2011", "--profile", "hdd", "--fs", "ext4:write-iops=100"],
         "--profile hdd and --fs ext4:write-iops=100 both set storage limits; give one"),
        (["markus2011", "--students", "0"], "--students 0 must be 1 or more"),
        (["markus2013", "--students", "5"],
         "--students are for load studies (markus2011, ghe2015)"),
    ],
)  # fmt: skip
def test_a_bad_profile_or_student_count_is_one_line(argv: list[str], message: str) -> None:
    result = vcsbench("study", *argv)
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert message in line


def test_a_profile_joins_each_spec_and_a_throttled_markus2011_runs_its_own_steps() -> None:
    from vcsbench.sandbox.spec import with_option
    from vcsbench.studies import LOAD_STUDIES
    from vcsbench.studies.base import _plan

    assert "ext4:size=8G,profile=hdd,xfs:profile=hdd" == with_option(
        "ext4:size=8G,xfs", "profile=hdd"
    )
    study = LOAD_STUDIES["markus2011"]
    plain = _plan(study, "closed", study.paths, "ext4:size=8G", 8.0, 800)
    assert (1, 2, 4, 8, 16, 32, 64, 128) == tuple(plain.steps) and 0 == plain.step_ops
    throttled = _plan(study, "closed", study.paths, "ext4:size=8G,profile=hdd", 5.0, 40)
    assert (1, 4, 16) == tuple(throttled.steps) and 16 == throttled.step_ops
    assert 40 == throttled.students
    assert (2,) == tuple(_plan(study, "open", study.paths, "ext4:profile=hdd", 5.0, 40).steps)


def test_markus2011_sets_the_2011_account_beside_its_top_step() -> None:
    from vcsbench.results import read
    from vcsbench.studies.markus2011 import account

    load = read(REPO / "results" / "reference" / "markus2011.json.gz").load
    assert load is not None
    lines = account(load.paths)
    top = [entry.steps[-1] for entry in load.paths]
    iowait = lines[4].split("|")[3:-1]
    assert [f"{s.system['iowait_pct_mean']:.0f} %" for s in top] == [c.strip() for c in iowait]
    p95 = lines[5].split("|")[3:-1]
    assert [f"{s.p95_ms / 1000:,.1f} s" for s in top] == [c.strip() for c in p95]
    assert "| 30-50 % |" in lines[4] and "| 20 s |" in lines[5]


@pytest.mark.parametrize("name", ["git-pygit2", "svn-fs"])
def test_a_backend_that_changes_commit_makes_its_first_revision_through_it(
    name: str, tmp_path: Path
) -> None:
    """The one-request shortcut is git-pygit2's and svn-fs's own: a subclass that changes
    create or commit (a user's backend, git-markus) is not passed by."""
    from vcsbench.backends import REGISTRY
    from vcsbench.backends.files import Files

    calls: list[str] = []

    class Counted(REGISTRY[name]):  # type: ignore[misc]
        def commit(self, path: Path, files: Files, message: str, scratch: Path) -> None:
            calls.append(message)
            super().commit(path, files, message, scratch)

    with Counted() as backend:
        backend.ready(tmp_path)
        backend.create_commit(tmp_path / "r", {"a.txt": b"a"}, "first", tmp_path)
        assert backend.verify(tmp_path / "r", {"a.txt": b"a"}) == []
    assert ["first"] == calls


def run_on_short_history(study: Any, tmp_path: Path) -> Any:
    """A study's variants and operations run on a 60-commit synthetic history (its own
    history takes minutes to replay): the run, read back."""
    out = tmp_path / f"{study.name}.json"
    result = vcsbench(
        *run_args("3", study.backends, study.ops, "history:synthetic:60", fs=f"dir:{tmp_path}",
                   out=out),
        env={"VCSBENCH_CORPUS": str(tmp_path / "corpus")},
    )  # fmt: skip
    assert 0 == result.returncode, result.stdout[-3000:] + result.stderr
    return read(out)


def test_git_walk_studies_set_gits_published_figures_beside_this_runs(tmp_path: Path) -> None:
    """commit-graph's and bitmaps' tables, on a run of their variants and operations on a
    short synthetic history (the studies' own is 10,000 commits): each variant's time
    against the one without, the published seconds and ratio beside it."""
    from vcsbench.studies.git_walks import BITMAPS, COMMIT_GRAPH

    graph = {"topo-log": ("8.31", "0.94", "0.11x"), "rev-list": ("5.89", "1.07", "0.18x")}
    for study, published in (
        (COMMIT_GRAPH, graph),
        (BITMAPS, {"objects": ("44.10", "5.40", "0.12x")}),
    ):
        run = run_on_short_history(study, tmp_path)
        tables = study.tables([run])
        for op, (without, with_, ratio_) in published.items():
            base, other = [b for b in run.benchmarks if b.op == op]
            table = next(t for key, t in tables.items() if f"/{op}/" in key)
            cols = headers(table)
            cells = {r[0]: dict(zip(cols, r, strict=True)) for r in rows(table).values()}
            assert cells[base.label]["published s"] == without
            assert cells[other.label]["published s"] == with_
            assert cells[other.label]["published ratio"] == ratio_
            assert cells[other.label]["time ratio"] == time_ratio(median_ms(other), median_ms(base))
            assert "0" == cells[base.label]["errors"] == cells[other.label]["errors"]
            assert study.source.split(" (")[0] in table and "Linux" in table


def test_fsfs_format_sets_format_7s_speedup_beside_the_quoted_one(tmp_path: Path) -> None:
    """fsfs-format's table on a run of its variants on a short synthetic history: format
    7's speed-up (format 6's median over its own) beside the quoted one for a warm cache."""
    from vcsbench.studies.fsfs_format import STUDY

    run = run_on_short_history(STUDY, tmp_path)
    (table,) = STUDY.tables([run]).values()
    f6, f7 = run.benchmarks
    cols = headers(table)
    cells = {r[0]: dict(zip(cols, r, strict=True)) for r in rows(table).values()}
    assert cells[f7.label]["format 7 speed-up"] == ratio(median_ms(f6), median_ms(f7))
    assert cells[f7.label]["quoted speed-up"] == "0.82x"
    assert cells[f6.label]["quoted speed-up"] == "—"
    assert "warm cache" in table and "--cache cold --profile usb-stick" in table
    assert "0" == cells[f6.label]["errors"] == cells[f7.label]["errors"]


@pytest.mark.parametrize("study", ["markus2011", "ghe2015"])
def test_a_benchmark_option_given_to_a_load_study_is_refused_not_ignored(study: str) -> None:
    result = vcsbench("study", study, "--age", "5", "--repos", "3", "--kept", "all")
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(
        f"vcsbench: error: --age, --kept, --repos: for benchmark studies; {study}"
    )
    assert "takes --paths, --students, --step-seconds, --fs, --profile, --out, --name" in line


def test_the_distance_studys_own_stand_ins_are_not_reported_as_skips() -> None:
    """The study asks for clone and checkout so that each VCS runs the one it has (svn's
    checkout is its clone; a remote git or hg clones): before, that printed 20 "skipped"
    lines first. A clone asked alone on svn is still said to be skipped."""
    from vcsbench.bench.selection import Selection
    from vcsbench.studies.distance import STUDY

    where = {"payloads": "hello", "fs": "dir:/tmp"}
    study = Selection.parse(backends=STUDY.backends, ops=STUDY.ops, **where)
    assert study.unsupported() == []
    alone = Selection.parse(backends="svn-cli,git-cli", ops="clone", **where)
    assert alone.unsupported() == ["svn-cli × clone: skipped, svn-cli has no clone"]


def test_every_access_path_of_the_distance_study_reads_in_words() -> None:
    """A path the study does not run by default (``--backends git-cli[remote=...]``) is
    named by what its transport is, not by its variant's spelling."""
    from vcsbench.servers.transports import TRANSPORTS
    from vcsbench.studies.distance import path_label

    assert "svn over DAV, HTTP (Apache, mod_dav_svn)" == path_label("svn-cli", "apache-svn")
    assert "git over smart HTTPS (Apache, mod_ssl)" == path_label("git-cli", "apache-git-https")
    labels = set()
    for name, transport in TRANSPORTS.items():
        label = path_label(f"{transport.vcs}-cli", name)
        assert "[" not in label and label.startswith(transport.vcs + " over "), label
        labels.add(label)
    assert len(TRANSPORTS) == len(labels)  # no two read alike


def test_the_distance_study_runs_the_transports_remote_students_use() -> None:
    """HTTPS where a server speaks HTTP (svn's DAV, git's smart HTTP, hgweb), SSH for git,
    and svnserve; each at four distances."""
    from vcsbench.studies.distance import VARIANTS

    remotes = {v.split("remote=")[1].split(",")[0] for v in VARIANTS.split("],")}
    assert {
        "apache-svn-https",
        "svnserve",
        "apache-git-https",
        "git-ssh",
        "apache-hg-https",
    } == remotes
    assert 20 == len(VARIANTS.split("],"))


def test_the_distance_studys_answer_ranks_the_paths_by_their_round_trips_first() -> None:
    """Read from the reference run (data): per operation, the paths by slope, most first,
    each with its interval, placed before everything else the study prints."""
    from vcsbench.results import read
    from vcsbench.studies.base import ANSWER
    from vcsbench.studies.distance import STUDY

    tables = STUDY.tables([read(REPO / "results/reference/distance.json.gz")])
    assert next(iter(tables)) == ANSWER
    lines = [line for line in tables[ANSWER].splitlines() if line.startswith("- ")]
    assert [line.split(": ")[0] for line in lines] == [
        "- clone (svn", "- update", "- commit sent",
    ]  # fmt: skip
    for line in lines:
        slopes = [float(part.split(" [")[0].rsplit(" ", 1)[1]) for part in line.split("; ")]
        assert slopes == sorted(slopes, reverse=True) and len(slopes) == 5
    assert lines[2].startswith("- commit sent: hg over HTTPS (hgweb, mod_ssl) 9.48 [7.81–11.15]")


def test_a_load_study_prints_the_disk_answer_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The study's text opens with what the device did per submission on each path and
    what the deadline asks of it, before what ran and the study's own tables."""
    from vcsbench.results import read
    from vcsbench.studies import LOAD_STUDIES, base

    closed = read(REPO / "results" / "reference" / "markus2011.json.gz")
    opened = read(REPO / "results" / "reference" / "markus2011-open.json.gz")
    runs = iter([closed, opened])
    monkeypatch.setattr(base, "run_load", lambda plan, out, command: next(runs))
    study = LOAD_STUDIES["markus2011"]
    text = base.run_load_study(study, tmp_path / "m.json", None, "ext4", None)
    lines = text.splitlines()
    assert lines[0].startswith("# markus2011: 800 students")
    answer = lines.index("## The disk answer")
    assert answer < 5 and answer < lines.index(next(x for x in lines if x.startswith("Results:")))
    rows = [x.split("|")[1].strip() for x in lines[answer : answer + 12] if x.startswith("|")]
    assert {"local:svn-fs", "svnserve", "apache-svn", "apache-git"} < set(rows)
    plan = next(i for i, x in enumerate(lines) if x.startswith("Capacity plan: 10,000"))
    assert plan < 30
