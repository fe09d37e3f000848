"""The advantages panel: its numbers against plain loops, its flags, before/after, and its traitlets."""

from __future__ import annotations

import math

import numpy as np
import pytest
import traitlets
from helpers import REPO

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus
from workbench.errors import WorkbenchError
from workbench.scoring import score
from workbench.views.widgets.advantages import AdvantagesPanel

SHAPED = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")
#: A weight change that moves advantages (a scale or lambda alone would not move GRPO's).
MORE_STONE = SHAPED.with_changes(weights={**SHAPED.weights, "collect_stone": 3.0})


def drawn(panel: AdvantagesPanel) -> dict[str, tuple[float, float]]:
    """Episode -> (x, y) of its point, read from the figure's marks (whatever their colour)."""
    ids = panel.view.episodes["episode"].tolist()
    out = {}
    for key, mark in panel.figure.points.items():
        for row, x, y in zip(panel.figure._rows[key], mark.x, mark.y):
            out[ids[row]] = (float(x), float(y))
    return out


def plain_grpo(corpus, config, eps=1e-6):
    """GRPO by hand: per seed, (r - mean) / (sample std + eps); a lone rollout's std is taken as 0."""
    returns = score(corpus, config).reward_sum
    seeds = corpus.index["seed"].tolist()
    out = {}
    for i, episode in enumerate(corpus.ids):
        group = [returns[j] for j in range(len(seeds)) if seeds[j] == seeds[i]]
        mean = sum(group) / len(group)
        std = math.sqrt(sum((r - mean) ** 2 for r in group) / (len(group) - 1)) if len(group) > 1 else 0.0
        out[episode] = (returns[i] - mean) / (std + eps)
    return out


def test_the_figure_shows_each_rollouts_grpo_advantage_by_hand():
    corpus = sample_corpus()
    panel = AdvantagesPanel(corpus, SHAPED)
    expected = plain_grpo(corpus, SHAPED)
    points = drawn(panel)
    assert set(points) == set(expected)
    for episode, value in expected.items():
        assert points[episode][1] == pytest.approx(value, abs=1e-9)
    # x: the group's slot (seed groups numbered in order of first appearance)
    seeds = list(dict.fromkeys(corpus.index["seed"]))
    for episode, seed in zip(corpus.ids, corpus.index["seed"]):
        assert abs(points[episode][0] - seeds.index(seed)) <= 0.32 + 1e-12
    assert list(panel.figure.y_axis.label.split()) == ["advantage"]
    assert panel.figure.x_axis.label.startswith("seed group")


def test_the_estimator_is_picked_in_the_panel():
    corpus = sample_corpus()
    panel = AdvantagesPanel(corpus, SHAPED)
    panel.estimator.value = "dr_grpo"
    returns = dict(zip(corpus.ids, score(corpus, SHAPED).reward_sum))
    seeds = dict(zip(corpus.ids, corpus.index["seed"]))
    for episode, (_, y) in drawn(panel).items():
        group = [returns[e] for e in corpus.ids if seeds[e] == seeds[episode]]
        assert y == pytest.approx(returns[episode] - sum(group) / len(group), abs=1e-9)
    assert panel.figure.widget.title.startswith("Dr.GRPO advantages per seed group")


