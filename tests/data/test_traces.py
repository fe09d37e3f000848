"""The trace database reader on hand-built databases with synth-ai's table layout (the real
server's database is checked in tests/data/test_taskapp.py): doubled rows, running sessions,
lost rows, a follower's repeated reads, and short read transactions."""

from __future__ import annotations

import json
import sqlite3

import pytest

from workbench.core.crafter_facts import INVENTORY_ITEMS
from workbench.data.importers import import_traces
from workbench.data.importers import traces as traces_module
from workbench.data.importers.traces import read_trace_sessions, trace_sessions

SCHEMA = """
CREATE TABLE session_traces (session_id VARCHAR PRIMARY KEY, created_at DATETIME NOT NULL, num_timesteps INTEGER,
    num_events INTEGER, num_messages INTEGER, metadata TEXT);
CREATE TABLE session_timesteps (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id VARCHAR NOT NULL,
    step_id VARCHAR NOT NULL, step_index INTEGER NOT NULL, turn_number INTEGER);
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id VARCHAR NOT NULL, timestep_id INTEGER,
    event_type VARCHAR NOT NULL, call_records TEXT, reward FLOAT, system_state_before TEXT,
    system_state_after TEXT, metadata TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id VARCHAR NOT NULL, timestep_id INTEGER,
    message_type VARCHAR NOT NULL, content TEXT NOT NULL, metadata TEXT);
CREATE TABLE outcome_rewards (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id VARCHAR NOT NULL,
    total_reward INTEGER NOT NULL, achievements_count INTEGER NOT NULL, total_steps INTEGER NOT NULL,
    created_at DATETIME NOT NULL, reward_metadata TEXT);
"""


def _state(step: int, wood: int) -> str:
    inventory = f"wood:{wood}" if wood else "empty"
    achievements = "collect_wood" if wood else "none"
    text = f"Step: {step}/100\nHealth: 9\nPosition: [3, 4]\nInventory: {inventory}\nAchievements: {achievements}\n"
    return json.dumps({"text": text})


def _add_session(db, sid: str, decisions: list[tuple[list, float]], *, finished=True, doubled=True, created="t1"):
    """A session of ``decisions`` ((tool calls, reward) each; wood +1 on a rewarded one), its
    event and message rows stored twice as the server does, and an outcome row when ``finished``."""
    con = sqlite3.connect(db)
    con.execute("INSERT INTO session_traces VALUES (?, ?, 0, 0, 0, ?)", (sid, created, json.dumps({"seed": 7})))
    rows, wood, step = [], 0, 0
    for turn, (calls, reward) in enumerate(decisions):
        timestep = con.execute(
            "INSERT INTO session_timesteps (session_id, step_id, step_index, turn_number) VALUES (?, ?, ?, ?)",
            (sid, f"decision_{turn}", turn, turn),
        ).lastrowid
        before = _state(step, wood)
        wood, step = wood + (reward > 0), step + 1
        record = [{"output_text": "", "output_tool_calls": [{"name": "interact_many", "arguments_json": "{}"}]}]
        rows.append(("events", (sid, timestep, "cais", json.dumps(record), None, None, None, "{}")))
        rows.append(("events", (sid, timestep, "environment", None, reward, before, _state(step, wood), "{}")))
        rows.append(("messages", (sid, timestep, "assistant", json.dumps(calls), "{}")))
    for _ in range(2 if doubled else 1):
        for table, values in rows:
            if table == "events":
                con.execute(
                    "INSERT INTO events (session_id, timestep_id, event_type, call_records, reward, "
                    "system_state_before, system_state_after, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    values,
                )
            else:
                con.execute(
                    "INSERT INTO messages (session_id, timestep_id, message_type, content, metadata) "
                    "VALUES (?, ?, ?, ?, ?)",
                    values,
                )
    if finished:
        con.execute("INSERT INTO outcome_rewards VALUES (NULL, ?, 1, 1, ?, 't9', '{}')", (sid, len(decisions)))
    con.commit()
    con.close()


DO = [{"tool_name": "interact_many", "arguments": {"actions": ["do"]}}]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "synth_ai.db"
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    con.close()
    _add_session(path, "run-a", [(DO, 1.0), ([{"tool_name": "move_left", "arguments": "{}"}], 0.0)], created="t1")
    _add_session(path, "run-b", [(DO, 0.0)], created="t2")
    _add_session(path, "run-live", [(DO, 0.0)], finished=False, created="t3")
    return path


