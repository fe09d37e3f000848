"""workbench.analysis.alignment: does the shaped return rank episodes the way progress does?"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from helpers.episodes import make_episode

from workbench.analysis.alignment import misranked_pairs, progress_agreement, returns_by_group
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus
from workbench.errors import CorpusError
from workbench.scoring import score

SHAPED = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")
CONSISTENT = RewardConfig(enabled=True, mode="decision_stepwise", strategy="consistent")


class FakeScores:
    """Just the episode table the functions read, to pin down exact cases."""

    def __init__(self, returns, achievements):
        self.episodes = pd.DataFrame(
            {
                "episode": [f"e{i}" for i in range(len(returns))],
                "reward_sum": np.asarray(returns, dtype=float),
                "unique_achievements_total": np.asarray(achievements, dtype=np.int64),
                "env_return": np.zeros(len(returns)),
            }
        )


def test_agreement_is_spearmans_rho():
    assert progress_agreement(FakeScores([1, 2, 3], [1, 2, 3])) == pytest.approx(1.0)
    assert progress_agreement(FakeScores([3, 2, 1], [1, 2, 3])) == pytest.approx(-1.0)
    # Ranks, not values: a monotone but non-linear relation is perfect agreement.
    assert progress_agreement(FakeScores([1, 10, 1000], [1, 2, 3])) == pytest.approx(1.0)
    # Ties get average ranks: ranks (1.5, 1.5, 3) against (1, 2, 3).
    assert progress_agreement(FakeScores([5, 5, 9], [1, 2, 3])) == pytest.approx(
        np.corrcoef([1.5, 1.5, 3], [1, 2, 3])[0, 1]
    )
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
    from workbench.analysis import alignment

    rng = np.random.default_rng(0)
    returns, achievements = rng.integers(0, 6, 60).astype(float), rng.integers(0, 6, 60)
    expected = {
        (f"e{j}", f"e{i}")
        for i in range(60)
        for j in range(60)
        if achievements[i] > achievements[j] and returns[i] < returns[j]
    }
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
    episodes = [
        make_episode("a0", policy="a", seed=1),
        make_episode("a1", policy="a", seed=2),
        make_episode("b0", policy="b", seed=3),
    ]
    corpus = Corpus(episodes)
    scores = score(corpus, SHAPED)
    table = returns_by_group(scores, corpus)
    assert list(table.columns) == [
        "policy",
        "episodes",
        "mean_return",
        "mean_achievements",
        "mean_env_return",
        "return_per_achievement",
    ]
    a = scores.episodes.iloc[:2]
    row = table.iloc[0]
    assert row["policy"] == "a" and row["episodes"] == 2
    assert row["mean_return"] == pytest.approx(a["reward_sum"].mean())
    assert row["mean_env_return"] == pytest.approx(a["env_return"].mean())
    assert row["return_per_achievement"] == pytest.approx(
        a["reward_sum"].mean() / a["unique_achievements_total"].mean()
    )
    with pytest.raises(CorpusError, match="no index column 'strategy'"):
        returns_by_group(scores, corpus, by="strategy")


def test_group_comparison_puts_both_configs_side_by_side():
    from workbench.analysis.alignment import group_comparison
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
    from workbench.analysis.alignment import progress_summary

    text = progress_summary(FakeScores([1, 5, 5, 1], [3, 1, 2, 2]))
    rho = progress_agreement(FakeScores([1, 5, 5, 1], [3, 1, 2, 2]))
    assert text.startswith(f"rank agreement with progress {rho:.3f}")
    assert (
        "3 episode pair(s) paid more for less progress, worst: e1 (1 achievements, return 5.000) over e0 (3, 1.000)"
        in text
    )
    assert progress_summary(FakeScores([1, 2], [1, 2])).endswith("0 episode pair(s) paid more for less progress")
    assert "n/a (returns or achievements all equal)" in progress_summary(FakeScores([1], [1]))


def test_returns_by_config_has_a_column_per_config_and_the_episodes_progress():
    sample = sample_corpus()
    from workbench.analysis.scorecard import returns_by_config

    configs = {
        name: RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in ("upstream_shaped", "recommended")
    }
    table = returns_by_config(sample, configs)
    assert list(table.columns) == ["upstream_shaped", "recommended", "policy", "n_unlocked"]
    assert list(table.index) == sample.ids
    for name, config in configs.items():
        np.testing.assert_array_equal(table[name].to_numpy(), score(sample, config).reward_sum)


def test_scorecard_numbers_are_the_alignment_functions():
    sample = sample_corpus()
    from workbench.analysis.scorecard import scorecard

    configs = {
        name: RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in ("upstream_shaped", "recommended")
    }
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


# -- kendall_tau, spearman_rho, bootstrap_interval ----------------------------------------------
def brute_force_tau_b(x, y) -> float:
    """Kendall's tau-b by looking at every pair (the definition)."""
    concordant = discordant = tied_x = tied_y = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
            if sx == 0 and sy == 0:
                continue
            if sx == 0:
                tied_x += 1
            elif sy == 0:
                tied_y += 1
            elif sx == sy:
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + tied_x) * (concordant + discordant + tied_y))
    return (concordant - discordant) / denominator if denominator else float("nan")


