"""Following a synth-ai trace database being written: finished sessions once, running ones later, the writer never locked out."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

from workbench.data.importers import import_traces
from workbench.data.sample import sample_path
from workbench.data.storage import load_corpus
from workbench.data.watch import Watcher, detect_kind, open_source

DB = sample_path().parent / "sample_imports" / "traces" / "synth_ai.db"


def held_back(db: Path) -> tuple[str, tuple]:
    """Make the last session of ``db`` look still running (its outcome row removed); returns
    the session id and the row, to put back when the "rollout" ends."""
    with closing(sqlite3.connect(db)) as connection:
        session = connection.execute(
            "SELECT session_id FROM session_traces ORDER BY created_at DESC LIMIT 1"
        ).fetchone()[0]
        row = connection.execute("SELECT * FROM outcome_rewards WHERE session_id = ?", (session,)).fetchone()
        connection.execute("DELETE FROM outcome_rewards WHERE session_id = ?", (session,))
        connection.commit()
    return session, row


def test_sessions_are_taken_when_they_finish_and_once(tmp_path: Path) -> None:
    db = tmp_path / "traces" / "synth_ai.db"
    db.parent.mkdir()
    shutil.copy(DB, db)
    running, outcome = held_back(db)
    expected = import_traces(DB, progress=False).corpus.ids
    assert detect_kind(db) == "traces"
    with Watcher(open_source(db), tmp_path / "corpus") as watcher:
        first = watcher.poll()
        assert first.appended.ids == [i for i in expected if i != running] and first.settling == 1
        with closing(sqlite3.connect(db)) as connection:  # the rollout ends
            connection.execute(f"INSERT INTO outcome_rewards VALUES ({', '.join('?' * len(outcome))})", outcome)
            connection.commit()
        second = watcher.poll()
        assert second.appended.ids == [running] and second.settling == 0
        assert watcher.poll().appended.ids == []
    with Watcher(open_source(db), tmp_path / "corpus") as watcher:  # a restart reads nothing again
        assert watcher.poll().appended.ids == []
    assert sorted(load_corpus(tmp_path / "corpus").ids) == sorted(expected)


def test_polling_never_holds_the_writer_out(tmp_path: Path) -> None:
    db = tmp_path / "synth_ai.db"
    shutil.copy(DB, db)
    failures: list[Exception] = []
    done = threading.Event()

    def write() -> None:
        # A writer stricter than the server (1 s busy timeout against its 5 s), committing rows
        # one by one while the watcher polls: a reader holding a transaction would lock it out.
        with closing(sqlite3.connect(db, timeout=1.0)) as connection:
            connection.execute("CREATE TABLE IF NOT EXISTS probe (n INTEGER)")
            for n in range(300):
                try:
                    connection.execute("INSERT INTO probe VALUES (?)", (n,))
                    connection.commit()
                except sqlite3.OperationalError as error:
                    failures.append(error)
        done.set()

    writer = threading.Thread(target=write)
    with Watcher(open_source(db), tmp_path / "corpus") as watcher:
        writer.start()
        polls = 0
        while not done.is_set() or polls < 5:
            watcher.poll()
            polls += 1
    writer.join()
    assert failures == []
    with closing(sqlite3.connect(db)) as connection:
        assert connection.execute("SELECT COUNT(*) FROM probe").fetchone()[0] == 300
    assert polls >= 5


def test_a_database_whose_tables_are_not_made_yet_is_waited_for(tmp_path: Path) -> None:
    # A starting server makes the SQLite file before its tables: polls in between wait (settling,
    # no problem), and the sessions are taken once the tables and rows are there.
    db = tmp_path / "synth_ai.db"
    with closing(sqlite3.connect(db)) as connection:
        connection.execute("CREATE TABLE unrelated (x INTEGER)")  # a database, but no trace tables yet
        connection.commit()
    expected = import_traces(DB, progress=False).corpus.ids
    with Watcher(open_source(db, "traces"), tmp_path / "corpus") as watcher:
        early = watcher.poll()
        assert early.problems == [] and early.settling == 1 and early.appended.ids == []
        shutil.copy(DB, db)  # the server's tables and finished sessions arrive
        assert sorted(watcher.poll().appended.ids) == sorted(expected)


def test_a_database_that_never_gets_the_tables_is_named_once(tmp_path: Path, monkeypatch) -> None:
    from workbench.data.watch import traces as watch_traces

    monkeypatch.setattr(watch_traces, "NO_TABLES_GRACE_S", 0.0)
    db = tmp_path / "other.db"
    with closing(sqlite3.connect(db)) as connection:
        connection.execute("CREATE TABLE unrelated (x INTEGER)")
        connection.commit()
    with Watcher(open_source(db, "traces"), tmp_path / "corpus") as watcher:
        first, second = watcher.poll(), watcher.poll()
    (problem,) = first.problems
    assert "not a synth-ai trace database (no such table: session_traces)" in problem.message
    assert second.problems == [] and second.settling == 1  # said once, still retried
