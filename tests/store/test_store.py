"""The results store: result files in, a benchmark's series out, with the figures the
files hold; the same run once; a resumed run in place of its older copy; bad files and
bad stores refused in one line."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import sqlite3
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, canary_beside, edited_result, run_args, scale_times, vcsbench
from postgres import database, server

from vcsbench.errors import VcsbenchError
from vcsbench.results import read
from vcsbench.results.io import read_whole
from vcsbench.results.layout import run_facts
from vcsbench.store.store import Store, result_files

TINY = REPO / "tests" / "data" / "tiny-ext4.json"
GIT = "git-pygit2 create+commit hello ext4:size=256M"


@pytest.fixture(scope="module")
def postgres_server() -> Iterator[str]:
    with server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store of the test's own: a SQLite file, and a database on a PostgreSQL server the
    tests started."""
    if request.param == "sqlite":
        return str(tmp_path / "store.sqlite")
    return database(request.getfixturevalue("postgres_server"))


def later(tmp_path: Path, name: str, factor: float, day: int, run_id: str = "") -> Path:
    """The frozen run again on day ``day`` of the month, every round ``factor`` times as
    long, with a canary of 2 ms and a run id of its own."""

    def edit(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        document["datetime"] = f"2026-12-{day:02d}T10:00:00+00:00"
        run_facts(document)["run_id"] = run_id or f"run-{name}"
        for bench in benches:
            scale_times(bench, factor)
            canary_beside(bench, 2.0)

    return Path(edited_result(TINY, tmp_path / f"{name}.json", edit))


def median_of(path: Path, case: str) -> float:
    bench = next(b for b in read(path).benchmarks if b.case == case)
    assert bench.median_ms is not None
    return bench.median_ms


def test_a_series_holds_each_runs_median_oldest_first(tmp_path: Path, spec: str) -> None:
    files = [later(tmp_path, n, f, d) for n, f, d in (("b", 1.2, 9), ("a", 1.0, 2))]
    with Store(spec, writing=True) as store:
        assert store.add(files[0], read_whole(files[0])).new  # as a run's end read it
        assert store.add(files[1]).new
        assert not store.add(files[0]).new  # the same bytes again
        assert store.counts() == (2, 2, 1)
        (series,) = list(store.series("git-pygit2 create+commit"))
    assert series.benchmark.startswith(GIT + " (ext4 ")
    assert [p.started[:10] for p in series.points] == ["2026-12-02", "2026-12-09"]
    expected = [median_of(files[1], GIT), median_of(files[0], GIT)]
    assert [p.median_ms for p in series.points] == pytest.approx(expected)
    assert expected[1] / expected[0] == pytest.approx(1.2, rel=1e-3)
    assert [p.canary_ms for p in series.points] == [2.0, 2.0]
    # each round over the canary after it (2 ms; its writes 0.6 ms), the median of those
    assert [p.per_canary for p in series.points] == pytest.approx([m / 2 for m in expected])
    assert [p.per_writes for p in series.points] == pytest.approx([m / 0.6 for m in expected])
    assert series.machine.startswith("vm, ")


def test_a_resumed_run_replaces_its_older_copy(tmp_path: Path, spec: str) -> None:
    """The same file, resumed (its run id, machine and path, other bytes): the newer copy
    replaces the older one's points."""
    first = later(tmp_path, "first", 1.0, 3, run_id="same")
    with Store(spec, writing=True) as store:
        store.add(first)
        again = later(tmp_path, "first", 1.5, 3, run_id="same")
        assert store.add(again).new
        assert store.counts()[0] == 1
        (series,) = list(store.series("git-pygit2"))
    assert [p.median_ms for p in series.points] == pytest.approx([median_of(again, GIT)])


def test_store_add_and_history_from_the_command_line(tmp_path: Path, spec: str) -> None:
    results = tmp_path / "results"
    results.mkdir()
    for name, factor, day in (("r1", 1.0, 1), ("r2", 1.1, 2), ("r3", 1.3, 3)):
        later(results, name, factor, day)
    (results / "notes.txt").write_text("not a result")
    store = spec
    added = vcsbench("store", "add", "--store", store, str(results))  # as its messages say it
    assert 0 == added.returncode, added.stderr
    assert "added 3 run(s) (6 benchmark(s)); 0 already there; 0 refused" in added.stdout
    one = vcsbench("history", "git-pygit2 create+commit", "--store", store)
    assert 0 == one.returncode, one.stderr
    rows = [line for line in one.stdout.splitlines() if line.startswith("| ") and "2026" in line]
    assert len(rows) == 3
    medians = [median_of(results / f"r{i}.json", GIT) for i in (1, 2, 3)]
    for row, median in zip(rows, medians, strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert float(cells[2]) == pytest.approx(median, rel=0.01)
        assert (cells[3], float(cells[4])) == ("2.00", pytest.approx(median / 2, rel=0.01))
    # The same series as a sheet: the same medians, in the same order
    sheet = vcsbench("history", "git-pygit2 create+commit", "--store", store, "--format", "csv")
    assert 0 == sheet.returncode, sheet.stderr
    table = list(csv.reader(sheet.stdout.splitlines()))
    assert table[0][:3] == ["run", "started (UTC)", "median ms"]
    assert [float(row[2]) for row in table[1:]] == pytest.approx(medians, rel=0.01)
    every = vcsbench("history", "--store", store, "--json")
    found = json.loads(every.stdout)
    assert len(found) == 2 and all(len(s["points"]) == 3 for s in found)
    assert statistics.mean(len(s["points"]) for s in found) == 3


def test_bad_files_and_bad_stores_are_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    store = tmp_path / "s.sqlite"
    result = vcsbench("store", "add", str(broken), "--store", str(store))
    assert 1 == result.returncode
    assert "1 refused" in result.stdout and "refused: " in result.stdout
    not_a_store = tmp_path / "other.sqlite"
    not_a_store.write_text("plain text, not a database " * 100)
    with pytest.raises(VcsbenchError, match="not a vcsbench store"):
        Store(not_a_store, writing=True)
    older = tmp_path / "older.sqlite"
    Store(older, writing=True).close()
    with sqlite3.connect(older) as db:
        db.execute("UPDATE vcsbench_meta SET value = '1' WHERE key = 'version'")
    with pytest.raises(
        VcsbenchError, match=r"store version 1, this vcsbench reads 3; .* store add"
    ):
        Store(older)
    missing = vcsbench("history", "--store", str(tmp_path / "nowhere.sqlite"))
    assert 2 == missing.returncode and "no store there yet" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    with pytest.raises(VcsbenchError, match="links are not followed"):
        result_files([link])


def test_a_file_naming_a_benchmark_twice_is_not_added(tmp_path: Path, spec: str) -> None:
    def twice(document: dict[str, Any], benches: list[dict[str, Any]]) -> None:
        document["benchmarks"].append(json.loads(json.dumps(document["benchmarks"][0])))

    path = Path(edited_result(TINY, tmp_path / "twice.json", twice))
    with Store(spec, writing=True) as store:
        with pytest.raises(VcsbenchError, match="names one benchmark twice"):
            store.add(path)
        assert store.counts() == (0, 0, 0)


def test_a_load_runs_steps_are_series_one_per_access_path_and_level(
    tmp_path: Path, spec: str
) -> None:
    """The reference deadline load (5 access paths, 10 closed-loop steps each): a series
    per path and level, each point the step's median session latency, its sessions and
    the server's CPU per session, as the file has them."""
    reference = REPO / "results" / "reference" / "markus2011.json.gz"
    load = read(reference).load
    assert load is not None
    with Store(spec, writing=True) as store:
        assert store.add(reference).benchmarks == sum(len(p.steps) for p in load.paths)
        found = {s.benchmark: s for s in store.series("load deadline closed")}
    path = next(p for p in load.paths if p.path == "apache-svn")
    step = next(s for s in path.steps if s.level == 16)
    (series,) = [
        s
        for name, s in found.items()
        if name.startswith("load deadline closed: apache-svn at 16 clients")
    ]
    (point,) = series.points
    assert point.median_ms == pytest.approx(step.latency_ms["p50"])
    assert point.repos == step.sessions
    assert point.cpu_ms == pytest.approx(step.server_cpu_s * 1000 / step.sessions)
    assert point.errors == sum(step.errors.values())


def test_a_server_paths_series_carries_its_servers_package_versions(
    tmp_path: Path, spec: str
) -> None:
    """A server path has no library of the machine's to name: its series is kept apart by
    the packages its server was made of, as the run recorded them; a file's entry that is
    not text is left out."""
    import gzip

    reference = REPO / "results" / "reference" / "markus2011.json.gz"
    document = json.loads(gzip.decompress(reference.read_bytes()))
    (entry,) = [e for e in document["vcsbench_load"]["loads"] if e["path"] == "apache-svn"]
    entry["server"]["versions"] = {
        "apache2": "2.4.71-1~deb12u1", "libapache2-mod-svn": "1.14.2-4+deb12u1", "x": 7,
    }  # fmt: skip
    edited = tmp_path / "load.json"
    edited.write_text(json.dumps(document))
    with Store(spec, writing=True) as store:
        store.add(edited)
        found = {s.benchmark: s for s in store.series("load deadline closed: apache-svn")}
    (series,) = [s for name, s in found.items() if " at 16 clients" in name]
    (point,) = series.points
    assert point.versions == "apache2 2.4.71-1~deb12u1, libapache2-mod-svn 1.14.2-4+deb12u1"


def test_a_store_password_is_never_written_or_printed(tmp_path: Path, postgres_server: str) -> None:
    """A ``postgresql://user:PASSWORD@…`` store: the password is in neither the result
    file's command, nor the report, nor the shared store's command column, nor any line
    printed; ``?password=`` in a failing URL is masked too."""
    url = database(postgres_server).replace("://postgres@", "://postgres:s3cret-pw@")
    out = tmp_path / "run.json"
    ran = vcsbench(
        *run_args("2", fs=f"dir:{tmp_path}", out=out), "--progress", "none", "--store", url
    )
    assert 0 == ran.returncode, ran.stdout[-1500:] + ran.stderr
    report = vcsbench("report", str(out))
    import psycopg

    with psycopg.connect(url) as db:
        ((command,),) = db.execute("SELECT command FROM vcsbench_runs").fetchall()
    for text in (ran.stdout, ran.stderr, out.read_text(), report.stdout, command):
        assert "s3cret" not in text
    assert "postgres:***@" in command
    failing = "postgresql://postgres@127.0.0.1:1/x?password=s3cret-q&sslpassword=s3cret-s"
    refused = vcsbench("history", "--store", failing)
    assert 2 == refused.returncode
    assert "s3cret" not in refused.stdout + refused.stderr
    assert "password=***" in refused.stderr


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql://u:p@h/db", "postgresql://u:***@h/db"),
        ("postgres://u:p%40w@h:5/db?sslmode=require", "postgres://u:***@h:5/db?sslmode=require"),
        ("postgresql://u@h/db?password=p&x=1", "postgresql://u@h/db?password=***&x=1"),
        ("--store 'host=h password=p user=u'", "--store 'host=h password=*** user=u'"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
    ],
)
def test_a_password_is_masked_in_every_form(text: str, shown: str) -> None:
    from vcsbench.errors import without_secrets

    assert shown == without_secrets(text)


def test_a_file_carrying_another_runs_id_is_refused_and_that_run_kept(
    tmp_path: Path, spec: str
) -> None:
    """A copy of a run's file elsewhere with other figures (copied, edited, another host):
    refused in one line naming the run it collides with; that run's points stay."""
    first = later(tmp_path, "first", 1.0, 3, run_id="same")
    copy = later(tmp_path, "copy", 1.5, 3, run_id="same")
    with Store(spec, writing=True) as store:
        store.add(first)
        with pytest.raises(VcsbenchError, match="carries the run id same of another run"):
            store.add(copy)
        (series,) = list(store.series("git-pygit2"))
    assert [p.median_ms for p in series.points] == pytest.approx([median_of(first, GIT)])
    added = vcsbench("store", "add", str(copy), "--store", spec)
    assert 1 == added.returncode
    assert "refused: " in added.stdout and "first.json" in added.stdout


def planted_store(tmp_path: Path, column: str, value: object) -> Path:
    """A store of two real runs with one point's ``column`` set to ``value``."""
    path = tmp_path / "planted.sqlite"
    with Store(path, writing=True) as store:
        for name, factor, day in (("a", 1.0, 2), ("b", 1.1, 3)):
            store.add(later(tmp_path, name, factor, day))
    with sqlite3.connect(path) as db:
        table = "vcsbench_runs" if column in ("machine", "path") else "vcsbench_points"
        db.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = 1", (value,))
    return path


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("median_ms", "fast", "median_ms 'fast' is not a number"),
        ("median_ms", -3.0, "median_ms -3.0 is not a number from 0"),
        ("median_ms", float("inf"), "median_ms inf is not a number"),
        ("canary_ms", 1e300, "canary_ms 1e+300 is not a number from 0 to 1e+12"),
        ("repos", "many", "repos 'many' is not a whole number"),
        ("errors", -1, "errors -1 is not a whole number from 0"),
        ("started", "yesterday", "started 'yesterday' is not a date and time"),
        ("started", 7, "started '7' is not a date and time"),
        (
            "benchmark",
            "create\x1b]0;pwned\x07",
            "benchmark 'create\\x1b]0;pwned\\x07' is not printable",
        ),
        ("machine", "vm\x1b[2J", "machine 'vm\\x1b[2J' is not printable"),
        ("busy", "x" * 5000, "busy 'xxxxxxx"),
    ],
)
def test_a_crafted_row_is_one_line_in_history_and_compare(
    tmp_path: Path, column: str, value: object, message: str
) -> None:
    """Rows are checked as result files are: a wrong type, a value out of range or a
    terminal escape is one line naming the column, exit 2; no escape reaches the screen.
    compare reads the earlier points of its series that ran clean (no errors, not busy)."""
    store = planted_store(tmp_path, column, value)
    base, other = later(tmp_path, "c1", 1.0, 4), later(tmp_path, "c2", 1.0, 5)
    readers = [
        ("history", "--store", str(store)),
        ("history", "create", "--store", str(store), "--json"),
    ]
    if column in ("median_ms", "canary_ms", "repos"):
        readers.append(("compare", str(base), str(other), "--store", str(store)))
    for argv in readers:
        result = vcsbench(*argv)
        assert 2 == result.returncode, (argv, result.stdout[-800:], result.stderr)
        (line,) = result.stderr.strip().splitlines()
        assert message in line, line
        assert "\x1b" not in result.stdout + result.stderr