def test_kendall_tau_is_tau_b_with_ties():
    from workbench.analysis.rankstats import kendall_tau

    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # scipy.stats.kendalltau's documented example (tau-b with ties in both).
    assert kendall_tau([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]) == pytest.approx(-0.47140452079103173, abs=1e-15)
    assert math.isnan(kendall_tau([1, 1, 1], [1, 2, 3])) and math.isnan(kendall_tau([5.0], [1.0]))
    rng = np.random.default_rng(7)
    for _ in range(200):  # sizes across several merge levels, many ties
        n = int(rng.integers(2, 70))
        x = rng.integers(0, int(rng.integers(1, 9)), n).astype(float)
        y = rng.integers(0, int(rng.integers(1, 9)), n) * 0.5
        expected = brute_force_tau_b(x, y)
        got = kendall_tau(x, y)
        assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected, abs=1e-12)


def test_discordant_pairs_count_misranked_pairs():
    from workbench.analysis.rankstats import discordant_pairs

    rng = np.random.default_rng(5)
    returns, achievements = rng.integers(0, 6, (30, 45)).astype(float), rng.integers(0, 6, (30, 45))
    counts = discordant_pairs(achievements, returns)
    for r in range(30):
        assert counts[r] == len(misranked_pairs(FakeScores(returns[r], achievements[r])))
    assert discordant_pairs([1, 2, 3], [3, 2, 1]) == 3 and discordant_pairs([1, 1], [2, 1]) == 0


