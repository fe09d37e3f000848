"""workbench.alignment: does the shaped return rank episodes the way progress does?"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import REPO
from test_episodes_storage import make_episode

from workbench.alignment import misranked_pairs, progress_agreement, returns_by_group
from workbench.config import RewardConfig
from workbench.episodes import Corpus
from workbench.sample import sample_corpus
from workbench.scoring import score

SHAPED = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")
CONSISTENT = RewardConfig(enabled=True, mode="decision_stepwise", strategy="consistent")


class FakeScores:
    """Just the episode table the functions read, to pin down exact cases."""

    def __init__(self, returns, achievements):
        self.episodes = pd.DataFrame({
            "episode": [f"e{i}" for i in range(len(returns))],
            "reward_sum": np.asarray(returns, dtype=float),
            "unique_achievements_total": np.asarray(achievements, dtype=np.int64),
            "env_return": np.zeros(len(returns)),
        })


def test_agreement_is_spearmans_rho():
    assert progress_agreement(FakeScores([1, 2, 3], [1, 2, 3])) == pytest.approx(1.0)
    assert progress_agreement(FakeScores([3, 2, 1], [1, 2, 3])) == pytest.approx(-1.0)
    # Ranks, not values: a monotone but non-linear relation is perfect agreement.
    assert progress_agreement(FakeScores([1, 10, 1000], [1, 2, 3])) == pytest.approx(1.0)
    # Ties get average ranks: ranks (1.5, 1.5, 3) against (1, 2, 3).
    assert progress_agreement(FakeScores([5, 5, 9], [1, 2, 3])) == pytest.approx(np.corrcoef([1.5, 1.5, 3], [1, 2, 3])[0, 1])
    assert math.isnan(progress_agreement(FakeScores([1, 1, 1], [1, 2, 3])))
    assert math.isnan(progress_agreement(FakeScores([1, 2, 3], [4, 4, 4])))


def test_misranked_pairs_are_strict_and_ordered_worst_first():
    # e0: 3 achievements, return 1   e1: 1 achievement, return 5   e2: 2 achievements, return 5
    # e3: 2 achievements, return 1 (ties with e0 on return: not a pair)
    pairs = misranked_pairs(FakeScores([1, 5, 5, 1], [3, 1, 2, 2]))
    assert list(zip(pairs["paid_more"], pairs["progressed_more"])) == [
        ("e1", "e0"),  # gap 2 achievements
        ("e2", "e0"),  # gap 1, overpaid by 4
        ("e1", "e3"),  # gap 1, overpaid by 4 (same as above: stable in corpus order)
    ]
    row = pairs.iloc[0]
    assert (row.return_paid_more, row.return_progressed_more) == (5.0, 1.0)
    assert (row.achievements_paid_more, row.achievements_progressed_more) == (1, 3)
    assert misranked_pairs(FakeScores([1, 2, 3], [1, 2, 3])).empty


def test_misranked_pairs_agree_with_a_brute_force_count_across_chunks(monkeypatch):
    import workbench.alignment as alignment

    rng = np.random.default_rng(0)
    returns, achievements = rng.integers(0, 6, 60).astype(float), rng.integers(0, 6, 60)
    expected = {(f"e{j}", f"e{i}") for i in range(60) for j in range(60)
                if achievements[i] > achievements[j] and returns[i] < returns[j]}
    monkeypatch.setattr(alignment, "_PAIR_CHUNK", 7 * 60)  # several chunks, the last one partial
    pairs = misranked_pairs(FakeScores(returns, achievements))
    assert set(zip(pairs["paid_more"], pairs["progressed_more"])) == expected
    assert len(pairs) == len(expected)


def test_the_farmer_is_overpaid_under_the_upstream_shaped_config():
    corpus = sample_corpus()
    shaped, consistent = score(corpus, SHAPED), score(corpus, CONSISTENT)
    pairs = misranked_pairs(shaped)
    assert len(pairs) >= 1 and pairs["paid_more"].str.startswith("farmer").all()
    assert pairs["progressed_more"].str.startswith("scripted").all()
    # consistent pays one per unlocking decision: with one action per decision, that is one per
    # achievement, so it agrees with progress exactly.
    assert progress_agreement(consistent) == pytest.approx(1.0) and misranked_pairs(consistent).empty
    groups = returns_by_group(shaped, corpus).set_index("policy")
    assert list(groups.index) == ["scripted", "farmer", "random"]
    assert groups.loc["farmer", "return_per_achievement"] > groups.loc["scripted", "return_per_achievement"]


def test_returns_by_group_numbers_and_errors():
    episodes = [make_episode("a0", policy="a", seed=1), make_episode("a1", policy="a", seed=2), make_episode("b0", policy="b", seed=3)]
    corpus = Corpus(episodes)
    scores = score(corpus, SHAPED)
    table = returns_by_group(scores, corpus)
    assert list(table.columns) == ["policy", "episodes", "mean_return", "mean_achievements", "mean_env_return",
                                   "return_per_achievement"]
    a = scores.episodes.iloc[:2]
    row = table.iloc[0]
    assert row["policy"] == "a" and row["episodes"] == 2
    assert row["mean_return"] == pytest.approx(a["reward_sum"].mean())
    assert row["mean_env_return"] == pytest.approx(a["env_return"].mean())
    assert row["return_per_achievement"] == pytest.approx(a["reward_sum"].mean() / a["unique_achievements_total"].mean())
    with pytest.raises(KeyError, match="no index column 'strategy'"):
        returns_by_group(scores, corpus, by="strategy")


def test_group_comparison_puts_both_configs_side_by_side():
    from workbench.alignment import group_comparison
    from workbench.scoring import compare

    corpus = sample_corpus()
    recommended = RewardConfig.from_file(REPO / "configs" / "recommended.yaml")
    table = group_comparison(compare(corpus, SHAPED, recommended), corpus).set_index("policy")
    a = returns_by_group(score(corpus, SHAPED), corpus).set_index("policy")
    b = returns_by_group(score(corpus, recommended), corpus).set_index("policy")
    assert list(table.index) == ["scripted", "farmer", "random"]
    assert table["mean_return_a"].equals(a["mean_return"]) and table["mean_return_b"].equals(b["mean_return"])
    assert table["return_per_achievement_b"].equals(b["return_per_achievement"])
    assert table["mean_achievements"].equals(a["mean_achievements"])
    # The fix in numbers: under B the farmer no longer earns more per achievement than scripted.
    assert table.loc["farmer", "return_per_achievement_a"] > table.loc["scripted", "return_per_achievement_a"]
    assert table.loc["farmer", "return_per_achievement_b"] < table.loc["scripted", "return_per_achievement_b"]


def test_progress_summary_names_the_worst_pair():
    from workbench.alignment import progress_summary

    text = progress_summary(FakeScores([1, 5, 5, 1], [3, 1, 2, 2]))
    rho = progress_agreement(FakeScores([1, 5, 5, 1], [3, 1, 2, 2]))
    assert text.startswith(f"rank agreement with progress {rho:.3f}")
    assert "3 episode pair(s) paid more for less progress, worst: e1 (1 achievements, return 5.000) over e0 (3, 1.000)" in text
    assert progress_summary(FakeScores([1, 2], [1, 2])).endswith("0 episode pair(s) paid more for less progress")
    assert "n/a (returns or achievements all equal)" in progress_summary(FakeScores([1], [1]))


def test_returns_by_config_has_a_column_per_config_and_the_episodes_progress():
    sample = sample_corpus()
    from workbench.scorecard import returns_by_config

    configs = {name: RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in ("upstream_shaped", "recommended")}
    table = returns_by_config(sample, configs)
    assert list(table.columns) == ["upstream_shaped", "recommended", "policy", "n_unlocked"]
    assert list(table.index) == sample.ids
    for name, config in configs.items():
        np.testing.assert_array_equal(table[name].to_numpy(), score(sample, config).reward_sum)


def test_scorecard_numbers_are_the_alignment_functions():
    sample = sample_corpus()
    from workbench.scorecard import scorecard

    configs = {name: RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in ("upstream_shaped", "recommended")}
    card = scorecard(sample, configs)
    for name, config in configs.items():
        scores = score(sample, config)
        assert card.loc[name, "rank agreement"] == progress_agreement(scores)
        assert card.loc[name, "misranked pairs"] == len(misranked_pairs(scores))
        per = returns_by_group(scores, sample).set_index("policy")["return_per_achievement"]
        assert card.loc[name, "farmer / scripted pay per achievement"] == per["farmer"] / per["scripted"]
    # upstream_shaped overpays the farmer; recommended pays it less per achievement than scripted.
    assert card.loc["upstream_shaped", "farmer / scripted pay per achievement"] > 1
    assert card.loc["recommended", "farmer / scripted pay per achievement"] < 1
    assert "farmer / scripted pay per achievement" not in scorecard(sample, configs, hacker="nobody").columns
