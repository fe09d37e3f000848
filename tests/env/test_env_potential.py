"""CrafterStepwiseEnv(shaping="potential"): credits plus gamma Phi(s') - Phi(s), equal to the corpus-level computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.analysis.decision_kinds import kind_rewards
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.policies import farmer_policy
from workbench.env import CrafterStepwiseEnv
from workbench.errors import EnvError
from workbench.scoring import prepare, score
from workbench.scoring.potential import shaping_payments

pytestmark = pytest.mark.crafter

#: The spec's resource tables (reward.md); anything else pays 0.05.
SPEC_ITEMS = {"wood": 0.10, "sapling": 0.08, "stone": 0.15, "coal": 0.18, "iron": 0.22, "food": 0.07, "drink": 0.07}
SPEC_ITEMS |= {"energy": 0.04, "wood_pickaxe": 0.40, "stone_pickaxe": 0.55, "iron_pickaxe": 0.75, "wood_sword": 0.35}
SPEC_ITEMS |= {"stone_sword": 0.50, "iron_sword": 0.70}
SPEC_COUNTS = {"collect_wood": 0.08, "collect_sapling": 0.06, "collect_stone": 0.10, "collect_coal": 0.12}
SPEC_COUNTS |= {"collect_iron": 0.14, "collect_drink": 0.06, "collect_food": 0.06, "collect_plant": 0.06}


def _phi(inventory, counts) -> float:
    """The potential-based counterpart of upstream_shaped (lambda 0.5) of one state, by hand."""
    total = sum(SPEC_ITEMS.get(item, 0.05) * int(n) for item, n in zip(INVENTORY_ITEMS, inventory))
    total += sum(SPEC_COUNTS.get(name, 0.05) for name, n in zip(ACHIEVEMENTS, counts) if n > 0)
    return 0.5 * total


SHAPED = RewardConfig.from_file(Path(__file__).resolve().parents[2] / "configs" / "upstream_shaped.yaml")


def _play(env: CrafterStepwiseEnv, seed: int, policy=None) -> list[float]:
    env.action_space.seed(seed)
    env.reset(seed=seed)
    rewards = []
    while True:
        action = env.encode(policy(env.policy_input())) if policy else env.action_space.sample()
        _, reward, terminated, truncated, _ = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            return rewards


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_potential_rewards_equal_credits_plus_shaping_on_the_recording(gamma):
    env = CrafterStepwiseEnv(SHAPED, length=250, record=True, shaping="potential", gamma=gamma)
    played = [_play(env, 3), _play(env, 11, farmer_policy(np.random.default_rng(0)))]
    corpus = env.recorded
    expected = kind_rewards(prepare(corpus), SHAPED)[:, 0] + shaping_payments(corpus.decision_arrays(), SHAPED, gamma)
    assert [r for rewards in played for r in rewards] == expected.tolist()
    # gamma = 1: per episode the shaping telescopes to Phi(end) - Phi(reset), Phi(end) = 0 after a
    # death; Phi by hand from the spec's tables (reward.md) times lambda 0.5, over the episode rows.
    if gamma == 1.0:
        credits = kind_rewards(prepare(corpus), SHAPED)[:, 0]
        start = 0
        for episode, rewards in zip(corpus, played):
            paid = sum(rewards) - sum(credits[start : start + len(rewards)])
            start += len(rewards)
            died = episode.inventory[-1][INVENTORY_ITEMS.index("health")] == 0
            end = 0.0 if died else _phi(episode.inventory[-1], episode.achievement_counts[-1])
            assert paid == pytest.approx(end - _phi(episode.inventory[0], episode.achievement_counts[0]), abs=1e-9)


def test_task_app_shaping_is_the_default_and_bad_settings_are_refused():
    env = CrafterStepwiseEnv(SHAPED, length=60, record=True)
    rewards = _play(env, 5)
    assert rewards == score(env.recorded, SHAPED).decisions["reward"].tolist()
    with pytest.raises(EnvError, match="shaping must be one of"):
        CrafterStepwiseEnv(SHAPED, shaping="ng")
    with pytest.raises(EnvError, match="gamma must be a number within"):
        CrafterStepwiseEnv(SHAPED, shaping="potential", gamma=1.5)
