"""The real task-app server's own rollouts (shipped in ``workbench/data/shipped/sample_imports/taskapp``,
see its README) import,
verify and re-score exactly, without running the server: the fast check of what
``tests/test_taskapp.py`` proves against the live server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from taskapp.truth import reference_stepwise, server_episode

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.importers import import_rollouts
from workbench.data.sample import sample_imports_path
from workbench.scoring import score, verify

ROLLOUTS = sample_imports_path() / "taskapp"
FILES = sorted(ROLLOUTS.glob("*.json"))
OTHER_CONFIGS = {
    "recommended": RewardConfig.from_file(Path(__file__).resolve().parents[2] / "configs" / "recommended.yaml"),
    "unlimited": RewardConfig(
        strategy="per_achievement",
        weights={"collect_wood": 0.3, "collect_drink": 2.0},
        k_limits={"collect_wood": 0, "collect_drink": 0},
        indicator_lambda=0.7,
    ),
    "consistent": RewardConfig(strategy="consistent", indicator_lambda=0.3),
}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    result = import_rollouts(ROLLOUTS, progress=False)
    assert result.ok and not result.warnings, str(result)
    return result.corpus


def test_the_shipped_files_are_the_real_servers():
    assert len(FILES) == 4
    for file in FILES:
        response = json.loads(file.read_text(encoding="utf-8"))
        assert {"trace_correlation_id", "pipeline_metadata"} <= set(response)
        step = response["trajectories"][0]["steps"][0]
        assert set(step) == {"obs", "tool_calls", "reward", "done", "truncated", "info"}
        assert set(step["obs"]) == {"text"}


def test_counts_are_logged_for_per_achievement_and_estimated_for_consistent(corpus):
    by_strategy = {e.id: e.logged["summary"]["strategy"] for e in corpus}
    for episode in corpus:
        expected = "logged" if by_strategy[episode.id] == "per_achievement" else "estimated"
        assert episode.metadata["counts"] == expected
    assert sorted(corpus.index["counts"]) == ["estimated", "estimated", "logged", "logged"]


def test_every_logged_decision_reproduces(corpus):
    result = verify(corpus)
    assert result.decisions_checked == corpus.n_decisions == 220
    assert result.ok, result.mismatches.to_string()


@pytest.mark.parametrize("name", list(OTHER_CONFIGS))
def test_rescoring_equals_the_task_apps_function_on_the_servers_states(corpus, name):
    config = OTHER_CONFIGS[name]
    compared = 0
    for file in FILES:
        truth = server_episode(json.loads(file.read_text(encoding="utf-8")))
        if config.effective_strategy == "per_achievement" and truth.counts is None:
            continue  # a consistent rollout logged no rises: its counts are not knowable
        expected = [stats["reward"] for _info, _sample, stats in reference_stepwise(truth, config)]
        assert score(Corpus([corpus[file.stem]]), config).reward.tolist() == expected, file.name
        compared += 1
    assert compared >= 2


def test_text_episodes_keep_what_the_model_saw_and_said(corpus):
    for episode in corpus:
        assert len(episode.views) == episode.n_decisions + 1
        assert all(len(view.splitlines()) == 5 for view in episode.views)
        assert len(episode.messages) == episode.n_decisions and all(episode.messages)
    # The policy rewrote the model's ["move_right", "do"] into what ran, ["move_right"].
    rewritten = [
        (e.id, i)
        for e in corpus
        for i, m in enumerate(e.messages)
        if '"actions": ["move_right", "do"]' in m.replace("'", '"')
    ]
    assert rewritten
    for episode_id, i in rewritten:
        assert corpus[episode_id].actions[i] == ["move_right"]
