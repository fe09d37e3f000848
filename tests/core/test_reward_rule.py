"""The reward rules (``core.reward_rule``) against hand computations, and ``Scores``' pay per kind."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.core.components import KINDS
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.resource_weights import TASK_APP_RESOURCE_WEIGHTS
from workbench.core.reward_rule import (
    CONSISTENT_RULE,
    INDICATOR_ONLY_RULE,
    N_SLOTS,
    PER_ACHIEVEMENT_RULE,
    credited_unlocks,
    rule_for,
)
from workbench.data.episodes import Corpus, Episode, reset_state_arrays
from workbench.data.importers.producers import INDICATOR, STEPWISE
from workbench.scoring import score


def test_consistent_pays_the_indicator_alone():
    rule = CONSISTENT_RULE
    assert rule.kinds == ("indicator",)
    assert rule.pays_indicator and not rule.pays_credits and not rule.pays_resources and not rule.reads_counts
    # weights, k-limits and resource tables are unread: zero credits, zero pay per slot
    assert rule.credit_weights({"collect_wood": 3.0}).tolist() == [0.0] * 22
    assert rule.slot_pay(TASK_APP_RESOURCE_WEIGHTS).tolist() == [0.0] * 38
    # lambda as the task app reads it: 0 or None scales by 1.0 (quirk 2), anything else as given
    assert rule.factor(0) == 1.0 and rule.factor(None) == 1.0 and rule.factor(0.0) == 1.0
    assert rule.factor(0.5) == 0.5 and rule.factor(-2) == -2.0 and rule.factor("0.25") == 0.25
    with pytest.raises(ValueError):
        rule.factor("junk")  # float("junk") raises in the task app too


def test_per_achievement_pays_credits_and_resources():
    rule = PER_ACHIEVEMENT_RULE
    assert rule.kinds == ("achievement", "inventory", "achievement_count")
    assert not rule.pays_indicator and rule.pays_credits and rule.pays_resources and rule.reads_counts
    # weights.get(name, 1.0) after coercion: "x" is dropped (default 1.0), an unknown name ignored
    weights = rule.credit_weights({"collect_wood": 3, "eat_cow": "x", "not_an_achievement": 9.0})
    expected = [3.0 if name == "collect_wood" else 1.0 for name in ACHIEVEMENTS]
    assert weights.tolist() == expected
    # k-limits: int() only ("2.5" dropped -> 1, 1.7 -> 1), default 1, unknown names ignored
    limits = rule.credit_limits({"collect_wood": 0, "eat_cow": "2.5", "place_table": 1.7, "nope": 4})
    assert limits.tolist() == [0 if name == "collect_wood" else 1 for name in ACHIEVEMENTS]
    # per slot: the spec's tables (reward.md): wood 0.10, health the inventory default 0.05,
    # the collect_wood count 0.08
    slots = rule.slot_pay(TASK_APP_RESOURCE_WEIGHTS)
    assert len(slots) == N_SLOTS == 38
    assert slots[INVENTORY_ITEMS.index("wood")] == 0.10
    assert slots[INVENTORY_ITEMS.index("health")] == 0.05
    assert slots[16 + ACHIEVEMENTS.index("collect_wood")] == 0.08
    assert rule.factor(0) == 1.0 and rule.factor(3.0) == 3.0


def test_credited_unlocks_by_hand():
    # ordinal < limit, or limit <= 0 (unlimited); a limit above 1 never acts in Crafter (quirk 1)
    ordinal = np.array([0, 1, 0, 5, 2])
    limit = np.array([1, 1, 0, 0, 2])
    assert credited_unlocks(ordinal, limit).tolist() == [True, False, True, True, False]


def test_the_indicator_only_producer_has_its_own_lambda():
    rule = INDICATOR_ONLY_RULE
    assert rule.kinds == ("indicator",) and not rule.pays_credits and not rule.pays_resources
    # float(value or 0.0), 0.0 when that raises; then 0 pays 0 (not 1.0 as the task app)
    assert rule.factor(0) == 0.0 and rule.factor(None) == 0.0 and rule.factor("junk") == 0.0
    assert rule.factor("0.5") == 0.5 and rule.factor(2) == 2.0
    assert INDICATOR.rule is rule and INDICATOR.rule_for({"strategy": "per_achievement"}) is rule
    assert STEPWISE.rule is None and STEPWISE.rule_for({"strategy": "complex"}) is PER_ACHIEVEMENT_RULE
    assert STEPWISE.rule_for(None) is CONSISTENT_RULE


def test_rule_for_reads_every_spelling():
    assert rule_for("complex") is PER_ACHIEVEMENT_RULE
    assert rule_for("  Per-Achievement ") is PER_ACHIEVEMENT_RULE
    assert rule_for("simple") is CONSISTENT_RULE
    assert rule_for("per achievement") is CONSISTENT_RULE  # an unknown spelling runs consistent (quirk 5)
    assert rule_for(None) is CONSISTENT_RULE and rule_for(3) is CONSISTENT_RULE
    assert RewardConfig(strategy="achievement_weighted").rule is PER_ACHIEVEMENT_RULE
    assert RewardConfig(indicator_lambda=0.0).effective_lambda == 1.0


def _two_decisions() -> Corpus:
    """Decision 1: wood 0 -> 2 and collect_wood unlocked (count 0 -> 1); decision 2: wood 2 -> 1."""
    inventory0, counts0 = reset_state_arrays()
    inventory = np.vstack([inventory0, inventory0, inventory0]).astype(np.int64)
    counts = np.vstack([counts0, counts0, counts0]).astype(np.int64)
    wood, collect = INVENTORY_ITEMS.index("wood"), ACHIEVEMENTS.index("collect_wood")
    inventory[1, wood], inventory[2, wood] = 2, 1
    counts[1:, collect] = 1
    episode = Episode(
        id="hand",
        inventory=inventory,
        achievement_counts=counts,
        actions=[["do"], ["noop"]],
        env_reward=np.array([1.0, 0.0]),
        done=[False, True],
        player_pos=np.zeros((3, 2), dtype=np.int64),
        metadata={"source": "recorded", "policy": "hand", "seed": 0},
    )
    return Corpus([episode])


def test_scores_pay_per_kind_by_hand():
    corpus = _two_decisions()
    shaped = RewardConfig(strategy="per_achievement", weights={"collect_wood": 2.0}, indicator_lambda=0.5)
    scores = score(corpus, shaped)
    # decision 1, after lambda 0.5: credit 0.5 * 2.0 = 1.0; wood 0.5 * (0.10 * 2) = 0.1;
    # the collect_wood count 0.5 * (0.08 * 1) = 0.04; decision 2 (a loss) pays nothing
    assert scores.pay("indicator").tolist() == [0.0, 0.0]
    assert scores.pay("achievement").tolist() == [1.0, 0.0]
    assert scores.pay("inventory").tolist() == pytest.approx([0.1, 0.0], abs=1e-15)
    assert scores.pay("achievement_count").tolist() == pytest.approx([0.04, 0.0], abs=1e-15)
    assert scores.kind_pay.shape == (2, len(KINDS))
    assert scores.kind_pay.sum(axis=1) == pytest.approx(scores.reward.tolist(), abs=1e-15)
    consistent = score(corpus, RewardConfig(strategy="consistent", indicator_lambda=0.0))
    # consistent, lambda 0 read as 1.0: 1.0 on the unlocking decision, nothing else
    assert consistent.rule is CONSISTENT_RULE
    assert consistent.pay("indicator").tolist() == [1.0, 0.0]
    assert consistent.kind_pay[:, 1:].tolist() == [[0.0] * 3, [0.0] * 3]
    with pytest.raises(ValueError):
        consistent.pay("bonus")
