"""Producer profiles: rollouts and trace databases of the real synth-ai 0.2.24 server (shipped in
``tests/fixtures/synth-ai-0.2.24``, see its README) imported by that loop's rules, told apart
from 0.2.14's, and verified against the indicator-only reward it computes.

Expected values come from the spec's facts, read independently of the importer here: the
``Step: i/max`` counter of each text observation gives the actions a decision played, and the
indicator-only loop pays ``lambda * (1 if anything unlocked)`` with lambda omitted paying 0.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from workbench.data.importers import import_rollouts, import_traces
from workbench.data.importers.producers import (
    INDICATOR,
    STEPWISE,
    WEIGHTS_IGNORED,
    producer_for_version,
    response_producer,
    weights_ignored,
)
from workbench.data.sample import sample_imports_path
from workbench.errors import WorkbenchError
from workbench.scoring import verify

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "synth-ai-0.2.24"
RESPONSES = FIXTURE / "responses"
CASES = sorted(p.stem for p in RESPONSES.glob("*.json"))
LOOSE = "newest_loose_consistent_policy"
PER_ACHIEVEMENT = "newest_per_achievement_policy_lambda_half"
LAMBDA_OMITTED = "newest_consistent_env_lambda_omitted"


def _response(name: str) -> dict:
    return json.loads((RESPONSES / f"{name}.json").read_text())


def _table(name: str) -> dict:
    request = json.loads((FIXTURE / "requests" / f"{name}.json").read_text())
    return request["policy"]["config"].get("step_rewards") or request["env"]["config"]["step_rewards"]


def _step_counters(response: dict) -> list[int]:
    trajectory = response["trajectories"][0]
    texts = [s["obs"]["text"] for s in trajectory["steps"]] + [trajectory["final"]["observation"]["text"]]
    return [int(re.search(r"^Step: (\d+)/", t, re.MULTILINE).group(1)) for t in texts]


@pytest.fixture(scope="module")
def imported():
    result = import_rollouts(RESPONSES, progress=False)
    assert result.ok, str(result)
    return result


def test_the_fixture_is_what_the_spec_says_0_2_24_writes():
    """No summary, no config echo, info.stepwise with exactly four keys (the facts the shape test reads)."""
    for name in CASES:
        response = _response(name)
        assert response["metrics"]["details"] == {}
        for step in response["trajectories"][0]["steps"]:
            assert list(step["info"]["stepwise"]) == ["decision_index", "indicator", "new_achievements", "reward"]


def test_every_episode_records_the_indicator_loop_told_by_its_shape(imported):
    assert sorted(imported.corpus.ids) == CASES
    for episode in imported.corpus:
        assert episode.metadata["producer"] == "synth-ai 0.2.16-0.2.24"
        assert "4 indicator keys" in episode.metadata["producer_basis"]
    assert "producer synth-ai 0.2.16-0.2.24: 3 episode(s)" in str(imported)


def test_0_2_14_rollouts_keep_their_profile_and_no_weights_line():
    result = import_rollouts(sample_imports_path() / "taskapp", progress=False)
    assert result.ok and len(result.corpus) == 4
    assert {e.metadata["producer"] for e in result.corpus} == {"synth-ai 0.2.14"}
    assert all("summary" in e.metadata["producer_basis"] for e in result.corpus)
    assert WEIGHTS_IGNORED not in str(result)
    checked = verify(result.corpus)
    assert checked.ok and checked.producers == {"synth-ai 0.2.14": 50 + 50 + 60 + 60}
    assert checked.weights_ignored == []


def test_every_action_of_a_decision_is_played_no_20_cap(imported):
    """Actions kept = the steps the server played (its text Step counter), 25 in one decision."""
    for name in CASES:
        counters = _step_counters(_response(name))
        played = [b - a for a, b in zip(counters, counters[1:])]
        assert [len(a) for a in imported.corpus[name].actions] == played, name
    loose = imported.corpus[LOOSE]
    assert len(loose.actions[6]) == 25  # decision 7: 25 steps by the counter (README)
    assert not any("cut" in notes for _, notes in loose.metadata["normalised_calls"])


def test_told_0_2_14_a_0_2_24_file_is_refused_not_cut_to_20():
    """``--producer synth-ai==0.2.14`` on a file whose shape says 0.2.16-0.2.24 (issue 41: a
    25-action decision was cut to 20, 49 steps stored where 54 were played): refused, naming
    both producers; nothing imported."""
    result = import_rollouts(RESPONSES / f"{LOOSE}.json", progress=False, producer="synth-ai==0.2.14")
    assert len(result.corpus) == 0
    (error,) = result.errors
    assert "--producer says synth-ai 0.2.14" in error.message and "made by synth-ai 0.2.16-0.2.24" in error.message


def test_told_0_2_24_a_0_2_14_file_is_refused():
    """The other way: 0.2.14 files (a stepwise summary) told 0.2.24 would have their weights
    called ignored though the file shows them applied."""
    result = import_rollouts(sample_imports_path() / "taskapp", progress=False, producer="synth-ai==0.2.24")
    assert len(result.corpus) == 0 and result.errors
    assert all("--producer says synth-ai 0.2.16-0.2.24" in e.message for e in result.errors)


def test_told_what_its_shape_says_a_file_imports_as_given():
    result = import_rollouts(RESPONSES / f"{LOOSE}.json", progress=False, producer="synth-ai==0.2.24")
    (episode,) = result.corpus
    assert len(episode.actions[6]) == 25 and episode.metadata["producer"] == "synth-ai 0.2.16-0.2.24"
    assert episode.metadata["producer_basis"] == "given: --producer (its shape agrees)"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("synth-ai==0.2.24", INDICATOR), ("0.2.16", INDICATOR), ("synth-ai==0.2.14", STEPWISE)],
)
def test_producer_versions(spec, expected):
    assert producer_for_version(spec) is expected


@pytest.mark.parametrize("spec", ["synth-ai==0.3.0", "0.2.15", "latest"])
def test_an_unknown_producer_is_a_named_error(spec):
    with pytest.raises(WorkbenchError, match="known producers are synth-ai==0.2.14"):
        producer_for_version(spec)


def test_a_trace_of_policy_tool_call_messages_tells_the_indicator_loop():
    """Without stepwise logs (shaping off), the structured trace 0.2.24 returns still tells it."""
    bare = {"trajectories": [{"steps": [{"info": {}}]}], "metrics": {"details": {}}}
    traced = {**bare, "trace": {"markov_blanket_message_history": [{"message_type": "policy_tool_call"}]}}
    assert response_producer(traced)[0] is INDICATOR
    producer, basis = response_producer(bare)
    assert producer is STEPWISE and basis.startswith("assumed")


def test_verify_without_a_config_checks_nothing_and_says_why(imported):
    result = verify(imported.corpus)
    assert result.decisions_checked == 0 and not result.ok
    assert "--request or --config" in (result.nothing_checked or "")


@pytest.mark.parametrize("name", CASES)
def test_verify_with_the_request_checks_every_decision_against_the_indicator_loop(imported, name):
    episode = imported.corpus[[i == name for i in imported.corpus.ids]]
    result = verify(episode, _table(name), "request")
    assert result.decisions_checked == 12 and result.episodes_checked == 1 and result.mismatches.empty
    assert result.producers == {"synth-ai 0.2.16-0.2.24": 12}
    assert result.weights_ignored == ([name] if name == PER_ACHIEVEMENT else [])


def test_the_indicator_loop_paid_what_the_spec_says(imported):
    """lambda 0.5: 0.5 at each unlock; lambda omitted: 0.0 at unlocks (0.2.14 would pay 1.0)."""
    for name, factor in ((PER_ACHIEVEMENT, 0.5), (LAMBDA_OMITTED, 0.0)):
        response = _response(name)
        episode = imported.corpus[name]
        unlocked = (episode.achievement_status[1:] & ~episode.achievement_status[:-1]).any(axis=1)
        logged = [s["info"]["stepwise"]["reward"] for s in response["trajectories"][0]["steps"]]
        assert logged == [factor if u else 0.0 for u in unlocked], name
        assert unlocked.sum() == 2


def test_verify_finds_a_changed_reward(imported, tmp_path):
    """The check is real: one logged reward edited is one mismatch at that decision."""
    response = _response(PER_ACHIEVEMENT)
    response["trajectories"][0]["steps"][1]["info"]["stepwise"]["reward"] = 1.0  # decision 2 paid 0.5
    (tmp_path / "edited.json").write_text(json.dumps(response))
    corpus = import_rollouts(tmp_path / "edited.json", progress=False).corpus
    result = verify(corpus, _table(PER_ACHIEVEMENT))
    assert result.mismatches["decision"].tolist() == [2]
    assert result.mismatches["logged"].tolist() == [1.0] and result.mismatches["recomputed"].tolist() == [0.5]


def test_the_trace_database_imports_from_cais_events_equal_to_the_json(imported):
    """``messages`` is empty in 0.2.24's database: the tool calls come from the cais events."""
    traced = import_traces(FIXTURE / "synth_ai.db", progress=False)
    assert traced.ok, str(traced)
    assert sorted(traced.corpus.ids) == CASES
    for episode in traced.corpus:
        same = imported.corpus[episode.id]
        assert episode.actions == same.actions and episode.calls == same.calls, episode.id
        assert episode.messages == same.messages and episode.views == same.views, episode.id
        assert np.array_equal(episode.inventory, same.inventory), episode.id
        assert np.array_equal(episode.achievement_status, same.achievement_status), episode.id
        assert episode.env_reward.tolist() == same.env_reward.tolist(), episode.id
        assert episode.metadata["producer"] == "synth-ai 0.2.16-0.2.24"
        assert "cais" in episode.metadata["producer_basis"]


