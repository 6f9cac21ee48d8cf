"""The two databases a results store lives in, behind one small interface: SQLite (the
standard library's, a file) and PostgreSQL (psycopg 3, a server a team shares). The
store's SQL is written once, with ``?`` for its parameters; every value is bound, never
spliced into the text."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

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
    def tables(self) -> set[str]: ...
    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...
    def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None: ...
    def close(self) -> None: ...


class SqliteDb:
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)

    def __init__(self, path: Path, writing: bool) -> None:
        self.where = str(path)
        if path.exists() and not path.is_file():
            raise VcsbenchError(f"--store {path}: not a file; give a file path for the store")
        if writing:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=60, isolation_level=None)
            return
        if not path.is_file():
            raise VcsbenchError(
                f"--store {path}: no store there yet; runs add to it as they finish, or "
                "vcsbench store add RESULTS... fills it from result files"
            )
        # Read-only: nothing is created or changed, and a store the user may only read opens.
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        self._db = sqlite3.connect(uri, uri=True, timeout=60, isolation_level=None)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        self.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._db.in_transaction:  # SQLite ends it itself on some errors (a full disk)
                self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def tables(self) -> set[str]:
        return {
            row[0] for row in self.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with failed(self):
            return self._db.execute(sql, tuple(params)).fetchall()

    def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with failed(self):
            self._db.executemany(sql, rows)

    def close(self) -> None:
        self._db.close()


FULL = ("database or disk is full", "no space left on device", "could not extend file")
"""What the databases say when the disk under the store is full."""


class StoreFull(StoreError):
    """The disk under the store is full: no later file can be added either."""


@contextlib.contextmanager
def failed(db: Database) -> Iterator[None]:
    """A database error as one line naming the store (a file another vcsbench made, a
    server that went away), not a traceback."""
    try:
        yield
    except db.errors as exc:
        first = without_secrets((str(exc).strip().splitlines() or [type(exc).__name__])[0])
        if any(words in first.lower() for words in FULL):
            raise StoreFull(
                f"--store {db.where}: the disk that holds the store is full ({first}); free "
                "space there and add the result files again (they are kept)",
                first,
            ) from None
        if getattr(db, "stalled", False):
            raise StoreError(
                f"--store {db.where}: the server did not answer within {STATEMENT_S} s; "
                "nothing was added in that statement (try again when it answers)",
                first,
            ) from None
        raise StoreError(
            f"--store {db.where}: the database failed ({first}); a store made by another "
            "version of vcsbench is not this one's: give another --store",
            first,
        ) from None


def shown_url(url: str) -> str:
    """A PostgreSQL URL without its password (in its user part or as ``?password=``)."""
    return without_secrets(url)


STATEMENT_S = 60
"""How long a statement of the shared store may take (``statement_timeout``, and a
watchdog for a server that stops answering at all), and the connection its start."""


class PostgresDb:
    def __init__(self, url: str, writing: bool) -> None:
        self.where = shown_url(url)
        try:
            import psycopg
        except ImportError:
            raise VcsbenchError(
                f"--store {self.where}: PostgreSQL needs psycopg; pip install 'psycopg[binary]'"
            ) from None
        self.errors: tuple[type[BaseException], ...] = (psycopg.Error,)
        self.stalled = False
        options = f"-c statement_timeout={STATEMENT_S}s -c lock_timeout={STATEMENT_S}s"
        if not writing:
            options += " -c default_transaction_read_only=on"
        try:
            self._db = psycopg.connect(
                url, autocommit=True, connect_timeout=STATEMENT_S // 6, options=options
            )
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise VcsbenchError(
                f"--store {self.where}: cannot connect ({without_secrets(first)})"
            ) from None

    @contextlib.contextmanager
    def _watched(self) -> Iterator[None]:
        """A server that stops answering (stopped, a network gone) cannot end a statement
        itself: past :data:`STATEMENT_S` the connection is shut under the waiting call,
        which then fails in one line."""
        timer = threading.Timer(STATEMENT_S + 5, self._shut)
        timer.daemon = True
        timer.start()
        try:
            with failed(self):
                yield
        finally:
            timer.cancel()

    def _shut(self) -> None:
        self.stalled = True
        with contextlib.suppress(OSError):
            fd = os.dup(self._db.pgconn.socket)
            with socket.socket(fileno=fd) as sock:
                sock.shutdown(socket.SHUT_RDWR)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with failed(self), self._db.transaction():
            yield

    def tables(self) -> set[str]:
        return {
            row[0]
            for row in self.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                "current_schema()"
            )
        }

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._watched():
            cursor = self._db.execute(self._sql(sql), tuple(params))
            return cursor.fetchall() if cursor.description is not None else []

    def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with self._watched(), self._db.cursor() as cursor:
            cursor.executemany(self._sql(sql), rows)

    def close(self) -> None:
        self._db.close()


def connect(spec: str | Path, writing: bool) -> Database:
    """The database ``spec`` names: a ``postgresql://`` URL, else a SQLite file's path;
    read-only unless ``writing``."""
    if isinstance(spec, str) and POSTGRES.match(spec):
        return PostgresDb(spec, writing)
    return SqliteDb(Path(spec), writing)
