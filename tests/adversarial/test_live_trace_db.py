"""A watched trace database that is locked, WAL-mode, in a read-only folder, or holds a bad session: read-only, named, retried."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest
from helpers.hostile import cli, python_process, saved_ids, tmpfs

import workbench.data.importers.traces as traces_module
from workbench.data.importers import import_traces
from workbench.data.sample import sample_path
from workbench.data.watch import Watcher, open_source

DB = sample_path().parent / "sample_imports" / "traces" / "synth_ai.db"
#: The sample database's sessions (two finished rollouts), by hand from its session_traces table.
SESSIONS = 2


@pytest.fixture(autouse=True)
def short_lock_wait(monkeypatch):
    """A reader gives a writer's lock 0.3 s (10 s by default) so a held lock is met quickly."""
    monkeypatch.setattr("workbench.data.importers.trace_db.READ_TIMEOUT_S", 0.3)


def copy_db(folder: Path, *, wal: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    db = shutil.copy(DB, folder / "synth_ai.db")
    if wal:
        with closing(sqlite3.connect(db)) as connection:
            assert connection.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    return Path(db)


def hold_lock(db: Path) -> subprocess.Popen:
    """Another process holding ``db`` exclusively locked until a line arrives on its stdin."""
    locker = python_process(
        f"""
        import sqlite3, sys
        connection = sqlite3.connect({str(db)!r}, isolation_level=None)
        connection.execute("BEGIN EXCLUSIVE")
        print("locked", flush=True)
        sys.stdin.readline()
        connection.execute("ROLLBACK")
        """
    )
    assert locker.stdout.readline().strip() == "locked"
    return locker


def release(locker: subprocess.Popen) -> None:
    locker.communicate("go\n", timeout=30)
    assert locker.returncode == 0


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_watching_a_wal_database_leaves_its_folder_as_it_was(tmp_path, capsys):
    db = copy_db(tmp_path / "traces", wal=True)
    before = files(db.parent)
    assert list(before) == ["synth_ai.db"]
    code, out, _ = cli("watch", db, "--into", tmp_path / "corpus", "--once", capsys=capsys)
    assert code == 0 and f"appended {SESSIONS} episode(s)" in out
    assert files(db.parent) == before  # no -wal, no -shm, the same bytes


def test_a_wal_database_in_a_read_only_folder_is_read(tmp_path, capsys):
    folder = tmp_path / "ro"
    with tmpfs(folder, "4m") as mounted:
        db = copy_db(folder, wal=True)
        if mounted:
            subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        else:
            folder.chmod(0o555)
        try:
            code, out, err = cli("watch", db, "--into", tmp_path / "corpus", "--once", capsys=capsys)
            assert code == 0, err
            assert f"appended {SESSIONS} episode(s)" in out and "readonly" not in err
            assert sorted(p.name for p in folder.iterdir()) == ["synth_ai.db"]
        finally:
            folder.chmod(0o755) if not mounted else None


def test_a_locked_database_is_called_locked(tmp_path):
    db = copy_db(tmp_path / "traces")
    locker = hold_lock(db)
    try:
        result = import_traces(db, progress=False)
    finally:
        release(locker)
    (issue,) = result.errors
    assert "locked" in issue.message and "not a synth-ai trace database" not in issue.message


def test_a_watch_of_a_locked_database_retries_until_it_is_free(tmp_path):
    db = copy_db(tmp_path / "traces")
    with Watcher(open_source(db), tmp_path / "corpus") as watcher:
        locker = hold_lock(db)
        try:
            report = watcher.poll()
        finally:
            release(locker)
        assert len(report.appended) == 0 and report.problems == [] and report.settling == 1
        assert len(watcher.poll().appended) == SESSIONS


def test_sessions_locked_between_listing_and_reading_are_read_after_a_restart(tmp_path, monkeypatch):
    db = copy_db(tmp_path / "traces")
    listing = traces_module.trace_sessions
    lockers: list[subprocess.Popen] = []

    def then_lock(*args, **kwargs):  # the writer takes the lock right after the listing
        found = listing(*args, **kwargs)
        lockers.append(hold_lock(db))
        return found

    monkeypatch.setattr(traces_module, "trace_sessions", then_lock)
    with Watcher(open_source(db), tmp_path / "corpus") as watcher:
        try:
            report = watcher.poll()
        finally:
            release(lockers[0])
        assert len(report.appended) == 0 and report.problems == [] and report.settling == SESSIONS
    monkeypatch.setattr(traces_module, "trace_sessions", listing)
    with Watcher(open_source(db), tmp_path / "corpus") as watcher:  # a restart: never dropped for good
        assert len(watcher.poll().appended) == SESSIONS
        assert len(watcher.poll().appended) == 0
    assert len(saved_ids(tmp_path / "corpus")) == SESSIONS


@pytest.mark.parametrize(
    ("metadata", "named"),
    [(b'{"seed": "\xff\xfe"}', "not UTF-8"), (b"[" * 100_000 + b"]" * 100_000, "nested deeper")],
)
def test_one_session_with_bad_metadata_fails_alone(tmp_path, capsys, metadata, named):
    db = copy_db(tmp_path / "traces")
    with closing(sqlite3.connect(db)) as connection:
        first = connection.execute("SELECT session_id FROM session_traces ORDER BY created_at LIMIT 1").fetchone()[0]
        connection.execute(
            "UPDATE session_traces SET metadata = CAST(? AS TEXT) WHERE session_id = ?", (metadata, first)
        )
        connection.commit()
    code, out, err = cli("watch", db, "--into", tmp_path / "corpus", "--once", capsys=capsys)
    assert code == 1
    problems = [line for line in err.splitlines() if line.startswith("problem: ")]
    assert len(problems) == 1 and first in problems[0] and named in problems[0]
    assert f"appended {SESSIONS - 1} episode(s)" in out


def test_a_file_that_is_no_database_is_named_as_such(tmp_path, capsys):
    path = tmp_path / "notes.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)  # the magic, then nothing of a database
    code, _, err = cli("watch", path, "--into", tmp_path / "corpus", "--once", capsys=capsys)
    problems = [line for line in err.splitlines() if line.startswith("problem: ")]
    assert code == 1 and len(problems) == 1
    assert "notes.db" in problems[0] and "not a synth-ai trace database" in problems[0] and "locked" not in err