def test_the_trace_database_with_a_per_achievement_config_says_the_weights_were_ignored(tmp_path):
    traced = import_traces(FIXTURE / "synth_ai.db", progress=False, config=_table(PER_ACHIEVEMENT))
    assert all(e.metadata.get("weights_ignored") for e in traced.corpus)
    assert f"{WEIGHTS_IGNORED}: 3 episode(s)" in str(traced)


def test_steps_out_of_order_are_a_named_error(tmp_path):
    """A trajectory whose step counter runs 0, 3, 2, 1, 4 (states reordered) is refused, naming
    the file and the step; the other episodes of the batch import."""
    response = _response(LAMBDA_OMITTED)
    steps = response["trajectories"][0]["steps"]
    steps[1]["obs"], steps[3]["obs"] = steps[3]["obs"], steps[1]["obs"]  # counters 0, 12, 7, 3, 15, ...
    (tmp_path / "reordered.json").write_text(json.dumps(response))
    shutil.copy(RESPONSES / f"{LOOSE}.json", tmp_path / "fine.json")
    result = import_rollouts(tmp_path, progress=False)
    assert result.corpus.ids == [LOOSE]
    (error,) = result.errors
    assert error.file.endswith("reordered.json")
    assert error.location == "trajectories[0].steps[2].obs" and "step counter runs backwards" in error.message


