"""The Tuner and Compare show an estimated-count episode's per_achievement return as an interval
(hand-counted: 1.18 with the one wood rise the text shows, 1.34 with all three dos collecting)."""

from __future__ import annotations

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import INITIAL_INVENTORY
from workbench.data.episodes import Corpus, Episode
from workbench.data.sample import sample_corpus
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
