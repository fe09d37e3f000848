"""Import sources of any size for ``bench_ingest.py``, made by copying the real fixtures with new run ids.

- ``rollouts``: the shipped task-app rollouts (``sample_imports/taskapp``, synth-ai 0.2.14) and
  the synth-ai 0.2.24 responses (``tests/fixtures/synth-ai-0.2.24/responses``), one response a
  line of JSONL files of ``--per-file`` responses, each copy with a new ``run_id``;
- ``traces``: the synth-ai 0.2.24 trace database (``tests/fixtures/synth-ai-0.2.24/synth_ai.db``),
  every row of every session copied under a new session id (row ids shifted past the last copy's);
- ``recorder``: the shipped crafter.Recorder files (``sample_imports/recorder``) copied under new
  names (a Recorder's id is its file stem).

Each source is written until it holds at least the decisions asked for.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "workbench" / "data" / "shipped" / "sample_imports"
FIXTURES = REPO / "tests" / "fixtures" / "synth-ai-0.2.24"
#: Responses per JSONL file (about 1,100 decisions, 7 MB a file).
PER_FILE = 30


def _responses() -> list[dict]:
    files = sorted((SHIPPED / "taskapp").glob("*.json")) + sorted((FIXTURES / "responses").glob("*.json"))
    return [json.loads(f.read_text()) for f in files]


def _decisions(response: dict) -> int:
    """Decisions a response imports as (its steps, less a final step the env never ran)."""
    total = 0
    for trajectory in response["trajectories"]:
        steps = trajectory["steps"]
        last = steps[-1].get("info") or {}
        total += len(steps) - (
            1 if last.get("terminated") and last.get("reason") in ("no_tool_calls", "invalid_action") else 0
        )
    return total


def make_rollouts(folder: Path, decisions: int, *, per_file: int = PER_FILE) -> int:
    """JSONL files of rollout responses under ``folder`` holding at least ``decisions``; returns how many."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    originals = [(r, _decisions(r), json.dumps(r)) for r in _responses()]
    made, copy, file_no = 0, 0, 0
    while made < decisions:
        lines = []
        for _ in range(per_file):
            response, n, text = originals[copy % len(originals)]
            run_id = f"{response.get('run_id') or 'run'}-c{copy}"
            lines.append(text.replace(f'"run_id": {json.dumps(response.get("run_id"))}', f'"run_id": "{run_id}"', 1))
            made += n
            copy += 1
            if made >= decisions:
                break
        (folder / f"rollouts-{file_no:05d}.jsonl").write_text("\n".join(lines) + "\n")
        file_no += 1
    return made


def make_traces(db: Path, decisions: int) -> int:
    """A trace database at ``db`` of copies of the 0.2.24 fixture's sessions holding at least ``decisions``."""
    db.parent.mkdir(parents=True, exist_ok=True)
    source = FIXTURES / "synth_ai.db"
    shutil.copyfile(source, db)
    connection = sqlite3.connect(db)
    try:
        per_copy = connection.execute("SELECT count(*) FROM events WHERE event_type = 'environment'").fetchone()[0]
        tables = {
            table: [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
            for table in (
                "session_traces",
                "session_timesteps",
                "events",
                "messages",
                "outcome_rewards",
                "event_rewards",
            )
        }
        top = {
            t: connection.execute(f"SELECT coalesce(max(id), 0) FROM {t}").fetchone()[0]
            for t in tables
            if t != "session_traces"
        }
        connection.execute("ATTACH DATABASE ? AS src", (f"{source.resolve().as_uri()}?mode=ro",))
        shifts = {"id": None, "timestep_id": "session_timesteps", "event_id": "events", "message_id": "messages"}
        copies = -(-decisions // per_copy)
        for k in range(1, copies):
            for table, columns in tables.items():
                chosen = []
                for column in columns:
                    if column == "session_id":
                        chosen.append(f"session_id || '-c{k}'")
                    elif column in shifts and table != "session_traces":
                        owner = table if column == "id" else shifts[column]
                        chosen.append(f"{column} + {k * top[owner]}")
                    else:
                        chosen.append(column)
                connection.execute(
                    f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(chosen)} FROM src.{table}"
                )
            if k % 200 == 0:
                connection.commit()
        connection.commit()
        connection.execute("DETACH DATABASE src")
        return copies * per_copy
    finally:
        connection.close()


def make_recorder(folder: Path, decisions: int) -> int:
    """crafter.Recorder ``.npz`` files under ``folder`` (hard links of the shipped ones under new
    names where the filesystem allows) holding at least ``decisions``."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    files = sorted((SHIPPED / "recorder").glob("*.npz"))
    lengths = [int(f.stem.rsplit("-len", 1)[1]) for f in files]
    made, copy = 0, 0
    while made < decisions:
        original = files[copy % len(files)]
        stamp, rest = original.stem.split("-", 1)
        target = folder / f"{stamp}{copy:07d}-{rest}.npz"
        try:
            target.hardlink_to(original)
        except OSError:
            shutil.copyfile(original, target)
        made += lengths[copy % len(files)]
        copy += 1
    return made