def test_one_episode_per_finished_session_with_doubled_rows_read_once(db):
    result = import_traces(db, progress=False)
    assert result.corpus.ids == ["run-a", "run-b"] and result.ok
    episode = result.corpus["run-a"]
    assert episode.n_decisions == 2 and episode.actions == [["do"], ["move_left"]]
    assert episode.env_reward.tolist() == [1.0, 0.0]
    assert episode.inventory[:, INVENTORY_ITEMS.index("wood")].tolist() == [0, 1, 1]  # read from the text
    assert episode.metadata["counts"] == "estimated" and episode.metadata["seed"] == 7
    assert episode.metadata["normalised_calls"] == [[2, ["json_string"]]]
    assert episode.messages[0] == "interact_many({})"
    (warning,) = result.warnings
    assert warning.location == "session run-live" and "still running" in warning.message


def test_a_follower_reads_only_sessions_it_does_not_hold(db):
    assert [(s.session_id, s.finished) for s in trace_sessions(db)] == [
        ("run-a", True),
        ("run-b", True),
        ("run-live", False),
    ]
    first = read_trace_sessions(db, skip={"run-a"})
    assert first.imported == ["run-b"] and first.running == ["run-live"] and first.skipped == 1
    _add_session(db, "run-c", [(DO, 0.0)], created="t4")
    again = read_trace_sessions(db, skip={"run-a", "run-b"})
    assert again.imported == ["run-c"] and again.skipped == 2


def test_the_config_given_is_kept_with_the_episodes(db):
    table = {"enabled": True, "mode": "decision_stepwise", "strategy": "consistent"}
    episode = import_traces(db, config=table, progress=False).corpus["run-b"]
    assert episode.metadata["step_rewards"] == table


def test_lost_rows_cost_only_their_session(db):
    con = sqlite3.connect(db)
    con.execute(
        "DELETE FROM messages WHERE session_id = 'run-a' AND timestep_id = "
        "(SELECT id FROM session_timesteps WHERE session_id = 'run-a' AND turn_number = 1)"
    )
    con.commit()
    con.close()
    result = import_traces(db, progress=False)
    assert result.corpus.ids == ["run-b"]
    (issue,) = result.errors
    assert issue.location == "session run-a" and "decision(s) [2] have no assistant message" in issue.message


def test_two_different_rows_for_one_decision_are_an_error(db):
    con = sqlite3.connect(db)
    timestep = con.execute("SELECT id FROM session_timesteps WHERE session_id = 'run-b'").fetchone()[0]
    con.execute(
        "INSERT INTO messages (session_id, timestep_id, message_type, content, metadata) VALUES (?, ?, ?, ?, ?)",
        ("run-b", timestep, "assistant", json.dumps([{"tool_name": "sleep"}]), "{}"),
    )
    con.commit()
    con.close()
    result = import_traces(db, progress=False)
    (issue,) = result.errors
    assert issue.location == "session run-b" and "two different assistant messages" in issue.message


def test_a_file_that_is_no_trace_database_is_one_error(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("hello")
    result = import_traces(path, progress=False)
    assert len(result.corpus) == 0 and "not a synth-ai trace database" in result.errors[0].message
    missing = import_traces(tmp_path / "none.db", progress=False)
    assert "no such file or folder" in missing.errors[0].message


def test_every_query_is_its_own_short_read_transaction(db, monkeypatch):
    """Right after each query, a writer gets the exclusive lock at once: the reader holds none
    across its Python work (the server's writer gives up after 5 s and drops rows)."""
    real = traces_module.rows
    checked = []

    def then_write(connection, sql, *params):
        rows = real(connection, sql, *params)
        writer = sqlite3.connect(db, timeout=0, isolation_level=None)
        try:
            writer.execute("BEGIN EXCLUSIVE")
            writer.execute("ROLLBACK")
        finally:
            writer.close()
        checked.append(sql)
        return rows

    monkeypatch.setattr(traces_module, "rows", then_write)
    assert len(import_traces(db, progress=False).corpus) == 2
    assert len(checked) >= 1 + 4 * 2  # the listing, then four queries per finished session


def test_the_database_is_opened_read_only(db):
    before = db.read_bytes()
    db.chmod(0o444)
    try:
        assert len(import_traces(db, progress=False).corpus) == 2
    finally:
        db.chmod(0o644)
    assert db.read_bytes() == before
