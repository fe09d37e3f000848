"""The timeline's analysis: change points found where series made by hand shift, x axes and their
fallbacks, rolling means, shares, Wilson and bootstrap intervals checked by hand or against an
independent computation, and a corpus where a farming policy takes over (scripted episodes, then
farmer episodes: the shift is at the join by construction)."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest
from helpers import REPO

from workbench.analysis import timeline as tl
from workbench.analysis.change_points import change_points, noise_scale
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.episodes import Corpus
from workbench.data.storage import load_corpus
from workbench.errors import WorkbenchError
from workbench.scoring import crafter_score, score
from workbench.scoring.crafter_score import success_rates
from workbench.scoring.incremental import LiveScores

#: A deterministic, bounded wiggle (period 7) in place of random noise: series stay reproducible.
WIGGLE = np.array([0.3, -0.2, 0.1, -0.4, 0.25, -0.05, 0.0])


#: Epoch seconds of 2026-12-02T00:00:00Z, by the standard library (independent of pandas' parser).
EPOCH_2026_12_02 = datetime(2026, 12, 2, tzinfo=UTC).timestamp()


def wiggle(n: int) -> np.ndarray:
    return np.resize(WIGGLE, n)


@pytest.mark.parametrize("method", ["pelt", "cusum", "auto"])
def test_one_shift_is_found_where_it_was_made(method):
    series = np.r_[np.zeros(30), np.full(20, 5.0)] + wiggle(50)
    assert change_points(series, method=method) == [30]


@pytest.mark.parametrize("method", ["pelt", "cusum"])
def test_two_shifts_up_then_down(method):
    series = np.r_[np.full(20, 1.0), np.full(25, 6.0), np.full(15, 2.0)] + wiggle(60)
    assert change_points(series, method=method) == [20, 45]


@pytest.mark.parametrize("method", ["pelt", "cusum"])
def test_no_shift_no_change_point(method):
    assert change_points(np.full(40, 3.0) + wiggle(40), method=method) == []
    assert change_points(np.full(40, 3.0), method=method) == []
    assert change_points([1.0, 9.0, 1.0], method=method) == []  # shorter than 2 * min_size


def test_change_points_min_size_is_respected():
    series = np.r_[np.zeros(3), np.full(30, 4.0)] + wiggle(33)
    assert change_points(series, method="cusum", min_size=5) in ([], [5])
    assert change_points(series, method="pelt", min_size=3) == [3]


def test_gaussian_noise_rarely_fires():
    rng = np.random.default_rng(7)
    for method in ("pelt", "cusum"):
        fired = sum(bool(change_points(rng.normal(size=100), method=method)) for _ in range(100))
        assert fired <= 3, (method, fired)


def test_noise_scale_ignores_the_shift():
    # a jump of 50 moves one difference: the scale stays that of the wiggle, while the standard
    # deviation of the series counts the jump
    noise = wiggle(80)
    shifted = noise + np.r_[np.zeros(40), np.full(40, 50.0)]
    assert noise_scale(shifted) == pytest.approx(noise_scale(noise), rel=0.15)
    assert shifted.std() > 50 * noise_scale(shifted)
    assert noise_scale(np.full(10, 2.0)) == 1e-12 and noise_scale(np.r_[np.zeros(5), np.ones(5)]) == 1e-3


def test_change_points_bad_input():
    with pytest.raises(WorkbenchError, match="method"):
        change_points([1.0] * 20, method="magic")
    with pytest.raises(WorkbenchError, match="NaN"):
        change_points([1.0] * 19 + [float("nan")])
    with pytest.raises(WorkbenchError, match="min_size"):
        change_points([1.0] * 20, min_size=0)
    with pytest.raises(WorkbenchError, match="1-D"):
        change_points(np.zeros((4, 4)))


def hand_table(values_by_config: dict[str, list[float]], **columns: list) -> pd.DataFrame:
    """An episodes table as LiveScores gives it: rows by arrival, then config."""
    n = len(next(iter(values_by_config.values())))
    rows = []
    for i in range(n):
        for name, values in values_by_config.items():
            row = {"episode": f"ep-{i}", "config": name, "arrival": i, "return": values[i]}
            row.update({key: value[i] for key, value in columns.items()})
            rows.append(row)
    return pd.DataFrame(rows)


def test_x_axis_choices_and_fallbacks():
    table = hand_table(
        {"a": [1.0, 2.0, 3.0], "b": [0.0, 0.0, 0.0]},
        training_step=[100, 250, 400],
        wall_time=["2026-12-02T00:00:00Z", EPOCH_2026_12_02 + 10.5, "2026-12-02T00:01:00+00:00"],
    )
    assert tl.x_axis(table).values.tolist() == [0.0, 1.0, 2.0]
    steps = tl.x_axis(table, "training_step")
    assert (steps.column, steps.note, steps.values.tolist()) == ("training_step", "", [100.0, 250.0, 400.0])
    assert tl.x_axis(table, "wall_time").values.tolist() == [0.0, 10.5, 60.0]
    table.loc[table["episode"] == "ep-1", "training_step"] = None
    fallback = tl.x_axis(table, "training_step")
    assert fallback.column == "arrival" and "1 of 3 episodes have no training_step" in fallback.note
    assert "no wall_time" in tl.x_axis(table.drop(columns="wall_time"), "wall_time").note
    with pytest.raises(WorkbenchError, match="x must be one of"):
        tl.x_axis(table, "epoch")


def test_rolling_mean_by_hand():
    table = hand_table({"a": [1.0, 2.0, 3.0, 4.0, 5.0], "b": [10.0, 10.0, 10.0, 10.0, 20.0]})
    rolled = tl.rolling_mean(table, window=2, reps=200)
    a = rolled[rolled["config"] == "a"]
    assert a["mean"].tolist() == [1.0, 1.5, 2.5, 3.5, 4.5]
    assert a["n"].tolist() == [1, 2, 2, 2, 2]
    assert (a["low"] <= a["mean"]).all() and (a["mean"] <= a["high"]).all()
    # a window of two values can only resample to their min, mean or max
    assert set(a["low"].iloc[1:] - a["mean"].iloc[1:]).issubset({-0.5, 0.0})
    b = rolled[rolled["config"] == "b"]
    assert b["mean"].tolist() == [10.0, 10.0, 10.0, 10.0, 15.0]
    assert (b["low"].iloc[:4] == 10.0).all() and (b["high"].iloc[:4] == 10.0).all()
    later = tl.rolling_mean(table, window=2, reps=200, since=3)
    assert later["arrival"].tolist() == [3, 4, 3, 4]
    pd.testing.assert_frame_equal(later.reset_index(drop=True), rolled[rolled["arrival"] >= 3].reset_index(drop=True))
    with pytest.raises(WorkbenchError, match="window"):
        tl.rolling_mean(table, window=0)
    with pytest.raises(WorkbenchError, match="no column"):
        tl.rolling_mean(table, "env_return")


def test_component_shares_by_hand():
    table = hand_table(
        {"a": [0.0, 0.0, 0.0]},
        reward_indicator=[0.0, 0.0, 0.0],
        reward_achievement=[3.0, 1.0, 0.0],
        reward_inventory=[1.0, 3.0, 0.0],
        reward_achievement_count=[0.0, 0.0, 0.0],
    )
    shares = tl.component_shares(table, window=2).set_index(["arrival", "component"])["share"]
    assert shares[(0, "achievement")] == 0.75 and shares[(0, "inventory")] == 0.25
    assert shares[(1, "achievement")] == 0.5 and shares[(1, "inventory")] == 0.5  # (3+1) / 8, (1+3) / 8
    assert shares[(2, "achievement")] == 0.25  # 1 / 4
    lone = hand_table({"a": [0.0]}, reward_achievement=[0.0])
    assert math.isnan(tl.component_shares(lone, window=3)["share"].iloc[0])  # nothing paid


def test_wilson_interval_by_hand():
    z = 1.959963984540054
    low, high = tl.wilson_interval(np.array([0, 10, 5]), np.array([10, 10, 10]))
    assert low[0] == pytest.approx(0.0, abs=1e-12) and high[0] == pytest.approx((z * z / 10) / (1 + z * z / 10))
    assert high[1] == pytest.approx(1.0) and low[1] == pytest.approx(1 - high[0])
    half = z * math.sqrt(0.25 / 10 + z * z / 400) / (1 + z * z / 10)
    assert (low[2], high[2]) == (pytest.approx(0.5 - half), pytest.approx(0.5 + half))


@pytest.fixture(scope="module")
def takeover():
    """24 scripted episodes, then 24 farmer episodes (the search corpus's), as a live run."""
    corpus = load_corpus(REPO / "workbench" / "data" / "shipped" / "search_corpus")
    run = Corpus.concat([corpus.select(policy="scripted"), corpus.select(policy="farmer")])
    configs = {
        name: RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in ("consistent", "upstream_shaped")
    }
    live = LiveScores(run[:10], configs)
    live.append(run[10:30])
    live.append(run[30:])
    return live


def test_farming_takeover_is_a_change_point_in_progress(takeover):
    table = takeover.episodes()
    for method in ("pelt", "cusum"):
        found = tl.series_change_points(table, method=method)
        # consistent pays 1.0 per unlocking decision: progress falls where the farmer takes over
        progress = found[found["config"] == "consistent"]
        assert progress["arrival"].tolist() == [24], method
        assert progress["episode"].iloc[0].startswith("farmer")
        assert progress["after"].iloc[0] < progress["before"].iloc[0]
    crafter = tl.crafter_score_series(table, window=24, reps=100)
    assert crafter.set_index("arrival")["score"][47] < crafter.set_index("arrival")["score"][23]


def test_windows_equal_independent_computation(takeover):
    table = takeover.episodes()
    corpus = takeover.corpus
    window = 12
    rates = tl.success_rates(table, window=window)
    crafter = tl.crafter_score_series(table, window=window, reps=50)
    rolled = tl.rolling_mean(table, window=window, reps=50)
    for end in (0, 11, 30, 47):
        part = corpus[max(0, end - window + 1) : end + 1]
        expected = success_rates(part).set_index("achievement")["success_rate"]
        got = rates[rates["arrival"] == end].set_index("achievement")["rate"]
        assert got.reindex(list(ACHIEVEMENTS)).tolist() == pytest.approx(expected.tolist())
        assert crafter.set_index("arrival")["score"][end] == pytest.approx(crafter_score(part))
        for name, config in takeover.configs.items():
            mean = rolled[(rolled["arrival"] == end) & (rolled["config"] == name)]["mean"].iloc[0]
            assert mean == pytest.approx(score(part, config).episodes["reward_sum"].mean())


def test_window_flags_see_the_farmer(takeover):
    flags = tl.window_flags(takeover.corpus, {"consistent": takeover.configs["consistent"]}, window=24)
    assert set(flags["window"]) <= {0, 1} and set(flags["section"]) <= set(tl.WINDOW_SECTIONS)
    farmed = flags[flags["code"] == "repeats-outweigh-credits"]
    # per-achievement credit only (no resource shaping): no repeat is paid, so none outweighs credits
    assert farmed.empty
    shaped = tl.window_flags(takeover.corpus, {"shaped": takeover.configs["upstream_shaped"]}, window=24, reps=50)
    farmer_window = shaped[(shaped["window"] == 1) & (shaped["code"] == "repeats-outweigh-credits")]
    assert len(farmer_window) and farmer_window["subject"].str.startswith("farmer").all()
    assert (shaped["first"].isin([0, 24])).all() and (shaped["last"].isin([23, 47])).all()
