"""workbench.analysis.search: the held-out split, the exact fit, Optuna trials, the best config, the CLI."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from matplotlib.figure import Figure

from workbench.analysis.rankstats import spearman_rho
from workbench.analysis.search import search
from workbench.analysis.search.linear import fit_weights
from workbench.analysis.search.objective import Objective, build_design, resource_slot_weights
from workbench.analysis.search.split import split_episodes, stratified_folds
from workbench.analysis.search.study import SearchSpace, TrialEvaluator, default_params
from workbench.cli import main
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INITIAL_INVENTORY
from workbench.data.episodes import Corpus, Episode
from workbench.data.sample import sample_corpus
from workbench.errors import CorpusError, SearchError, WorkbenchError
from workbench.scoring import prepare, score
from workbench.views.plots.search import search_importance, search_trials

#: Unlock order of the synthetic episodes: collect_sapling first, so farmers can farm it.
ORDER = ("collect_sapling", *[a for a in ACHIEVEMENTS if a != "collect_sapling"])


def synthetic_episode(episode_id: str, policy: str, unlocks: int, farm: int = 0, relock: str | None = None) -> Episode:
    """One decision per unlock (in ORDER), then ``farm`` decisions that each pick a sapling
    (inventory and collect_sapling count +1: resource shaping only). ``relock`` turns that
    achievement's status false and true again (a second unlock, as no real Crafter episode has)."""
    inventory = dict(INITIAL_INVENTORY)
    status = {a: False for a in ACHIEVEMENTS}
    counts = {a: 0 for a in ACHIEVEMENTS}

    def state() -> dict:
        return {"inventory": dict(inventory), "achievements_status": dict(status), "achievements_counts": dict(counts)}

    states = [state()]
    for name in ORDER[:unlocks]:
        status[name] = True
        counts[name] += 1
        states.append(state())
    for _ in range(farm):
        inventory["sapling"] += 1
        counts["collect_sapling"] += 1
        states.append(state())
    if relock:
        status[relock] = False
        states.append(state())
        status[relock] = True
        counts[relock] += 1
        states.append(state())
    return Episode.from_states(episode_id, states, [["noop"]] * (len(states) - 1), metadata={"policy": policy})


@pytest.fixture(scope="module")
def separable() -> Corpus:
    """18 episodes, progress 1..18 each once; farmers (levels 3, 6, ...) farm 30 saplings, which
    default weights pay more than one more achievement (4.2 vs 1.0) and weight 5 does not."""
    episodes = []
    for level in range(1, 19):
        policy = ("steady", "curious", "farmer")[(level - 1) % 3]
        episodes.append(synthetic_episode(f"{policy}-{level:02d}", policy, level, farm=30 if policy == "farmer" else 0))
    return Corpus(episodes)


@pytest.fixture(scope="module")
def sample() -> Corpus:
    return sample_corpus()


# -- the held-out split -------------------------------------------------------------------------
def test_split_is_stratified_seeded_and_disjoint(separable):
    ids, groups = separable.ids, separable.index["policy"].tolist()
    split = split_episodes(ids, groups, held_out=0.3, seed=4)
    assert set(split.fit).isdisjoint(split.held_out)
    assert sorted(split.fit + split.held_out) == sorted(ids)
    assert split.table() == {g: {"fit": 4, "held_out": 2} for g in ("steady", "curious", "farmer")}
    assert split == split_episodes(ids, groups, held_out=0.3, seed=4)
    assert any(split_episodes(ids, groups, seed=s).held_out != split.held_out for s in range(5, 10))
    assert split.mask(ids).sum() == 6 and not (split.mask(ids) & split.mask(ids, "fit")).any()


def test_split_keeps_single_episode_groups_fitted_and_refuses_tiny_corpora():
    split = split_episodes(["a", "b", "c", "d"], ["x", "x", "x", "lonely"], held_out=0.5, seed=0)
    assert "d" in split.fit and split.unsplit_groups == ("lonely",)
    with pytest.raises(CorpusError, match="at least 3"):
        split_episodes(["a", "b"], ["x", "x"])
    with pytest.raises(CorpusError, match="single episode"):
        split_episodes(["a", "b", "c"], ["x", "y", "z"])