def test_zero_variance_and_contradicting_groups_are_flagged():
    corpus = sample_corpus()
    # one rollout three times over (one seed): every return alike, every advantage 0
    copies = Corpus.concat([Corpus([corpus["scripted-s2024-00000"]])] * 3)
    silent = AdvantagesPanel(copies, SHAPED)
    assert silent.statuses().tolist() == ["zero"] * 3
    assert [y for _, y in drawn(silent).values()] == [0.0] * 3
    assert "1 zero-variance" in silent.summary.value and "zero-variance" in silent.flags_view.value
    # GDPO under upstream_shaped: a group is flagged when some pair in it has the higher
    # advantage on the rollout with fewer achievements (or less Crafter reward): a plain loop
    panel = AdvantagesPanel(corpus, SHAPED, estimator="gdpo")
    episodes = panel.view.episodes
    bad_groups = set()
    for i in range(len(episodes)):
        for j in range(len(episodes)):
            a, b = episodes.iloc[i], episodes.iloc[j]
            if a["group"] != b["group"] or not a["gdpo"] > b["gdpo"]:
                continue
            if a["achievements"] < b["achievements"] or a["env_return"] < b["env_return"]:
                bad_groups.add(a["group"])
    expected = ["contradicts" if g in bad_groups else "ok" for g in episodes["group"]]
    expected = ["alone" if s == 1 else e for s, e in zip(episodes["group_size"], expected)]
    assert bad_groups and panel.statuses().tolist() == expected
    assert "gdpo-contradicts-progress" in panel.flags_view.value


def test_a_config_change_draws_before_and_after():
    corpus = sample_corpus()
    panel = AdvantagesPanel(corpus, SHAPED)
    assert not panel.figure.before.visible
    panel.config = MORE_STONE
    before, after = plain_grpo(corpus, SHAPED), plain_grpo(corpus, MORE_STONE)
    figure = panel.figure
    assert figure.before.visible and figure.moves.visible
    ids = panel.view.episodes["episode"].tolist()
    np.testing.assert_allclose(figure.before.y, [before[e] for e in ids], atol=1e-9)
    np.testing.assert_allclose(np.asarray(figure.moves.y)[:, 0], [before[e] for e in ids], atol=1e-9)
    np.testing.assert_allclose(np.asarray(figure.moves.y)[:, 1], [after[e] for e in ids], atol=1e-9)
    moved = max(abs(after[e] - before[e]) for e in ids)
    assert moved > 0.01 and "since the last config change" in panel.summary.value
    assert panel.last_update_ms > 0


class Other(traitlets.HasTraits):
    """Another view with the same three traits (as the Tuner and Compare have)."""

    config = traitlets.Instance(RewardConfig)
    episode = traitlets.Unicode(allow_none=True, default_value=None)
    selection = traitlets.Tuple()


def test_the_traits_link_both_ways():
    corpus = sample_corpus()
    panel = AdvantagesPanel(corpus, SHAPED)
    other = Other(config=SHAPED)
    links = [traitlets.dlink((other, "config"), (panel, "config"))]
    links += [traitlets.link((other, name), (panel, name)) for name in ("episode", "selection")]
    other.config = MORE_STONE  # the Tuner moved a weight: the panel recomputes
    assert panel.config is MORE_STONE and drawn(panel)["scripted-s2024-00000"][1] == pytest.approx(
        plain_grpo(corpus, MORE_STONE)["scripted-s2024-00000"], abs=1e-9
    )
    # a click in the panel: episode and its group go out
    row = panel.view.episodes["episode"].tolist().index("farmer-s2024-00000")
    status = panel.statuses()[row]
    position = list(panel.figure._rows[status]).index(row)
    panel.figure.points[status]._element_click_handlers(panel.figure.points[status], {"data": {"index": position}})
    seed = corpus.index.set_index("episode").at["farmer-s2024-00000", "seed"]
    assert other.episode == "farmer-s2024-00000"
    assert set(other.selection) == set(corpus.index.loc[corpus.index["seed"] == seed, "episode"])
    # a selection made elsewhere rings those rollouts
    other.selection = ("random-s2024-00002",)
    other.episode = None
    ((x, y),) = zip(panel.figure.selected.x, panel.figure.selected.y)
    assert (x, y) == pytest.approx(drawn(panel)["random-s2024-00002"])
    for link in links:
        link.unlink()


def test_bad_estimator_is_named():
    with pytest.raises(WorkbenchError, match="estimator must be one of"):
        AdvantagesPanel(sample_corpus(), SHAPED, estimator="ppo")
