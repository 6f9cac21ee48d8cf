"""The two databases a results store lives in, behind one small interface: SQLite (the
standard library's, a file) and PostgreSQL (psycopg 3, a server a team shares). The
store's SQL is written once, with ``?`` for its parameters; every value is bound, never
spliced into the text."""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from vcsbench.errors import VcsbenchError, without_secrets

POSTGRES = re.compile(r"^postgres(ql)?://", re.IGNORECASE)


class StoreError(VcsbenchError):
    """A database that failed, in one line; ``why``: its driver's first line."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


class Database(Protocol):
    where: str
    """The store as a person names it (a path, or the URL without its password)."""
    errors: tuple[type[BaseException], ...]
    """What its driver raises for a database that fails."""

    def transaction(self) -> contextlib.AbstractContextManager[None]: ...
    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...
    def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None: ...
    def close(self) -> None: ...


class SqliteDb:
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)

    def __init__(self, path: Path) -> None:
        self.where = str(path)
        if path.exists() and not path.is_file():
            raise VcsbenchError(f"--store {path}: not a file; give a file path for the store")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=60, isolation_level=None)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        self.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with failed(self):
            return self._db.execute(sql, tuple(params)).fetchall()

    def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with failed(self):
            self._db.executemany(sql, rows)

    def close(self) -> None:
        self._db.close()


@contextlib.contextmanager
def failed(db: Database) -> Iterator[None]:
    """A database error as one line naming the store (a file another vcsbench made, a
    server that went away), not a traceback."""
    try:
        yield
    except db.errors as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise StoreError(
            f"--store {db.where}: the database failed ({first}); a store made by another "
            "version of vcsbench is not this one's: give another --store",
            first,
        ) from None


def shown_url(url: str) -> str:
    """A PostgreSQL URL without its password (in its user part or as ``?password=``)."""
    return without_secrets(url)


class PostgresDb:
    def __init__(self, url: str) -> None:
        self.where = shown_url(url)
        try:
            import psycopg
        except ImportError:
            raise VcsbenchError(
                f"--store {self.where}: PostgreSQL needs psycopg; pip install 'psycopg[binary]'"
            ) from None
        self.errors: tuple[type[BaseException], ...] = (psycopg.Error,)
        try:
            self._db = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise VcsbenchError(f"--store {self.where}: cannot connect ({first})") from None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with failed(self), self._db.transaction():
            yield

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with failed(self):
            cursor = self._db.execute(self._sql(sql), tuple(params))
            return cursor.fetchall() if cursor.description is not None else []

    def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with failed(self), self._db.cursor() as cursor:
            cursor.executemany(self._sql(sql), rows)

    def close(self) -> None:
        self._db.close()


def connect(spec: str | Path) -> Database:
    """The database ``spec`` names: a ``postgresql://`` URL, else a SQLite file's path."""
    if isinstance(spec, str) and POSTGRES.match(spec):
        return PostgresDb(spec)
    return SqliteDb(Path(spec))