def test_folds_are_stratified_and_cover_every_item():
    groups = ["a"] * 6 + ["b"] * 3
    folds = stratified_folds(groups, 3, seed=1)
    assert sorted(np.bincount(folds)) == [3, 3, 3]
    assert all(sorted(folds[:6] == f).count(True) == 2 for f in range(3))
    assert (folds == stratified_folds(groups, 3, seed=1)).all()


def test_no_fit_and_no_trial_sees_a_held_out_episode(separable, monkeypatch):
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    original = TrialEvaluator.returns

    def recording(self, params, fit_on, score_on, key="all"):
        seen.append((np.asarray(fit_on), np.asarray(score_on)))
        return original(self, params, fit_on, score_on, key)

    monkeypatch.setattr(TrialEvaluator, "returns", recording)
    result = search(separable, trials=12, seed=2, show_progress=False, bootstrap_reps=200)
    held = set(np.flatnonzero(result.split.mask(separable.ids)).tolist())
    assert seen
    for fit_on, score_on in seen:
        assert held.isdisjoint(fit_on.tolist()) and held.isdisjoint(score_on.tolist())
        if len(score_on) < len(result.split.fit):  # a fold: never scored on what it was fitted on
            assert set(fit_on.tolist()).isdisjoint(score_on.tolist())


def test_held_out_progress_changes_only_the_held_out_score(separable):
    base = search(separable, trials=10, seed=1, show_progress=False, bootstrap_reps=200)
    progress = {e: float(v) for e, v in zip(separable.ids, prepare(separable).seen_status.sum(axis=1))}
    for episode in base.split.held_out:
        progress[episode] = -progress[episode]  # upside down: only the held-out score may notice
    flipped = search(separable, trials=10, seed=1, show_progress=False, bootstrap_reps=200, progress=progress)
    columns = ["trial", "value", "agreement", "strategy", "log10_temperature", "log10_ridge"]
    pd.testing.assert_frame_equal(base.trials[columns], flipped.trials[columns])
    assert base.config == flipped.config and base.fitted == flipped.fitted
    assert flipped.held_out.value < 0 < base.held_out.value


# -- the exact fit ------------------------------------------------------------------------------
def test_exact_fit_finds_a_perfect_ranking_that_holds_on_held_out_episodes(separable):
    result = search(separable, trials=0, strategies=("per_achievement",), show_progress=False, bootstrap_reps=200)
    assert result.held_out.value == pytest.approx(1.0) and result.held_out.episodes == 6
    assert result.fitted == pytest.approx(1.0)
    assert result.baseline.value < 0.95  # every weight 1.0: farmers' saplings outrank progress
    assert all(0.0 <= w <= 5.0 for w in result.weights.values())


def test_design_returns_equal_workbench_score(separable):
    prepared = prepare(separable)
    design = build_design(prepared, separable.index["policy"].tolist())
    config = RewardConfig(
        strategy="per_achievement",
        indicator_lambda=0.7,
        weights={a: 0.1 * i for i, a in enumerate(ACHIEVEMENTS)},
        resource_overrides={"inventory": {"sapling": 0.3}, "achievement_count_default": 0.01},
    )
    weights = np.array([config.weights[a] for a in ACHIEVEMENTS])
    returns = design.returns(weights, resource_slot_weights(config.resource_weights), lam=0.7)
    np.testing.assert_allclose(returns, score(prepared, config).reward_sum, rtol=1e-12, atol=1e-12)
    consistent = RewardConfig(strategy="consistent", indicator_lambda=2.0)
    np.testing.assert_allclose(
        design.returns(weights, weights, strategy="consistent", lam=2.0),
        score(prepared, consistent).reward_sum,
        rtol=1e-12,
    )


def test_k_limits_act_only_on_repeated_unlocks_and_match_score():
    relocked = ORDER[1]
    corpus = Corpus(
        [
            synthetic_episode("a", "x", 4, relock=relocked),
            synthetic_episode("b", "x", 6),
            synthetic_episode("c", "y", 2),
            synthetic_episode("d", "y", 8),
        ]
    )
    design = build_design(prepare(corpus), corpus.index["policy"].tolist())
    assert [a for a, r in zip(ACHIEVEMENTS, design.repeating) if r] == [relocked]
    unlimited = np.array([a == relocked for a in ACHIEVEMENTS])
    config = RewardConfig(strategy="per_achievement", k_limits={relocked: 0})
    slots = resource_slot_weights(config.resource_weights)
    np.testing.assert_allclose(
        design.returns(np.ones(22), slots, unlimited=unlimited), score(corpus, config).reward_sum
    )
    assert design.returns(np.ones(22), slots, unlimited=unlimited)[0] == pytest.approx(
        design.returns(np.ones(22), slots)[0] + 1.0
    )
    result = search(corpus, trials=6, show_progress=False, bootstrap_reps=100)
    assert f"k_limit.{relocked}" in result.trials.columns