def test_reading_commands_open_the_store_read_only(tmp_path: Path) -> None:
    """history, compare and store info read a store the user may only read, and never
    make a schema: not in a missing file, not in another program's database."""
    store = planted_store(tmp_path, "errors", 0)
    store.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        shown = vcsbench("history", "--store", str(store))
        info = vcsbench("store", "info", "--store", str(store))
    finally:
        tmp_path.chmod(0o755)
    assert 0 == shown.returncode, shown.stderr
    assert 0 == info.returncode and "2 runs" in info.stdout, info.stderr
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE accounts (id INTEGER, name TEXT)")
    before = other.read_bytes()
    for argv in (("history",), ("store", "info"), ("store", "add", str(store.parent / "a.json"))):
        result = vcsbench(*argv, "--store", str(other))
        assert 2 == result.returncode, (argv, result.stdout, result.stderr)
        assert "no vcsbench store in it (tables accounts)" in result.stderr
    assert before == other.read_bytes()
    missing = tmp_path / "missing.sqlite"
    assert 2 == vcsbench("store", "info", "--store", str(missing)).returncode
    assert not missing.exists()


def _server_processes(url: str) -> list[int]:
    """The postmaster of the test's server at ``url`` and every process it started."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        (data,) = db.execute("SELECT current_setting('data_directory')").fetchone() or ("",)
    postmaster = int(Path(data, "postmaster.pid").read_text().split()[0])
    children = [
        int(p.name)
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and _parent(p) == postmaster
    ]
    return [postmaster, *children]


def _parent(proc: Path) -> int:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def test_a_stalled_server_is_one_line_within_the_statement_limit(
    postgres_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stops answering mid-use (every process of it stopped): a statement
    ends at the limit (1 s here, plus the watchdog's 5) with one line; connecting to it
    then ends at the connection's."""
    import signal
    import time

    from vcsbench.store import db as store_db

    monkeypatch.setattr(store_db, "STATEMENT_S", 1)
    url = database(postgres_server)
    db = store_db.connect(url, writing=True)
    stopped = _server_processes(url)
    try:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises(store_db.StoreError, match="did not answer within 1 s"):
            db.execute("SELECT 1")
        assert time.monotonic() - started < 15
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        db.close()