def test_a_saved_request_asking_for_weights_puts_the_line_in_the_import_report(tmp_path):
    """A response saved with its request (per_achievement) from the indicator loop: one line, that
    episode only; the lambda-omitted consistent one gets none."""
    for name in (PER_ACHIEVEMENT, LAMBDA_OMITTED):
        response = _response(name)
        response["request"] = json.loads((FIXTURE / "requests" / f"{name}.json").read_text())
        (tmp_path / f"{name}.json").write_text(json.dumps(response))
    result = import_rollouts(tmp_path, progress=False)
    assert [e.id for e in result.corpus if e.metadata.get("weights_ignored")] == [PER_ACHIEVEMENT]
    lines = [line for line in str(result).splitlines() if WEIGHTS_IGNORED in line]
    assert len(lines) == 1 and "1 episode(s)" in lines[0]
    checked = verify(result.corpus)  # the saved request is the config: nothing else needed
    assert checked.decisions_checked == 24 and checked.mismatches.empty


def test_the_pseudo_step_of_a_bare_env_op_is_no_decision(tmp_path):
    """0.2.24 ends a rollout at an ``env`` op without an ``agent`` op with a pseudo-step (raw
    observation, no tool calls, reason no_tool_calls) for which no environment step ran."""
    response = _response(LOOSE)
    trajectory = response["trajectories"][0]
    trajectory["steps"].append(
        {
            "obs": {"inventory": {"health": 9}, "achievements_status": {}},
            "tool_calls": [],
            "reward": None,
            "done": True,
            "info": {"terminated": True, "reason": "no_tool_calls"},
        }
    )
    trajectory["final"]["rollout_status"] = "partial_no_tool_calls"
    (tmp_path / "pseudo.json").write_text(json.dumps(response))
    (episode,) = import_rollouts(tmp_path, progress=False).corpus
    assert episode.n_decisions == 12 and episode.metadata["ended"] == "no_tool_calls"


def test_weights_are_ignored_only_by_the_indicator_loop_and_only_when_shaping_was_on():
    table = _table(PER_ACHIEVEMENT)
    assert weights_ignored(INDICATOR, table) and not weights_ignored(STEPWISE, table)
    assert not weights_ignored(INDICATOR, {**table, "enabled": False})
    assert not weights_ignored(INDICATOR, {**table, "mode": "off"})
    assert not weights_ignored(INDICATOR, _table(LAMBDA_OMITTED))  # consistent asks for no weights


def test_a_trace_database_told_0_2_14_is_refused_session_by_session():
    """Its sessions' shape (no messages, tool calls in the cais events) says 0.2.16-0.2.24."""
    traced = import_traces(FIXTURE / "synth_ai.db", progress=False, producer="synth-ai==0.2.14")
    assert len(traced.corpus) == 0 and traced.errors
    assert all("--producer says synth-ai 0.2.14" in e.message for e in traced.errors)


def test_a_trace_session_out_of_order_is_named_and_its_id_kept_whole(tmp_path):
    """The location stays "session <id>" (a live follower reads the id from it); the message
    names the decision whose state runs backwards."""
    db = tmp_path / "synth_ai.db"
    shutil.copy(FIXTURE / "synth_ai.db", db)
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT e.id, e.system_state_before FROM events e JOIN session_timesteps t ON e.timestep_id = t.id "
            "WHERE e.session_id = ? AND e.event_type = 'environment' ORDER BY t.turn_number",
            (LAMBDA_OMITTED,),
        ).fetchall()
        (first, one), (third, three) = rows[1], rows[3]
        connection.execute("UPDATE events SET system_state_before = ? WHERE id = ?", (three, first))
        connection.execute("UPDATE events SET system_state_before = ? WHERE id = ?", (one, third))
    result = import_traces(db, progress=False)
    assert sorted(result.corpus.ids) == [LOOSE, PER_ACHIEVEMENT]
    (error,) = result.errors
    assert error.location == f"session {LAMBDA_OMITTED}"
    assert error.message.startswith("decision 3.system_state_before: step counter runs backwards")
