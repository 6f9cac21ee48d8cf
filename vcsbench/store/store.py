"""The results store: an index over result files, for a benchmark's figures over time.

Result files stay the unit of exchange and the whole record; the store keeps, per run,
where its file was and the SHA-256 of its bytes, and per benchmark the few figures a
series needs (median, canary, CPU, errors, busy) with the versions it ran. A **series** is
one benchmark on one machine: the machine is a fingerprint of what makes it that machine
(host name, CPU model and count, memory to the GiB, kernel), and the benchmark includes
its filesystem's mount options; so a new machine or a new kernel starts a new series and
is never read as a change of code. The versions of the libraries and tools a run used
are kept beside each point, not in the key: they are what a series is there to watch.

SQLite (the standard library's) in one file: by default ``store.sqlite`` in vcsbench's
data directory (:func:`vcsbench.results.calibration.data_dir`); or the same schema on a
PostgreSQL server a team's machines share (``--store postgresql://...``;
:mod:`vcsbench.store.db`). Several processes may add at once (each file in one
transaction). Nothing read from a result file is run: its values are bound as
parameters.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.results.calibration import data_dir
from vcsbench.results.io import Whole, read_whole
from vcsbench.store.db import StoreError, connect
from vcsbench.store.points import cut, machine_key, points_of, tail
from vcsbench.store.rows import POINT, Point, Series, head_of, point_of

STORE_VERSION = 3
"""3: each point keeps its counts per operation (``counts``); 2: its rounds over their
canary; 1 kept the canary's medians only. A store of 2 gains the column as it is opened
for adding (its points count nothing); read-only, it is read as having none."""
COUNTS_COLUMN = "ALTER TABLE vcsbench_points ADD COLUMN counts TEXT NOT NULL DEFAULT ''"

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS vcsbench_meta (
        key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS vcsbench_runs (
        digest TEXT PRIMARY KEY,
        run_key TEXT NOT NULL UNIQUE,
        path TEXT NOT NULL,
        started TEXT NOT NULL,
        machine_key TEXT NOT NULL,
        machine TEXT NOT NULL,
        command TEXT NOT NULL,
        vcsbench TEXT NOT NULL,
        imported TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS vcsbench_points (
        digest TEXT NOT NULL REFERENCES vcsbench_runs (digest),
        series TEXT NOT NULL,
        machine_key TEXT NOT NULL,
        benchmark TEXT NOT NULL,
        started TEXT NOT NULL,
        median_ms DOUBLE PRECISION,
        canary_ms DOUBLE PRECISION,
        canary_writes_ms DOUBLE PRECISION,
        per_canary DOUBLE PRECISION,
        per_writes DOUBLE PRECISION,
        cpu_ms DOUBLE PRECISION,
        repos INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        busy TEXT NOT NULL,
        versions TEXT NOT NULL,
        spread TEXT NOT NULL,
        counts TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (digest, series))""",
    """CREATE INDEX IF NOT EXISTS vcsbench_points_series
        ON vcsbench_points (series, started)""",
)


def default_path() -> Path:
    return data_dir() / "store.sqlite"


@dataclass(frozen=True)
class Added:
    path: str
    benchmarks: int
    new: bool
    """False: a file of the same bytes was in the store already."""


