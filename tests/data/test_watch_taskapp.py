"""Following the real task-app server's trace database while it writes: every session once, no tracing row lost."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest
from taskapp.produce import produce
from taskapp.server import TRACE_DB
from taskapp.venv import RegistryUnreachable, ensure_venv

from workbench.data.importers import import_traces
from workbench.data.storage import load_corpus
from workbench.data.watch import Watcher, open_source

pytestmark = pytest.mark.taskapp


def test_following_the_servers_trace_database_loses_no_row(tmp_path: Path) -> None:
    try:
        venv = ensure_venv()
    except RegistryUnreachable as error:
        pytest.skip(f"synth-ai 0.2.14 is not in its cached venv yet and cannot be installed: {error}")
    trace = tmp_path / "trace"
    trace.mkdir()
    db = trace / TRACE_DB
    produced: list = []
    failed: list[BaseException] = []

    def serve() -> None:
        try:
            produced.append(produce(tmp_path / "rollouts", tmp_path / "server", venv=venv, trace=trace))
        except BaseException as error:  # noqa: BLE001 - re-raised in the test's thread
            failed.append(error)

    server = threading.Thread(target=serve)
    server.start()
    appended: list[str] = []
    polls = 0
    with Watcher(open_source(db, "traces"), tmp_path / "corpus") as watcher:

        def report(found) -> bool:
            nonlocal polls
            polls += 1
            appended.extend(found.appended.ids)
            assert found.problems == []
            return not server.is_alive() and found.settling == 0

        watcher.run(interval=0.2, on_report=report, max_polls=20000)
    server.join()
    assert not failed, failed
    assert produced and polls > 3  # it polled while the server was writing
    # the watcher took every session once, and the same as reading the finished database
    final = import_traces(db, progress=False).corpus
    assert sorted(appended) == sorted(final.ids) and len(set(appended)) == len(appended)
    assert sorted(load_corpus(tmp_path / "corpus").ids) == sorted(final.ids)
    # no tracing row lost: per decision one environment and one LLM event, each stored twice
    with closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as connection:
        for episode in final:
            events = connection.execute(
                "SELECT event_type, COUNT(*) FROM events WHERE session_id = ? GROUP BY event_type", (episode.id,)
            ).fetchall()
            assert dict(events) == {"environment": 2 * episode.n_decisions, "cais": 2 * episode.n_decisions}, episode.id
    assert (
        "TRACING_END_SESSION_FAIL" not in produced[0].server_log and "database is locked" not in produced[0].server_log
    )