def test_fit_without_two_progress_levels_keeps_the_prior(separable):
    design = build_design(prepare(separable), separable.index["policy"].tolist())
    fit = fit_weights(design, np.array([0]), slot_weights=np.zeros(38), prior=np.full(22, 2.0))
    assert fit.levels == 1 and (fit.weights == 2.0).all()
    with pytest.raises(SearchError, match="weight_range"):
        fit_weights(design, np.arange(3), slot_weights=np.zeros(38), weight_range=(2.0, 1.0))


# -- Optuna ---------------------------------------------------------------------------------------
def test_trials_are_reproducible_for_a_seed(sample):
    runs = [
        search(sample, trials=25, seed=7, penalize="farmer", penalty=0.5, show_progress=False, bootstrap_reps=200)
        for _ in range(2)
    ]
    columns = [c for c in runs[0].trials.columns if c != "seconds"]
    pd.testing.assert_frame_equal(runs[0].trials[columns], runs[1].trials[columns])
    assert runs[0].config == runs[1].config and runs[0].held_out == runs[1].held_out
    other = search(sample, trials=25, seed=8, show_progress=False, bootstrap_reps=200)
    assert not other.trials["log10_temperature"].equals(runs[0].trials["log10_temperature"])
    assert len(runs[0].trials) == 25 and runs[0].trials["best_so_far"].is_monotonic_increasing


def test_journal_storage_resumes_a_study(sample, tmp_path):
    journal = tmp_path / "study.journal"
    search(sample, trials=4, storage=journal, show_progress=False, bootstrap_reps=100)
    again = search(sample, trials=3, storage=journal, show_progress=False, bootstrap_reps=100)
    assert journal.exists() and len(again.trials) == 7


def test_few_episodes_are_reported_as_such(sample):
    result = search(sample, trials=3, show_progress=False, bootstrap_reps=200)
    assert result.held_out.episodes == 3
    assert any("only 3 held-out episodes" in note for note in result.warnings)
    assert "not a held-out score" in result.summary()


def test_unknown_penalised_policy_is_a_user_error(sample):
    with pytest.raises(WorkbenchError, match="cannot penalise 'hacker'"):
        search(sample, trials=1, penalize="hacker", show_progress=False)


# -- the best config ------------------------------------------------------------------------------
def test_best_config_lints_clean_and_round_trips(separable, tmp_path):
    result = search(
        separable,
        trials=15,
        strategies=("per_achievement",),
        base=RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml"),
        show_progress=False,
        bootstrap_reps=200,
    )
    assert [f for f in result.config.lint() if f.level != "info"] == []
    assert set(result.config.weights) == set(ACHIEVEMENTS) and result.config.indicator_lambda == 0.5
    for name in ("best.yaml", "best.toml"):
        path = result.to_file(tmp_path / name)
        assert RewardConfig.from_file(path).to_dict() == result.config.to_dict()
        with pytest.raises(FileExistsError):
            result.to_file(path)
    training = tmp_path / "train.toml"
    shutil.copy(REPO / "configs" / "examples" / "trainer_shaped.toml", training)
    result.export_into(training)
    assert RewardConfig.from_file(training).to_task_app_dict() == result.config.to_task_app_dict()
    rescored = score(separable, RewardConfig.from_file(tmp_path / "best.yaml")).reward_sum
    held = result.split.mask(separable.ids)
    assert spearman_rho(rescored[held], prepare(separable).seen_status.sum(axis=1)[held]) == result.held_out.value


def test_figures(sample):
    result = search(sample, trials=8, strategies=("per_achievement",), show_progress=False, bootstrap_reps=100)
    for figure in (search_trials(result), search_importance(result)):
        assert isinstance(figure, Figure) and figure.axes[0].get_title()
    assert len(result.importance) == 22