class Store:
    """One store, opened for adding and reading: a SQLite file's path, or a
    ``postgresql://`` URL (the same schema on a server a team shares)."""

    def __init__(self, spec: str | Path, writing: bool = False) -> None:
        """``writing``: to add to it (its schema made where it has none); else read-only,
        and a store that is not there, or has no vcsbench schema, is refused."""
        self._db = connect(spec, writing)
        self.where = self._db.where
        try:
            tables = self._db.tables()
            if "vcsbench_meta" not in tables and (tables or not writing):
                raise VcsbenchError(
                    f"--store {self.where}: no vcsbench store in it ("
                    + (f"tables {', '.join(sorted(tables)[:3])}" if tables else "no tables")
                    + "); give the file or database of a vcsbench store"
                )
            if writing:
                with self._db.transaction():
                    for statement in SCHEMA:
                        self._db.execute(statement)
                    self._db.execute(
                        "INSERT INTO vcsbench_meta (key, value) SELECT ?, ? WHERE NOT EXISTS "
                        "(SELECT 1 FROM vcsbench_meta WHERE key = ?)",
                        ("version", str(STORE_VERSION), "version"),
                    )
            found = self._db.execute("SELECT value FROM vcsbench_meta WHERE key = 'version'")
            if found and found[0][0] == "2" and writing:  # it gains the counts' column
                with self._db.transaction():
                    self._db.execute(COUNTS_COLUMN)
                    self._db.execute(
                        "UPDATE vcsbench_meta SET value = ? WHERE key = 'version'",
                        (str(STORE_VERSION),),
                    )
                found = [(str(STORE_VERSION),)]
        except StoreError as exc:
            self._db.close()
            raise VcsbenchError(
                f"--store {self.where}: not a vcsbench store ({exc.why}); give another"
            ) from None
        except BaseException:
            self._db.close()
            raise
        self._point = POINT
        if found and found[0][0] == "2":  # read-only: read as counting nothing
            self._point = POINT.replace("p.counts", "'' AS counts")
        elif not found or found[0][0] != str(STORE_VERSION):
            self._db.close()
            raise VcsbenchError(
                f"--store {self.where}: store version {str(found[0][0])[:20] if found else '?'}, "
                f"this vcsbench reads {STORE_VERSION}; the store is an index over result "
                "files: add them to a new one (vcsbench store add --store NEW FILE|DIR ...)"
            )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, path: Path, whole: Whole | None = None) -> Added:
        """A result file into the store (once: the same bytes again change nothing);
        ``whole``: the file as it was read already."""
        data, _, run = whole if whole is not None else read_whole(path)
        digest = hashlib.sha256(data).hexdigest()
        key, machine = machine_key(run)
        started = run.datetime or datetime.datetime.now(datetime.UTC).isoformat()
        rows = points_of(run, digest, key, started)
        run_key = cut(run.run_id) or digest
        where = cut(str(Path(path).resolve()))
        with self._db.transaction():
            held = self._db.execute(
                "SELECT digest, machine_key, path FROM vcsbench_runs WHERE run_key = ? OR "
                "digest = ?",
                (run_key, digest),
            )
            if any(row[0] == digest for row in held):
                return Added(str(path), len(rows), False)
            for _, older_machine, older_path in held:
                if (older_machine, older_path) != (key, where):
                    raise VcsbenchError(
                        f"{path}: carries the run id {run_key[:40]} of another run in the "
                        f"store ({tail(str(older_path))}"
                        + (", another machine" if older_machine != key else "")
                        + "); a run is replaced only by its own file, resumed: not added "
                        "(a copied or edited result file?)"
                    )
            for older, _, _ in held:  # the same run written again (resumed): this copy
                self._db.execute("DELETE FROM vcsbench_points WHERE digest = ?", (older,))
                self._db.execute("DELETE FROM vcsbench_runs WHERE digest = ?", (older,))
            self._db.execute(
                "INSERT INTO vcsbench_runs (digest, run_key, path, started, machine_key, "
                "machine, command, vcsbench, imported) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    digest,
                    run_key,
                    where,
                    started,
                    key,
                    machine,
                    cut(run.command),
                    cut(run.version),
                    datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                ),
            )
            if len({row[1] for row in rows}) < len(rows):
                raise VcsbenchError(f"{path}: names one benchmark twice; not added")
            self._db.executemany(
                "INSERT INTO vcsbench_points (digest, series, machine_key, benchmark, "
                "started, median_ms, canary_ms, canary_writes_ms, per_canary, per_writes, "
                "cpu_ms, repos, errors, busy, versions, spread, counts) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        return Added(str(path), len(rows), True)

    def counts(self) -> tuple[int, int, int]:
        """(runs, series, machines) in the store."""
        runs = self._db.execute("SELECT COUNT(*) FROM vcsbench_runs")[0][0]
        series = self._db.execute("SELECT COUNT(DISTINCT series) FROM vcsbench_points")[0][0]
        machines = self._db.execute("SELECT COUNT(DISTINCT machine_key) FROM vcsbench_runs")[0][0]
        return int(runs), int(series), int(machines)

    def series(self, match: str = "") -> Iterator[Series]:
        """Every series whose benchmark contains ``match`` (case-insensitive), each with
        its points oldest first."""
        query = (
            f"SELECT p.series, p.machine_key, r.machine, p.benchmark, {self._point} "
            "FROM vcsbench_points p JOIN vcsbench_runs r ON r.digest = p.digest "
            "WHERE lower(p.benchmark) LIKE ? ESCAPE '\\' ORDER BY p.series, p.started"
        )
        pattern = (
            "%" + match.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        )
        current: str | None = None
        head: tuple[str, str, str] = ("", "", "")
        points: list[Point] = []
        for number, row in enumerate(self._db.execute(query, (pattern,)), 1):
            where = f"--store {self.where}, row {number} of the series read"
            series, *rest = head_of(row[:4], where)
            if series != current:
                if current is not None:
                    yield Series(*head, tuple(points))
                current, head, points = series, (rest[0], rest[1], rest[2]), []
            points.append(point_of(row[4:], f"{where} ({series[:60]})"))
        if current is not None:
            yield Series(*head, tuple(points))

    def earlier(self, series: str, before: str, versions: str, most: int) -> list[Point]:
        """The last ``most`` points of ``series`` started before ``before`` with these
        versions, on a machine not busy and with every round ok, oldest first."""
        rows = self._db.execute(
            f"SELECT {self._point} FROM vcsbench_points p "
            "JOIN vcsbench_runs r ON r.digest = p.digest "
            "WHERE p.series = ? AND p.started < ? AND p.versions = ? AND p.busy = '' "
            "AND p.errors = 0 ORDER BY p.started DESC LIMIT ?",
            (series, before, versions, most),
        )
        where = f"--store {self.where}, an earlier point of {series[:60]}"
        return [point_of(row, where) for row in reversed(rows)]


def result_files(paths: list[Path], most: int = 1_000_000) -> list[Path]:
    """The result files among ``paths``: files as given, directories searched for
    ``*.json`` and ``*.json.gz`` (links not followed); at most ``most``."""
    found: list[Path] = []
    for path in paths:
        if path.is_symlink() or not path.exists():
            raise VcsbenchError(f"{path}: no such file or directory (links are not followed)")
        if path.is_file():
            found.append(path)
            continue
        for top, dirs, names in os.walk(path):  # links to directories are not followed
            dirs.sort()
            for name in sorted(names):
                item = Path(top) / name
                if name.endswith((".json", ".json.gz")) and not item.is_symlink():
                    found.append(item)
            if len(found) > most:
                raise VcsbenchError(f"{path}: more than {most:,} files; add fewer at once")
    return found


def to_json(series: Series) -> dict[str, Any]:
    return {
        "machine_key": series.machine_key,
        "machine": series.machine,
        "benchmark": series.benchmark,
        "points": [{k: v for k, v in p.__dict__.items() if k != "spread"} for p in series.points],
    }


def dumps(found: list[Series]) -> str:
    return json.dumps([to_json(s) for s in found], indent=1, allow_nan=False)
