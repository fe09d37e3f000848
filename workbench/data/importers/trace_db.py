"""Opening a synth-ai trace database strictly read-only, and telling a locked one (retry later) from a broken one.

A reader must leave the database's folder exactly as it was: a WAL-mode database opened even
with ``mode=ro`` makes ``-wal`` and ``-shm`` files beside it when no writer has them open (and
fails in a read-only folder). So a WAL database without a ``-wal`` file beside it (no writer
at work: nothing newer than the file itself), or any database in a folder this process cannot
write, is opened ``immutable`` (SQLite then takes no locks and makes no files); every other
one with ``mode=ro``, which shares the writer's ``-wal``/``-shm`` and makes nothing new.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from workbench.data.importers.batch import BadInput

#: Seconds a query waits for the server's write lock before giving up (a reader never holds one).
READ_TIMEOUT_S = 10.0

_HEADER = b"SQLite format 3\x00"
#: Byte 18 of the header: the file format's write version, 2 for WAL.
_WAL_VERSION_BYTE = 18


class Locked(BadInput):
    """The database (or a session's rows) is locked by a writer right now: read it again later."""


class NoTraceTables(BadInput):
    """An SQLite database without synth-ai's trace tables: not a trace database, or one whose
    server has made the file but not its tables yet (a follower waits a while before saying so)."""


def connect(db: Path, *, timeout: float | None = None) -> sqlite3.Connection:
    """A read-only, autocommit connection (each statement its own transaction) that makes no
    file beside ``db``, waiting ``timeout`` seconds (default ``READ_TIMEOUT_S``) for a writer's
    lock. Raises ``BadInput`` when ``db`` is missing."""
    if not db.is_file():
        raise BadInput("", "no such trace database file")
    uri = f"{db.resolve().as_uri()}?mode=ro"
    if _immutable_is_safe(db):
        uri += "&immutable=1"
    return sqlite3.connect(uri, uri=True, timeout=READ_TIMEOUT_S if timeout is None else timeout, isolation_level=None)


def _immutable_is_safe(db: Path) -> bool:
    """Whether no writer can change ``db`` while it is read: a WAL database with no ``-wal``
    beside it (a writer would have one open), or one in a folder nobody here may write."""
    try:
        with db.open("rb") as handle:
            header = handle.read(_WAL_VERSION_BYTE + 1)
    except OSError:
        return False
    folder = db.resolve().parent
    if not os.access(folder, os.W_OK):
        return True
    wal = header.startswith(_HEADER) and len(header) > _WAL_VERSION_BYTE and header[_WAL_VERSION_BYTE] == 2
    return wal and not Path(f"{db}-wal").exists()


def rows(connection: sqlite3.Connection, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """All rows of one query, fetched at once so its read transaction ends here. Raises
    ``Locked`` when a writer holds the database past the timeout."""
    try:
        return connection.execute(sql, params).fetchall()
    except sqlite3.OperationalError as error:
        if is_locked(error):
            raise Locked("", f"locked by another process ({error}); read again later") from None
        raise


def is_locked(error: sqlite3.Error) -> bool:
    """Whether ``error`` says the database is busy or locked (transient, not a broken file)."""
    text = str(error).lower()
    return isinstance(error, sqlite3.OperationalError) and ("locked" in text or "busy" in text)
