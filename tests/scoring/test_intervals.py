"""Return intervals for episodes with estimated counts: hand-counted bounds, and the truth of real
rollouts (0.2.14 per_achievement rollouts log every count rise) always inside."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import REPO

from workbench.cli import main
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INITIAL_INVENTORY
from workbench.data.episodes import Corpus, Episode
from workbench.data.importers import import_rollouts
from workbench.data.importers.counts import estimated_counts
from workbench.data.sample import sample_imports_path
from workbench.data.storage import save_corpus
from workbench.scoring import score
from workbench.scoring.intervals import count_bounds, return_intervals

WOOD = ACHIEVEMENTS.index("collect_wood")
PER_ACHIEVEMENT = RewardConfig.from_dict(
    {"enabled": True, "mode": "decision_stepwise", "strategy": "per_achievement", "indicator_lambda": 1.0}
)
CONSISTENT = RewardConfig.from_dict({"enabled": True, "mode": "decision_stepwise", "strategy": "consistent"})


def _three_dos() -> Episode:
    """Three ``do`` at a tree: wood shows 0 -> 1 (the text cannot show the other two), then a noop."""
    after = {"inventory": {**INITIAL_INVENTORY, "wood": 1}, "achievements_status": {"collect_wood": True}}
    states = [{"inventory": dict(INITIAL_INVENTORY), "achievements_status": {}}, after, after]
    return Episode.from_states("three_dos", states, [["do", "do", "do"], ["noop"]])


def test_hand_counted_bounds():
    """collect_wood: at least 1 (the unlock), at most 3 (three dos); nothing else can have risen."""
    lower, upper = count_bounds(_three_dos())
    assert lower[:, WOOD].tolist() == [0, 1, 1] and upper[:, WOOD].tolist() == [0, 3, 3]
    others = np.delete(upper, WOOD, axis=1)
    assert not others.any()


def test_hand_counted_return_interval():
    """per_achievement, lambda 1, no weights: credit 1.0 + wood 0.10 + collect_wood count 0.08 per
    rise: 1.18 with one rise, 1.34 with three. consistent reads no counts: 1.0 exactly."""
    corpus = Corpus([_three_dos()])
    (row,) = return_intervals(corpus, PER_ACHIEVEMENT).itertuples(index=False)
    assert row.return_low == pytest.approx(1.18, abs=1e-12) and row.return_high == pytest.approx(1.34, abs=1e-12)
    assert not row.exact
    (row,) = return_intervals(corpus, CONSISTENT).itertuples(index=False)
    assert row.return_low == row.return_high == 1.0 and row.exact


def test_exact_counts_have_no_interval():
    result = import_rollouts(sample_imports_path() / "taskapp", progress=False)
    logged = result.corpus[(result.corpus.index["counts"] == "logged").to_numpy()]
    assert len(logged) == 2 and return_intervals(logged, PER_ACHIEVEMENT).empty


@pytest.mark.parametrize("config_name", ["recommended", "upstream_complex", "upstream_shaped"])
def test_the_true_return_of_real_rollouts_lies_in_the_interval(config_name):
    """The real server's per_achievement rollouts logged every count rise (exact counts); with
    their counts replaced by the text-only estimate, the interval holds the true return."""
    config = RewardConfig.from_file(REPO / "configs" / f"{config_name}.yaml")
    result = import_rollouts(sample_imports_path() / "taskapp", progress=False)
    for episode in result.corpus:
        if episode.metadata["counts"] != "logged":
            continue
        truth = score(Corpus([episode]), config).episodes["reward_sum"].item()
        estimated = Episode(
            id=episode.id,
            inventory=episode.inventory,
            achievement_counts=estimated_counts(episode.achievement_status, episode.inventory, episode.actions),
            achievement_status=episode.achievement_status,
            actions=episode.actions,
            env_reward=episode.env_reward,
            done=episode.done,
            metadata={**episode.metadata, "counts": "estimated"},
        )
        lower, upper = count_bounds(estimated)
        assert (lower <= episode.achievement_counts).all() and (episode.achievement_counts <= upper).all()
        (row,) = return_intervals(Corpus([estimated]), config).itertuples(index=False)
        assert row.return_low <= truth <= row.return_high, (episode.id, row, truth)


def test_score_and_compare_print_the_intervals(tmp_path, capsys):
    save_corpus(Corpus([_three_dos()]), tmp_path / "c")
    recommended = REPO / "configs" / "recommended.yaml"
    assert main(["score", "--config", str(recommended), str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "per_achievement returns of the 1 episode(s) with estimated counts lie in" in out
    assert main(["compare", str(recommended), str(REPO / "configs" / "upstream_shaped.yaml"), str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "A: per_achievement returns" in out and "B: per_achievement returns" in out
