"""The Timeline widget follows a LiveScores: each append redraws the same marks with new data
(nothing rebuilt), points equal what scoring pays, the farmer's takeover is a dashed line at the
join, a click opens the episode, and a missing training step falls back with a note."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import REPO

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.storage import load_corpus
from workbench.scoring import score
from workbench.scoring.incremental import LiveScores
from workbench.views.widgets.timeline import Y_CHOICES, Timeline

UUID = "3f2b9c1e-8d4a-4b7e-9a61-0c5d2e7f8a90"


@pytest.fixture(scope="module")
def run() -> Corpus:
    corpus = load_corpus(REPO / "workbench" / "data" / "shipped" / "search_corpus")
    return Corpus.concat([corpus.select(policy="scripted"), corpus.select(policy="farmer")])


@pytest.fixture(scope="module")
def configs() -> dict[str, RewardConfig]:
    return {
        UUID: RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml"),
        "consistent": RewardConfig.from_file(REPO / "configs" / "consistent.yaml"),
    }


def test_follows_appends_with_the_same_marks(run, configs):
    live = LiveScores(run[:3], configs)
    timeline = Timeline(live, window=10, reps=50)
    marks = list(timeline.figure.marks)
    assert timeline.points.x.shape == (6,)  # 3 episodes x 2 configs
    for start in range(3, 48, 9):
        live.append(run[start : start + 9])
    assert timeline.redraws == 1 + 5
    assert list(timeline.figure.marks) == marks  # data replaced, marks kept
    for name, config in configs.items():
        expected = score(run, config).episodes["reward_sum"].to_numpy()
        mine = np.array([c == name for _, c in timeline._shown])
        assert timeline.points.y[mine].tolist() == pytest.approx(expected.tolist())
        assert timeline.points.x[mine].tolist() == list(range(48))
    # the rolling mean of the last window of 10, per config, as scoring pays it
    for name, config in configs.items():
        tail = score(run[38:], config).episodes["reward_sum"].mean()
        assert timeline.means[name].y[-1] == pytest.approx(tail)
        assert timeline.means[name].visible and timeline.bands[name].visible
    assert not timeline.means[""].visible  # the every-config line is for Crafter's score
    # consistent pays progress: it falls where the farmer takes over (between 23 and 24)
    assert 23.5 in np.atleast_2d(timeline.change_lines.x)[:, 0].tolist()  # bqplot keeps one line 1-D
    assert "shifts at episode 24" in timeline.changes.value
    assert UUID in timeline.legend.value and "consistent" in timeline.legend.value


def test_every_series_draws(run, configs):
    live = LiveScores(run, configs)
    timeline = Timeline(live, window=12, reps=50)
    for y in Y_CHOICES:
        timeline.y_picker.value = y
        assert timeline.y_axis.label
        shown = [line for line in timeline.means.values() if line.visible]
        assert shown and all(np.isfinite(np.asarray(line.y, dtype=float)).all() for line in shown), y
    # four complete windows of 12, flagged under each config: one value per window and config
    assert [len(timeline.means[name].y) for name in configs] == [4, 4]
    timeline.y_picker.value = "Crafter score (%)"
    assert [name for name, line in timeline.means.items() if line.visible] == [""]


def test_click_opens_the_episode(run, configs):
    live = LiveScores(run[:4], configs)
    timeline = Timeline(live, window=5, reps=20)
    timeline.pick(3)  # episode 1 under the second config
    assert timeline.replayer.episode == run.ids[1] == timeline.episode
    assert timeline.config is configs["consistent"] and timeline.replayer.config is configs["consistent"]
    assert timeline.selection == (run.ids[1],) and len(timeline.points.selected) == 2  # its point per config
    live.append(run[4:6])
    timeline.pick(10)  # a newer episode: the Replayer is rebuilt on the grown corpus
    assert timeline.replayer.episode == run.ids[5]
    opened = []
    elsewhere = Timeline(live, window=5, reps=20, replay=False)
    elsewhere.observe(lambda change: opened.append((change["new"], elsewhere.config)), names="episode")
    elsewhere.pick(0)
    assert opened == [(run.ids[0], configs[UUID])] and elsewhere.replayer is None


def test_missing_training_step_falls_back_with_a_note(run, configs):
    timeline = Timeline(LiveScores(run[:6], configs), x="training_step", reps=20)
    assert "have no training_step" in timeline.note.value
    assert timeline.x_axis.label == "episode (arrival order)"
