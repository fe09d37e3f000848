"""The Tuner and Compare show an estimated-count episode's per_achievement return as an interval
(hand-counted: 1.18 with the one wood rise the text shows, 1.34 with all three dos collecting)."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import INITIAL_INVENTORY
from workbench.data.episodes import Corpus, Episode
from workbench.data.sample import sample_corpus
from workbench.scoring.intervals import return_intervals
from workbench.views.widgets import Compare, Tuner

PER_ACHIEVEMENT = RewardConfig.from_dict(
    {"enabled": True, "mode": "decision_stepwise", "strategy": "per_achievement", "indicator_lambda": 1.0}
)
CONSISTENT = RewardConfig.from_dict({"enabled": True, "mode": "decision_stepwise", "strategy": "consistent"})


def _mixed() -> Corpus:
    after = {"inventory": {**INITIAL_INVENTORY, "wood": 1}, "achievements_status": {"collect_wood": True}}
    states = [{"inventory": dict(INITIAL_INVENTORY), "achievements_status": {}}, after, after]
    text = Episode.from_states("three_dos", states, [["do", "do", "do"], ["noop"]], metadata={"policy": "text"})
    return Corpus([sample_corpus()["scripted-s2024-00000"], text])


def test_the_tuner_shows_the_interval_for_the_estimated_episode_only():
    tuner = Tuner(_mixed(), PER_ACHIEVEMENT)
    names = dict(zip(tuner._ids[tuner._shown], tuner.figure.points.names))
    assert "return [1.18, 1.34] (estimated counts)" in names["three_dos"]
    assert "[" not in names["scripted-s2024-00000"].split("· return ")[1].split(" ")[0]
    assert "[1.180, 1.340]" in tuner.extremes_view.value


def test_under_consistent_the_tuner_shows_one_number():
    tuner = Tuner(_mixed(), CONSISTENT)
    names = dict(zip(tuner._ids[tuner._shown], tuner.figure.points.names))
    assert "return 1.00 (baseline" in names["three_dos"]


def test_compare_labels_the_interval_on_the_raw_scale():
    view = Compare(_mixed(), {"per_achievement": PER_ACHIEVEMENT, "consistent": CONSISTENT})
    (label,) = [name for name in view.figures.points.names if name.startswith("three_dos")]
    assert "per_achievement [1.180, 1.340]" in label and "consistent 1" in label


# -- the figures draw the interval itself --------------------------------------------------------
def _bars(lines) -> list[tuple[float, float, float, float]]:
    """Each drawn bar as (x_min, x_max, y_min, y_max) of its polyline (stem and caps)."""
    xs, ys = np.atleast_2d(lines.x), np.atleast_2d(lines.y)  # bqplot keeps one line as 1-D
    return [(x.min(), x.max(), y.min(), y.max()) for x, y in zip(xs, ys)]


def test_the_tuner_draws_the_interval_as_an_error_bar_with_its_legend_entry():
    corpus = _mixed()
    tuner = Tuner(corpus, PER_ACHIEVEMENT)
    expected = return_intervals(corpus, PER_ACHIEVEMENT).set_index("episode")  # computed apart
    low, high = expected.loc["three_dos", ["return_low", "return_high"]]
    assert (low, high) == pytest.approx((1.18, 1.34))  # the hand count above
    figure = tuner.figure
    assert figure.intervals.visible and figure.interval_key.label.visible and figure.interval_key.glyph.visible
    assert list(figure.interval_key.label.text) == ["estimated counts: interval"]
    ((x0, x1, y0, y1),) = _bars(figure.intervals)  # one estimated episode, one bar
    assert (y0, y1) == pytest.approx((low, high))
    # through the episode's point
    position = list(tuner._ids[tuner._shown]).index("three_dos")
    assert x0 < figure.points.x[position] < x1
    assert figure.y.min <= low and figure.y.max >= high


def test_no_interval_is_drawn_under_consistent():
    tuner = Tuner(_mixed(), CONSISTENT)
    assert not tuner.figure.intervals.visible and not tuner.figure.interval_key.label.visible


def test_compare_draws_both_intervals_on_the_raw_scale_only():
    corpus = _mixed()
    view = Compare(corpus, {"per_achievement": PER_ACHIEVEMENT, "consistent": CONSISTENT})
    expected = return_intervals(corpus, PER_ACHIEVEMENT).set_index("episode")
    low, high = expected.loc["three_dos", ["return_low", "return_high"]]
    figures = view.figures
    assert figures.intervals.visible and figures.interval_key.label.visible
    assert list(figures.interval_key.label.text) == ["estimated counts: interval"]
    # the reference is per_achievement: its interval runs along x, at the compared config's y (1.0)
    ((x0, x1, y0, y1),) = _bars(figures.intervals)
    assert (x0, x1) == pytest.approx((low, high))
    assert y0 < 1.0 < y1
    view.scale.value = "ranks"
    assert not figures.intervals.visible and not figures.interval_key.label.visible
