"""Loose tool calls through the rollout importer: played by the task app's rules, kept as given,
counted in the report, stored and read back (old parts without the calls column too)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from helpers.hostile import rollout, text_obs

from workbench.data.importers import import_rollouts
from workbench.data.storage import load_corpus, save_corpus
from workbench.views.widgets.replayer import calls_given


def _write(path, response):
    path.write_text(json.dumps(response))
    return path


def _loose_rollout(run_id: str = "loose") -> dict:
    response = rollout(run_id, [text_obs(0), text_obs(1), text_obs(2), text_obs(3), text_obs(4)])
    steps = response["trajectories"][0]["steps"]
    steps[0]["tool_calls"] = [{"tool_name": "do", "arguments": "{}"}]
    steps[1]["tool_calls"] = [{"tool_name": "interact_many", "arguments": {"actions": ["jump", "Move_Left"]}}]
    steps[2]["tool_calls"] = [{"tool_name": "interact_many", "arguments": {"actions": ["sleep"] * 25}}]
    steps[3]["tool_calls"] = [{"tool_name": "interact_many", "arguments": {"actions": ["noop"]}}]
    return response


def test_loose_calls_play_what_the_task_app_plays_and_are_counted(tmp_path):
    result = import_rollouts(_write(tmp_path / "loose.json", _loose_rollout()), progress=False)
    assert result.ok, str(result)
    episode = result.corpus["loose"]
    assert episode.actions == [["do"], ["noop"], ["sleep"] * 20, ["noop"]]
    assert json.loads(episode.calls[0]) == [{"tool_name": "do", "arguments": "{}"}]
    assert episode.metadata["normalised_calls"] == [[1, ["json_string"]], [2, ["unknown", "noop"]], [3, ["cut"]]]
    (decisions,) = result.normalised.values()
    assert [(d.episode, d.decision) for d in decisions] == [("loose", 1), ("loose", 2), ("loose", 3)]
    assert result.n_normalised == 3
    report = str(result)
    assert "3 decision(s) played by the task app's tool-call rules" in report
    assert "more than 20 actions: the first 20 played: 1" in report and "e.g. loose decision 1" in report


def test_text_rollouts_without_logged_rises_say_their_counts_are_estimated(tmp_path):
    report = str(import_rollouts(_write(tmp_path / "loose.json", _loose_rollout()), progress=False))
    assert "0 problem(s)" in report
    assert "1 of 1 episode(s) have estimated counts (loose)" in report
    assert "per_achievement under-pays" in report and "consistent" in report


def test_a_call_the_task_app_refuses_costs_only_its_episode(tmp_path):
    bad = _loose_rollout("bad")
    bad["trajectories"][0]["steps"][2]["tool_calls"] = [{"arguments": {"actions": ["do"]}}]
    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps(bad) + "\n" + json.dumps(_loose_rollout("good")) + "\n")
    result = import_rollouts(path, progress=False)
    assert result.corpus.ids == ["good"]
    (issue,) = result.errors
    assert issue.location == "line 1, trajectories[0].steps[2].tool_calls"
    assert "neither 'tool' nor 'tool_name'" in issue.message and "refuses it too" in issue.message


def test_calls_are_stored_and_read_back_and_old_parts_read_without_them(tmp_path):
    corpus = import_rollouts(_write(tmp_path / "loose.json", _loose_rollout()), progress=False).corpus
    save_corpus(corpus, tmp_path / "corpus")
    reloaded = load_corpus(tmp_path / "corpus")["loose"]
    assert reloaded.calls == corpus["loose"].calls and reloaded.actions == corpus["loose"].actions
    # A part written before the calls column: drop it from the decisions table.
    (decisions,) = (tmp_path / "corpus" / "decisions").glob("*.parquet")
    table = pq.read_table(decisions)
    pq.write_table(table.drop(["calls"]), decisions, write_page_checksum=True)
    old = load_corpus(tmp_path / "corpus")["loose"]
    assert old.calls is None and old.messages == corpus["loose"].messages and old.views == corpus["loose"].views


def test_the_replayer_gets_the_calls_as_given_where_they_differ_from_the_actions_played(tmp_path):
    episode = import_rollouts(_write(tmp_path / "loose.json", _loose_rollout()), progress=False).corpus["loose"]
    given = calls_given(episode)
    assert given is not None
    assert [g is not None for g in given] == [True, True, True, False]
    assert json.loads(given[1]) == [{"tool_name": "interact_many", "arguments": {"actions": ["jump", "Move_Left"]}}]
