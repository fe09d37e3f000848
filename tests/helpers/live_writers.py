"""Writers that keep producing real episodes for a watcher: rollout JSONL files landing in a folder, sessions landing in a trace database.

Both copy the real fixtures under new run ids (``w<number>``), as fast as asked, and record when each
run landed (its file closed, its transaction committed) and how long each write took: what
``benchmarks/bench_watch_ingest.py`` and ``tests/data/test_watch_keeps_up.py`` measure a watcher against.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TASKAPP = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "taskapp"
FIXTURE_DB = REPO / "tests" / "fixtures" / "synth-ai-0.2.24" / "synth_ai.db"
TRACE_TABLES = ("session_traces", "session_timesteps", "events", "messages", "event_rewards", "outcome_rewards")


@dataclass
class Written:
    """What a writer wrote: per run id, when it landed; per write, how long it took (seconds)."""

    landed: dict[str, float] = field(default_factory=dict)
    decisions: int = 0
    write_seconds: list[float] = field(default_factory=list)


def _responses() -> list[tuple[dict, int]]:
    out = []
    for file in sorted(TASKAPP.glob("*.json")):
        response = json.loads(file.read_text())
        out.append((response, sum(len(t["steps"]) for t in response["trajectories"])))
    return out


def write_rollouts(folder: Path, rate: float, seconds: float, *, period: float = 0.5) -> Written:
    """Every ``period`` seconds a new JSONL file of task-app responses in ``folder``, ``rate``
    decisions a second for ``seconds`` (each response's run id new)."""
    folder.mkdir(parents=True, exist_ok=True)
    responses = _responses()
    written = Written()
    start = time.monotonic()
    n = 0
    tick = 0
    while time.monotonic() - start < seconds:
        tick += 1
        lines, ids = [], []
        target = rate * period * tick
        while written.decisions < target:
            response, decisions = responses[n % len(responses)]
            run_id = f"w{n:06d}"
            lines.append(json.dumps({**response, "run_id": run_id}))
            ids.append(run_id)
            written.decisions += decisions
            n += 1
        began = time.monotonic()
        with open(folder / f"batch-{tick:05d}.jsonl", "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
        landed = time.time()
        written.write_seconds.append(time.monotonic() - began)
        written.landed.update(dict.fromkeys(ids, landed))
        time.sleep(max(0.0, start + period * tick - time.monotonic()))
    return written


def new_trace_db(db: Path) -> None:
    """An empty trace database of the fixture's schema (its rows removed) at ``db``."""
    shutil.copyfile(FIXTURE_DB, db)
    with sqlite3.connect(db) as connection:
        for table in TRACE_TABLES:
            connection.execute(f"DELETE FROM {table}")


def write_sessions(db: Path, rate: float, seconds: float, *, period: float = 0.1) -> Written:
    """Every ``period`` seconds one transaction into ``db`` adding copies of the fixture's
    finished sessions (outcome rows included), ``rate`` decisions a second for ``seconds``;
    the session ids are ``w<number>``. The writer waits at most 5 s for a lock, as synth-ai's
    server does; ``write_seconds`` holds each transaction's time (commit included)."""
    written = Written()
    connection = sqlite3.connect(db, timeout=5.0, isolation_level=None)
    connection.execute("ATTACH DATABASE ? AS src", (f"{FIXTURE_DB.resolve().as_uri()}?mode=ro",))
    sessions = [row[0] for row in connection.execute("SELECT session_id FROM src.session_traces ORDER BY session_id")]
    per_session = {
        sid: connection.execute(
            "SELECT count(*) FROM src.events WHERE session_id = ? AND event_type = 'environment'", (sid,)
        ).fetchone()[0]
        for sid in sessions
    }
    columns = {t: [r[1] for r in connection.execute(f"PRAGMA src.table_info({t})")] for t in TRACE_TABLES}
    top = {t: connection.execute(f"SELECT coalesce(max(id), 0) FROM src.{t}").fetchone()[0] for t in TRACE_TABLES[1:]}
    shifts = {"id": None, "timestep_id": "session_timesteps", "event_id": "events", "message_id": "messages"}
    start = time.monotonic()
    n, tick = 0, 0
    while time.monotonic() - start < seconds:
        tick += 1
        began = time.monotonic()
        connection.execute("BEGIN IMMEDIATE")
        ids = []
        while written.decisions < rate * period * tick:
            source = sessions[n % len(sessions)]
            new = f"w{n:06d}"
            for table in TRACE_TABLES:
                chosen = []
                for column in columns[table]:
                    if column == "session_id":
                        chosen.append("?1")
                    elif table == "session_traces" and column == "metadata":
                        chosen.append("json_set(metadata, '$.run_id', ?1)")  # its own run: its own content
                    elif column in shifts and table != "session_traces":
                        owner = table if column == "id" else shifts[column]
                        chosen.append(f"{column} + {(n + 1) * top[owner]}")
                    else:
                        chosen.append(column)
                connection.execute(
                    f"INSERT INTO {table} ({', '.join(columns[table])}) SELECT {', '.join(chosen)} "
                    f"FROM src.{table} WHERE session_id = ?2",
                    (new, source),
                )
            ids.append(new)
            written.decisions += per_session[source]
            n += 1
        connection.execute("COMMIT")
        landed = time.time()
        written.write_seconds.append(time.monotonic() - began)
        written.landed.update(dict.fromkeys(ids, landed))
        time.sleep(max(0.0, start + period * tick - time.monotonic()))
    connection.close()
    return written