# -- the command line -----------------------------------------------------------------------------
def test_cli_writes_refuses_to_overwrite_and_exports(capsys, tmp_path):
    out, trials = tmp_path / "best.yaml", tmp_path / "trials.csv"
    training = tmp_path / "train.toml"
    shutil.copy(REPO / "configs" / "examples" / "task_app_complex.toml", training)
    code = main(
        [
            "search",
            "sample",
            "--trials",
            "12",
            "--out",
            str(out),
            "--trials-out",
            str(trials),
            "--export",
            str(training),
            "--penalize",
            "farmer",
            "--quiet",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0 and "held-out: spearman" in printed and "not a held-out score" in printed
    written = RewardConfig.from_file(out)
    assert RewardConfig.from_file(training).to_task_app_dict() == written.to_task_app_dict()
    assert len(pd.read_csv(trials)) == 12
    before = out.read_bytes()
    assert main(["search", "sample", "--trials", "2", "--out", str(out), "--quiet"]) == 2
    assert "already exists" in capsys.readouterr().err and out.read_bytes() == before
    assert (
        main(
            [
                "search",
                "sample",
                "--trials",
                "2",
                "--out",
                str(out),
                "--overwrite",
                "--quiet",
                "--trials-out",
                str(tmp_path / "t.parquet"),
            ]
        )
        == 0
    )
    assert len(pd.read_parquet(tmp_path / "t.parquet")) == 2


def test_cli_shows_a_progress_bar_unless_quiet(capsys):
    assert main(["search", "sample", "--trials", "3", "--strategy", "consistent"]) == 0
    captured = capsys.readouterr()
    assert "search:" in captured.err and "0/3" in captured.err and "strategy consistent" in captured.out


def test_cli_rejects_bad_usage(capsys, tmp_path):
    assert main(["search", "sample", "--out", str(tmp_path / "best.txt")]) == 2
    assert main(["search", "sample", "--trials", "1", "--penalize", "nobody", "--quiet"]) == 2
    assert "cannot penalise" in capsys.readouterr().err


# -- the parts a workbench extension or another process uses -----------------------------------
def test_resource_override_search_writes_scaled_tables_that_score_as_searched(separable):
    result = search(
        separable,
        trials=12,
        seed=3,
        resource_overrides=True,
        strategies=("per_achievement",),
        show_progress=False,
        bootstrap_reps=100,
    )
    assert {"inventory_scale", "count_scale"} <= set(result.trials.columns)
    assert {f.code for f in result.config.lint() if f.level == "warning"} == {"resource-overrides-not-exported"}
    design = build_design(prepare(separable), separable.index["policy"].tolist())
    weights = np.array([result.weights[a] for a in ACHIEVEMENTS])
    slots = resource_slot_weights(result.config.resource_weights)
    np.testing.assert_allclose(design.returns(weights, slots), score(separable, result.config).reward_sum, rtol=1e-12)


def test_lambda_is_searched_only_when_asked(sample):
    plain = search(sample, trials=5, show_progress=False, bootstrap_reps=100)
    assert "indicator_lambda" not in plain.trials.columns and plain.config.indicator_lambda == 1.0
    ranged = search(sample, trials=5, lambda_range=(0.25, 2.0), show_progress=False, bootstrap_reps=100)
    assert ranged.trials["indicator_lambda"].between(0.25, 2.0).all()


def test_a_worker_can_rebuild_the_evaluator_from_arrays(separable, tmp_path):
    design = build_design(prepare(separable), separable.index["policy"].tolist())
    np.savez(tmp_path / "design.npz", **design.arrays())
    with np.load(tmp_path / "design.npz", allow_pickle=False) as arrays:
        rebuilt = type(design).from_arrays(dict(arrays))
    rows, folds = np.arange(12), stratified_folds(list(design.groups[:12]), 3)
    slots = resource_slot_weights(RewardConfig().resource_weights)
    params = default_params(SearchSpace())
    here, there = (
        TrialEvaluator(d, rows, folds, Objective("spearman", "farmer", 1.0), (0.0, 5.0), np.ones(22), slots)(params)
        for d in (design, rebuilt)
    )
    assert here == there and not np.isnan(here["overpay"]) and rebuilt.ids == design.ids
