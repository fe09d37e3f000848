"""The over-optimisation watch on hand-made series (Gao, Schulman and Hilton 2022's gold/proxy framing)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import REPO

from workbench.analysis.overoptimisation import crafter_score_change, overoptimisation_watch, watch_series
from workbench.core.config import RewardConfig
from workbench.data.sample import search_corpus
from workbench.errors import AnalysisError
from workbench.scoring import score

# A fixed "noise" pattern (no RNG in the expected values): +-0.5 alternating in blocks of three.
WOBBLE = np.tile([0.5, -0.5, 0.25, -0.25, 0.0, 0.5, -0.5], 10)


def tent(n: int, peak: int) -> np.ndarray:
    """Rises by 1 per episode to ``peak``, then falls by 1 per episode."""
    t = np.arange(n, dtype=float)
    return np.where(t <= peak, t, 2 * peak - t)


def test_gold_peaking_while_the_proxy_rises_alarms_from_the_episode_after_the_peak():
    # Gold 0, 1, ..., 14, 13, ..., 0 (29 episodes); the proxy rises 0.5 per episode throughout.
    # The centred rolling mean of 9 is symmetric about 14, so the peak is 14 and the decline
    # starts at 15. From 14 on gold is 28 - t: slope -1 in every resample (a line stays a line);
    # the proxy's slope is 0.5 likewise.
    gold = tent(29, 14)
    proxy = 0.5 * np.arange(29)
    found = watch_series(gold, proxy, window=9, min_run=10, reps=200)
    assert (found.peak, found.start, found.episodes) == (14, 15, 15)
    assert found.gold_slope == pytest.approx(-1.0) and found.gold_high == pytest.approx(-1.0)
    assert found.proxy_slope == pytest.approx(0.5) and found.proxy_low == pytest.approx(0.5)
    assert found.alarm


def test_noisy_series_give_an_interval_around_the_least_squares_slope():
    gold = tent(40, 15) * 0.3 + WOBBLE[:40]
    proxy = 0.2 * np.arange(40) + WOBBLE[:40][::-1]
    found = watch_series(gold, proxy, window=9, min_run=10, reps=500)
    span = np.arange(found.peak, 40)
    # independent: numpy's polynomial fit of degree 1 on the span
    assert found.gold_slope == pytest.approx(np.polyfit(span, gold[found.peak :], 1)[0])
    assert found.proxy_slope == pytest.approx(np.polyfit(span, proxy[found.peak :], 1)[0])
    assert found.gold_low <= found.gold_slope <= found.gold_high < 0
    assert 0 < found.proxy_low <= found.proxy_slope <= found.proxy_high
    assert found.alarm
    # deterministic for a seed
    assert watch_series(gold, proxy, window=9, min_run=10, reps=500) == found


def test_no_alarm_when_gold_keeps_rising_or_the_proxy_falls_with_it_or_gold_is_flat():
    rising = np.arange(30, dtype=float)
    both_rise = watch_series(rising, rising * 2, window=5, min_run=10, reps=200)
    # the top of the rolling mean of 5 is the last episode (mean of 27-29 = 28 > 27.5 at 28): the
    # peak is not settled (no episode follows it), so no alarm whatever the slopes
    assert both_rise.peak == 29 and not both_rise.settled and not both_rise.alarm
    gold = tent(30, 12)
    aligned = watch_series(gold, gold * 0.1, window=5, min_run=10, reps=200)
    assert aligned.peak == 12 and aligned.proxy_slope == pytest.approx(-0.1) and not aligned.alarm
    flat = watch_series(5.0 + WOBBLE[:30], np.arange(30.0), window=5, min_run=10, reps=500)
    assert flat.gold_low < 0 < flat.gold_high and not flat.alarm


def test_crafter_score_before_and_after_by_hand():
    # Two episodes before the start: one unlocked achievement 0, one nothing -> rates 50% on
    # achievement 0, 0 elsewhere: score exp(ln(51) / 22) - 1. After: both unlocked 0 and 1 ->
    # exp(2 ln(101) / 22) - 1.
    unlocked = np.zeros((4, 22), dtype=bool)
    unlocked[0, 0] = True
    unlocked[2:, :2] = True
    before, after, change, low, high = crafter_score_change(unlocked[:2], unlocked[2:], reps=300)
    assert before == pytest.approx(np.exp(np.log(51) / 22) - 1)
    assert after == pytest.approx(np.exp(2 * np.log(101) / 22) - 1)
    assert change == pytest.approx(after - before)
    # resamples within each side: the after side never varies, the before side is 0, 50 or 100%
    lows = [np.exp(np.log(x) / 22) - 1 for x in (1, 51, 101)]
    assert after - max(lows) - 1e-12 <= low <= change <= high <= after - min(lows) + 1e-12


def test_the_watch_on_a_corpus_reads_gold_and_proxy_from_the_episodes():
    corpus = search_corpus()
    configs = {
        name: RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in ("upstream_shaped", "consistent")
    }
    watch = overoptimisation_watch(corpus, configs, reps=100)
    series = watch.series
    assert list(series.columns) == ["position", "episode", "config", "gold", "proxy"]
    assert len(series) == 2 * len(corpus)
    shaped = series[series["config"] == "upstream_shaped"]
    # gold: achievements unlocked per episode, as the corpus index counts them
    np.testing.assert_array_equal(shaped["gold"].to_numpy(), corpus.index["n_unlocked"].to_numpy())
    np.testing.assert_allclose(shaped["proxy"].to_numpy(), score(corpus, configs["upstream_shaped"]).reward_sum)
    alarms = watch.alarms.set_index("config")
    for _, row in alarms.iterrows():
        assert row["began_at"] == corpus.ids[int(row["start"])]
        assert row["score_change"] == pytest.approx(row["score_after"] - row["score_before"])
    # ordered by an index column: the episodes in that column's stable order
    ordered = overoptimisation_watch(corpus, {"c": configs["consistent"]}, order="seed", reps=50)
    by_seed = sorted(range(len(corpus)), key=lambda i: corpus.index["seed"].iat[i])
    assert ordered.series["episode"].tolist() == [corpus.ids[i] for i in by_seed]


def test_bad_input_names_the_problem():
    with pytest.raises(AnalysisError, match="one length"):
        watch_series(np.zeros(20), np.zeros(21))
    with pytest.raises(AnalysisError, match="at least 12 episodes"):
        watch_series(np.zeros(11), np.zeros(11))
    with pytest.raises(AnalysisError, match="finite"):
        watch_series(np.r_[np.zeros(19), np.nan], np.zeros(20))
    with pytest.raises(AnalysisError, match="no index column 'step'"):
        overoptimisation_watch(
            search_corpus(), {"c": RewardConfig.from_file(REPO / "configs" / "consistent.yaml")}, order="step"
        )
    with pytest.raises(AnalysisError, match="at least one episode"):
        crafter_score_change(np.zeros((0, 22), dtype=bool), np.ones((2, 22), dtype=bool))
    with pytest.raises(AnalysisError, match="at least one config"):
        overoptimisation_watch(search_corpus(), {})


def test_live_watch_reads_a_live_table_and_names_what_is_wrong():
    import pandas as pd

    from workbench.analysis.overoptimisation import episodes_needed, live_watch

    corpus = search_corpus()
    config = RewardConfig.from_file(REPO / "configs" / "consistent.yaml")
    table = pd.DataFrame(
        {
            "episode": corpus.ids,
            "config": "c",
            "arrival": range(len(corpus)),
            "return": score(corpus, config).reward_sum,
            "unique_achievements": score(corpus, config).episodes["unique_achievements"],
        }
    )
    # rows in any order: arrival order is what counts
    shuffled = table.iloc[::-1]
    pd.testing.assert_frame_equal(
        live_watch(shuffled, reps=100).alarms, overoptimisation_watch(corpus, {"c": config}, reps=100).alarms
    )
    assert episodes_needed(10) == 12 and episodes_needed(4) == 6
    with pytest.raises(AnalysisError, match=r"no column\(s\) \['unique_achievements'\]"):
        live_watch(table.drop(columns="unique_achievements"))
    with pytest.raises(AnalysisError, match="the table is empty"):
        live_watch(table.iloc[:0])
    other = table.iloc[:-1].assign(config="d")
    with pytest.raises(AnalysisError, match="config 'd' has other episodes than 'c'"):
        live_watch(pd.concat([table, other]))
    with pytest.raises(AnalysisError, match="at least 12 episodes"):
        live_watch(table.iloc[:11])


def test_run_as_episodes_arrive_the_alarm_never_names_a_start_before_the_peak():
    # Gold rises 1 per episode to 20, then falls 1 per episode (tent); the proxy rises 0.5 per
    # episode throughout. Watched after each arrival (as the Live page re-runs live_watch), the
    # centred rolling mean of 9 is symmetric about 20 once 4 episodes follow it, so its top is 20:
    # a decline can start at 21 at the earliest. Before the fix, with 28-30 episodes the peak was
    # sought only among positions followed by 10 episodes (17-19), the slope from there on was
    # already negative, and the alarm named 18-20.
    gold, proxy = tent(45, 20), 0.5 * np.arange(45)
    watched = {n: watch_series(gold[:n], proxy[:n], window=9, min_run=10, reps=200) for n in range(12, 46)}
    starts = [found.start for found in watched.values() if found.alarm]
    # the peak at 20 is settled with 31 episodes (positions 21-30 follow it): from then on, alarm at 21
    assert starts and set(starts) == {21}
    assert len(starts) == 45 - 31 + 1
    for n, found in watched.items():  # settled exactly when 10 episodes follow the top of the mean
        assert found.settled == (found.peak <= n - 11)
