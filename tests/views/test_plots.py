"""Every figure builds from the sample corpus, returns a Figure and is labelled."""

from __future__ import annotations

import pytest
from helpers import REPO
from matplotlib.figure import Figure

from workbench.core.config import RewardConfig
from workbench.data.sample import sample_corpus
from workbench.scoring import compare, score
from workbench.views import plots


@pytest.fixture(scope="module")
def setting():
    corpus = sample_corpus()
    shaped = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")
    recommended = RewardConfig.from_file(REPO / "configs" / "recommended.yaml")
    return corpus, score(corpus, shaped), compare(corpus, shaped, recommended)


def _figures(setting):
    corpus, scores, comparison = setting
    episode = corpus.ids[0]
    return [
        plots.decision_components(scores, episode),
        plots.cumulative_return(scores, episode, cursor=10),
        plots.achievement_timeline(corpus[0]),
        plots.compare_configs(comparison, labels=("upstream", "recommended")),
        plots.compare_configs(comparison, labels=("upstream", "recommended"), corpus=corpus),
        plots.component_share(scores, corpus=corpus),
        plots.return_vs_achievements(scores, corpus),
    ]


@pytest.mark.slow
def test_every_figure_is_returned_titled_and_labelled(setting, tmp_path):
    for number, figure in enumerate(_figures(setting)):
        assert isinstance(figure, Figure)
        for axes in figure.axes:
            if axes.get_title():  # twin axes share the main axes' title
                assert axes.get_xlabel()
        assert any(axes.get_title() for axes in figure.axes)
        figure.savefig(tmp_path / f"{number}.png")
        assert (tmp_path / f"{number}.png").stat().st_size > 5_000


def test_unknown_episode_is_named(setting):
    _, scores, _ = setting
    with pytest.raises(KeyError, match="no-such-episode"):
        plots.decision_components(scores, "no-such-episode")


def test_stacked_bars_add_up_to_the_decision_rewards(setting):
    corpus, scores, _ = setting
    episode = corpus.ids[0]
    figure = plots.decision_components(scores, episode)
    heights = sum(patch.get_height() for patch in figure.axes[0].patches)
    expected = scores.decisions.loc[scores.decisions["episode"] == episode, "reward"].sum()
    assert heights == pytest.approx(expected)