def test_rank_correlations_by_rows_equal_one_call_per_row():
    from workbench.analysis.rankstats import kendall_tau, spearman_rho

    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 6, (40, 33)).astype(float), rng.normal(size=(40, 33))
    y[5] = 1.0  # a constant row gives NaN in its slot only
    taus, rhos = kendall_tau(x, y), spearman_rho(x, y)
    assert taus.shape == rhos.shape == (40,)
    for r in range(40):
        assert np.allclose(taus[r], kendall_tau(x[r], y[r]), equal_nan=True, atol=1e-12)
        expected = pd.Series(x[r]).rank().corr(pd.Series(y[r]).rank()) if r != 5 else float("nan")
        assert np.allclose(rhos[r], expected, equal_nan=True, atol=1e-12)
    with pytest.raises(ValueError, match="same shape"):
        kendall_tau([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="NaN"):
        spearman_rho([1, float("nan")], [1, 2])


def test_spearman_rho_is_progress_agreement_on_the_sample_corpus():
    from workbench.analysis.rankstats import spearman_rho

    episodes = score(sample_corpus(), SHAPED).episodes
    rho = spearman_rho(episodes["reward_sum"].to_numpy(), episodes["unique_achievements_total"].to_numpy())
    assert rho == pytest.approx(progress_agreement(score(sample_corpus(), SHAPED)), abs=1e-12)


def test_bootstrap_resamples_within_strata_only():
    from workbench.analysis.rankstats import bootstrap_interval

    strata = np.array(["farmer"] * 3 + ["scripted"] * 5 + ["random"] * 2)
    stratum_of = pd.Series(strata)
    drawn: list[np.ndarray] = []

    def record(items: np.ndarray) -> np.ndarray:
        drawn.append(items.copy())
        return items.mean(axis=1)

    bootstrap_interval(record, [np.arange(10)], strata, reps=500, seed=1)
    point_row, resamples = drawn[0], np.concatenate(drawn[1:])
    assert point_row.tolist() == [list(range(10))]  # the point statistic sees the data as given
    assert resamples.shape == (500, 10)
    for slot in range(10):  # every slot is filled from its own stratum, with replacement
        assert set(strata[resamples[:, slot]]) == {strata[slot]}
    counts = stratum_of.iloc[resamples.ravel()].value_counts()
    assert counts.to_dict() == {"scripted": 2500, "farmer": 1500, "random": 1000}
    assert len(np.unique(resamples[:, 0])) == 3  # all of the farmer's episodes are drawn somewhere


def test_stratified_bootstrap_keeps_the_mix_a_plain_one_does_not():
    from workbench.analysis.rankstats import bootstrap_interval

    # Constant within each stratum: every stratified resample has the same mean; a plain
    # bootstrap changes the mix of strata and so the mean.
    values = np.array([0.0] * 4 + [10.0] * 6)
    strata = ["a"] * 4 + ["b"] * 6

    def mean(v: np.ndarray) -> np.ndarray:
        return v.mean(axis=1)

    assert bootstrap_interval(mean, [values], strata, reps=300) == pytest.approx((6.0, 6.0, 6.0))
    point, low, high = bootstrap_interval(mean, [values], None, reps=300)
    assert point == 6.0 and low < 5.0 and high > 7.0


def test_bootstrap_interval_of_a_mean_matches_the_normal_approximation():
    from workbench.analysis.rankstats import bootstrap_interval

    rng = np.random.default_rng(11)
    values = rng.normal(2.0, 3.0, 400)
    point, low, high = bootstrap_interval(lambda v: v.mean(axis=1), [values], reps=4000, seed=5)
    half = 1.96 * values.std(ddof=1) / math.sqrt(len(values))
    assert point == pytest.approx(values.mean())
    assert low == pytest.approx(point - half, abs=0.1 * half) and high == pytest.approx(point + half, abs=0.1 * half)
    # Same seed, same interval; several arrays are resampled together (paired items).
    from workbench.analysis.rankstats import kendall_tau

    x, y = rng.integers(0, 5, 30), rng.normal(size=30)
    strata = rng.integers(0, 3, 30)
    first = bootstrap_interval(kendall_tau, [x, y], strata, reps=200, seed=9)
    assert first == bootstrap_interval(kendall_tau, [x, y], strata, reps=200, seed=9)
    assert first != bootstrap_interval(kendall_tau, [x, y], strata, reps=200, seed=10)
    assert first[0] == kendall_tau(x, y) and first[1] <= first[0] <= first[2]


def test_bootstrap_interval_nan_resamples_and_errors():
    from workbench.analysis.rankstats import bootstrap_interval, kendall_tau

    # Two strata of one item each: a stratum of one item always draws that item, so every
    # resample is the data itself and the interval is the point.
    assert bootstrap_interval(kendall_tau, [[1, 2], [3, 4]], ["a", "b"], reps=20) == pytest.approx((1.0, 1.0, 1.0))
    # One stratum of two: a resample drawing the same episode twice has constant x (NaN tau),
    # left out; here about half of them.
    point, low, high = bootstrap_interval(kendall_tau, [[1, 2], [3, 4]], ["a", "a"], reps=50)
    assert (point, low, high) == pytest.approx((1.0, 1.0, 1.0))
    # Every resample NaN (a stratum of one constant item): the interval is NaN.
    point, low, high = bootstrap_interval(kendall_tau, [[1, 1], [3, 4]], None, reps=50)
    assert math.isnan(point) and math.isnan(low) and math.isnan(high)
    with pytest.raises(ValueError, match="equal length"):
        bootstrap_interval(kendall_tau, [[1, 2], [1]])
    with pytest.raises(ValueError, match="one label per item"):
        bootstrap_interval(kendall_tau, [[1, 2], [1, 2]], ["a"])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_interval(kendall_tau, [[1, 2], [1, 2]], confidence=1.0)
    with pytest.raises(ValueError, match="reps"):
        bootstrap_interval(kendall_tau, [[1, 2], [1, 2]], reps=0)


@pytest.mark.parametrize("n", [49, 130])  # above the pairwise limit: per-level counts or merge sort
@pytest.mark.parametrize("levels", [(4, 9), (300, 6), (200, 250)])
def test_rank_statistics_agree_across_their_algorithms(monkeypatch, n, levels):
    from workbench.analysis import rankstats

    rng = np.random.default_rng(n + levels[0])
    x, y = rng.integers(0, levels[0], (12, n)).astype(float), rng.integers(0, levels[1], (12, n)) * 0.25
    fast = rankstats.kendall_tau(x, y), rankstats.discordant_pairs(x, y), rankstats.spearman_rho(x, y)
    monkeypatch.setattr(rankstats, "_PAIRWISE_MAX_N", 10**6)  # every pair compared directly
    direct = rankstats.kendall_tau(x, y), rankstats.discordant_pairs(x, y), rankstats.spearman_rho(x, y)
    assert np.allclose(fast[0], direct[0], atol=1e-12) and np.array_equal(fast[1], direct[1])
    assert np.allclose(fast[2], direct[2], atol=1e-12)
    assert fast[0][0] == pytest.approx(brute_force_tau_b(x[0], y[0]), abs=1e-12)
