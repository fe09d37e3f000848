"""The rollout bookkeeping around the reward: decision_rewards and metrics.details["stepwise"]."""

from __future__ import annotations

import pytest
from helpers import VECTORS, read_jsonl

from workbench.core.config import RewardConfig
from workbench.core.episode_reward import actions_summary, score_episode
from workbench.errors import EpisodeError

EPISODE = read_jsonl(VECTORS / "episodes.jsonl")[0]
SHAPED = EPISODE["configs"]["shaped"]


def test_summary_keys_in_the_task_apps_order():
    config = RewardConfig.from_dict({**SHAPED, "step_beta": 0.25})
    summary = score_episode(EPISODE["states"], config).summary
    assert list(summary) == [
        "indicator_sum",
        "reward_sum",
        "resource_reward",
        "new_achievements_total",
        "mode",
        "strategy",
        "indicator_lambda",
        "step_beta",
        "weights",
        "k_limits",
        "unique_achievements_total",
        "unique_achievements",
        "final_achievements",
    ]
    assert summary["mode"] == "decision_stepwise"
    assert summary["indicator_lambda"] == 0.5
    assert summary["weights"] == SHAPED["weights"]


def test_summary_sums_the_decisions():
    result = score_episode(EPISODE["states"], RewardConfig.from_dict(SHAPED))
    total = 0.0
    for decision in result.decisions:
        total += decision.reward
    assert result.summary["reward_sum"] == total
    assert result.summary["indicator_sum"] == sum(d.stats["indicator"] for d in result.decisions)
    assert result.summary["resource_reward"] == pytest.approx(
        sum(d.stats.get("resource_reward", 0.0) for d in result.decisions)
    )
    final = sorted(n for n, v in EPISODE["states"][-1]["achievements_status"].items() if v)
    assert result.summary["final_achievements"] == final
    assert result.summary["unique_achievements"] == final
    assert result.summary["unique_achievements_total"] == result.summary["new_achievements_total"] == len(final)


def test_consistent_summary_has_no_weights_and_no_beta():
    summary = score_episode(
        EPISODE["states"], RewardConfig.from_dict({"strategy": "simple", "weights": {"eat_cow": 2}})
    ).summary
    assert "weights" not in summary and "k_limits" not in summary and "step_beta" not in summary
    assert summary["strategy"] == "consistent"
    assert summary["indicator_lambda"] == 0.0  # echoed as read; it still scales by 1.0


def test_decision_rewards_count_unique_unlocks():
    states = [
        {"achievements_status": {"collect_wood": False, "place_table": False}},
        {"achievements_status": {"collect_wood": True, "place_table": False}},
        {"achievements_status": {"collect_wood": False, "place_table": False}},
        {"achievements_status": {"collect_wood": True, "place_table": True}},
    ]
    result = score_episode(states, RewardConfig())
    assert [d.decision_rewards for d in result.decisions] == [
        {"turn": 1, "ach_delta": 1, "unique_delta": 1, "all": ["collect_wood"], "unique": ["collect_wood"]},
        {"turn": 2, "ach_delta": 0, "unique_delta": 0, "all": [], "unique": []},
        {
            "turn": 3,
            "ach_delta": 2,
            "unique_delta": 1,
            "all": ["collect_wood", "place_table"],
            "unique": ["place_table"],
        },
    ]
    assert result.summary["new_achievements_total"] == 3
    assert result.summary["unique_achievements_total"] == 2


def test_actions_fill_the_decision_samples():
    states = EPISODE["states"][:3]
    result = score_episode(states, RewardConfig(), [["do"], ["move_left", "do"]])
    assert result.decisions[1].decision_sample["actions"] == actions_summary(["move_left", "do"])


def test_an_episode_without_decisions_is_an_error():
    with pytest.raises(EpisodeError, match="at least one decision"):
        score_episode(EPISODE["states"][:1], RewardConfig())
    with pytest.raises(EpisodeError, match="action lists"):
        score_episode(EPISODE["states"][:3], RewardConfig(), [["do"]])