def test_a_full_disk_under_the_store_says_so_and_stops(root: None, tmp_path: Path) -> None:
    """A store on a filesystem that fills: one line saying the disk is full and how many
    files went in before it did, not "cannot rollback" for every file after it."""
    import subprocess

    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "none", str(small)], check=True)
    try:
        results = tmp_path / "results"
        results.mkdir()
        for day in range(1, 61):
            later(results, f"r{day:02d}", 1.0 + day / 100, day % 28 + 1)
        added = vcsbench("store", "add", str(results), "--store", str(small / "s.sqlite"))
    finally:
        subprocess.run(["umount", str(small)], check=True)
    assert 2 == added.returncode, added.stdout + added.stderr
    (line,) = added.stderr.strip().splitlines()
    assert "the disk that holds the store is full" in line
    assert re.search(r"added \d+ of 60 file\(s\) before it filled", line), line
    assert "rollback" not in added.stdout + added.stderr


def test_a_store_of_version_2_is_read_and_gains_the_counts_column_when_added_to(
    tmp_path: Path,
) -> None:
    """A store made before points kept their counts: read-only, its points count nothing;
    opened to add to, it gains the column and the version, its points kept."""
    store = tmp_path / "v2.sqlite"
    Store(store, writing=True).close()
    with sqlite3.connect(store) as db:
        db.execute("ALTER TABLE vcsbench_points DROP COLUMN counts")
        db.execute("UPDATE vcsbench_meta SET value = '2' WHERE key = 'version'")
    with Store(store) as read:
        assert [] == list(read.series())
    with Store(store, writing=True) as written:
        assert written.counts() == (0, 0, 0)
    with sqlite3.connect(store) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(vcsbench_points)")]
        version = db.execute("SELECT value FROM vcsbench_meta WHERE key = 'version'").fetchone()
    assert "counts" in columns and version == ("3",)


def test_doctor_spreads_runs_stay_out_of_the_store_unless_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The spread's runs are written where it deletes them afterwards: each is run with
    --store none, so no store indexes a file that is gone; with --keep they stay, and are
    stored as any run is."""
    from vcsbench import process
    from vcsbench.bench import spread

    asked: list[list[str]] = []

    def child(argv: list[str], capture: bool = False) -> process.Child:
        asked.append(argv)
        return process.Child(1, err="planted: stop after the first run")

    monkeypatch.setattr(process, "run_child", child)
    for keep in (None, tmp_path / "kept"):
        with pytest.raises(VcsbenchError, match="planted"):
            spread.measure_spread(3, ["--repos", "2"], keep=keep)
    deleted, kept = asked
    assert deleted[-2:] == ["--store", "none"]
    assert "--store" not in kept
