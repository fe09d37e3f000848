"""Every case of the task app's own vectors, compared exactly (floats, key order, types)."""

from __future__ import annotations

import copy

import pytest
from helpers import VECTORS, exact, read_jsonl

from workbench.core.config import RewardConfig
from workbench.core.episode_reward import score_episode
from workbench.core.reward import coerce_k_limits, coerce_weights, compute_stepwise_reward, normalize_strategy

DECISIONS = read_jsonl(VECTORS / "decisions.jsonl")
EPISODES = read_jsonl(VECTORS / "episodes.jsonl")


def test_vectors_are_all_there():
    assert len(DECISIONS) == 240
    assert len(EPISODES) == 3


@pytest.mark.parametrize("case", DECISIONS, ids=[c["case"] for c in DECISIONS])
def test_decision_vector(case):
    call = copy.deepcopy(case["call"])
    counts = call.pop("episode_counts")
    prev, new, index, actions, lam = (
        call.pop(k)
        for k in ("prev_achievements", "new_achievements", "decision_index", "actions_summary", "indicator_lambda")
    )
    info, sample, stats = compute_stepwise_reward(prev, new, index, actions, lam, episode_counts=counts, **call)
    expected = case["expected"]
    assert exact(info) == exact(expected["stepwise_info"])
    assert exact(sample) == exact(expected["decision_sample"])
    assert exact(stats) == exact(expected["stats"])
    assert exact(counts) == exact(expected["episode_counts_after"])


@pytest.mark.parametrize("case", DECISIONS, ids=[c["case"] for c in DECISIONS])
def test_config_normalisation_vector(case):
    raw, normalized = case["raw_config"], case["normalized"]
    assert normalize_strategy(raw["strategy"]) == normalized["strategy"]
    assert exact(coerce_weights(raw["weights"])) == exact(normalized["weights"])
    assert exact(coerce_k_limits(raw["k_limits"])) == exact(normalized["k_limits"])
    config = RewardConfig.from_dict(raw)
    assert config.effective_strategy == normalized["strategy"]
    assert exact(dict(config.weights)) == exact(normalized["weights"])
    assert exact(dict(config.k_limits)) == exact(normalized["k_limits"])


EPISODE_CASES = [(e, name) for e in EPISODES for name in e["configs"]]


@pytest.mark.parametrize("episode,config_name", EPISODE_CASES, ids=[f"{e['case']}-{n}" for e, n in EPISODE_CASES])
def test_episode_vector(episode, config_name):
    config = RewardConfig.from_dict(episode["configs"][config_name])
    actions = [[str(a) for a in decision] for decision in episode["actions"]]
    result = score_episode(episode["states"], config, actions)
    expected = episode["expected"][config_name]
    assert len(result.decisions) == len(expected)
    for got, want in zip(result.decisions, expected):
        assert exact(got.stats["reward"]) == exact(want["reward"])
        assert exact(got.stats["base_reward"]) == exact(want["base_reward"])
        assert exact(got.stats["indicator"]) == exact(want["indicator"])
        assert exact(got.stepwise_info) == exact(want["stepwise_info"])
