"""Trace databases as failed rollouts leave them: an empty session is skipped and said (the
import still succeeds), a partial one imports marked partial; and the trace database and the
rollout JSON of one run give the same metadata (seed, policy, env)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from helpers import REPO

from workbench.cli import main
from workbench.data.importers import import_rollouts, import_traces
from workbench.data.importers.trace_outcomes import EMPTY

FIXTURE = REPO / "tests" / "fixtures" / "synth-ai-0.2.24"
RUN = "newest_loose_consistent_policy"


def _copy(tmp_path: Path) -> Path:
    db = tmp_path / "synth_ai.db"
    shutil.copy(FIXTURE / "synth_ai.db", db)
    return db


def _environment_events_after(db: Path, run: str, keep: int) -> None:
    """Delete the run's environment events of decisions ``keep`` + 1 and later (the rollout
    failed at decision ``keep`` + 1: its timestep was written, nothing was played)."""
    with sqlite3.connect(db) as connection:
        connection.execute(
            "DELETE FROM events WHERE session_id = ? AND event_type = 'environment' AND timestep_id IN "
            "(SELECT id FROM session_timesteps WHERE session_id = ? AND turn_number >= ?)",
            (run, run, keep),
        )


def test_an_empty_session_is_skipped_and_said_and_the_import_succeeds(tmp_path: Path, capsys) -> None:
    db = _copy(tmp_path)
    _environment_events_after(db, RUN, 0)  # failed at decision 1
    result = import_traces(db, progress=False)
    assert sorted(result.corpus.ids) == sorted(
        ["newest_per_achievement_policy_lambda_half", "newest_consistent_env_lambda_omitted"]
    )
    assert not result.errors
    (warning,) = result.warnings
    assert warning.location == f"session {RUN}" and EMPTY in warning.message
    code = main(["import", "traces", str(db), "--out", str(tmp_path / "corpus"), "--quiet"])
    assert code == 0 and EMPTY in capsys.readouterr().out


def test_a_failed_rollouts_partial_session_imports_marked_partial(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    _environment_events_after(db, RUN, 5)  # played 5 decisions, failed at the 6th
    result = import_traces(db, progress=False)
    episode = result.corpus[RUN]
    assert episode.n_decisions == 5
    assert "stopped after 5 played decision(s); decision 6" in episode.metadata["partial"]
    assert [w.location for w in result.warnings] == [f"session {RUN}"]
    assert not any("partial" in e.metadata for e in result.corpus if e.id != RUN)


def test_the_trace_database_and_the_rollout_json_of_one_run_give_the_same_metadata(tmp_path: Path) -> None:
    folder = tmp_path / "responses"
    folder.mkdir()
    for response in (FIXTURE / "responses").glob("*.json"):  # each with the request it answered
        document = json.loads(response.read_text())
        document["request"] = json.loads((FIXTURE / "requests" / response.name).read_text())
        (folder / response.name).write_text(json.dumps(document))
    rollouts = import_rollouts(folder, progress=False).corpus
    traced = import_traces(FIXTURE / "synth_ai.db", progress=False).corpus
    assert sorted(rollouts.ids) == sorted(traced.ids)
    for run in rollouts.ids:
        a, b = rollouts[run].metadata, traced[run].metadata
        for key in ("seed", "policy", "policy_name", "env_id", "run_id", "max_steps"):
            assert a.get(key) == b.get(key), (run, key, a.get(key), b.get(key))
        assert a["seed"] is not None and a["policy_name"] == "crafter-react"
