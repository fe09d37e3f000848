"""Search for reward weights that rank episodes as progress does, scored on held-out episodes.

``search(corpus, trials=N)`` splits the corpus by episode (stratified by policy, seeded) into
fit and held-out episodes, then runs ``N`` Optuna trials (multivariate TPE) over the settings a
linear fit cannot choose (strategy, k-limits where they act, the fit's temperature and ridge,
resource scales and lambda when allowed); each trial fits the 22 achievement weights exactly
(``linear.fit_weights``) inside cross-validation folds of the fit episodes and scores the
out-of-fold returns. The best trial's settings are refitted on all fit episodes, written as a
lint-clean ``RewardConfig``, and scored once, with ``workbench.scoring.score``, on the held-out
episodes, which no fit and no trial has seen, with a stratified bootstrap interval.

Modules: ``split`` (held-out split and folds), ``objective`` (per-episode design arrays and the
objective), ``linear`` (the exact fit), ``study`` (Optuna). Figures: ``workbench.views.plots.search``.
"""

# ruff: noqa: E402
# (the imports below need the optional packages checked first)
from __future__ import annotations

from workbench.util.extras import require_extra

require_extra("search", "the weight search (workbench.analysis.search)", "optuna", "scipy", "threadpoolctl")

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.search.exploit_constraint import ExploitabilityConstraint, ExploitabilityScorer
from workbench.analysis.search.held_out import HeldOutScore, few_held_out_note, held_out_score
from workbench.analysis.search.objective import Design, Objective, agreement, build_design, resource_slot_weights
from workbench.analysis.search.result import SearchResult
from workbench.analysis.search.split import Split, split_episodes, stratified_folds
from workbench.analysis.search.study import SearchSpace, TrialEvaluator, default_params, run_study, trials_table
from workbench.core.config import STEPWISE_MODE, RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.named_configs import STARTING_CONFIG
from workbench.core.reward_rule import achievement_weights, rule_for
from workbench.data.episodes import Corpus
from workbench.errors import SearchError, WorkbenchError
from workbench.scoring import PreparedCorpus, prepare, score

__all__ = ["HeldOutScore", "SearchResult", "search"]

#: Below this many held-out episodes the result says its interval is wide.
FEW_HELD_OUT = 20
#: Decimal places of written weights (the reported scores are those of the rounded config).
WEIGHT_DECIMALS = 4


def search(
    corpus: Corpus,
    *,
    trials: int = 200,
    seed: int = 0,
    base: RewardConfig | None = None,
    progress: str | Mapping[str, float] = "achievements",
    metric: str = "spearman",
    penalize: str | None = None,
    penalty: float = 0.0,
    weight_range: tuple[float, float] = (0.0, 5.0),
    held_out: float = 0.3,
    folds: int = 3,
    stratify: str = "policy",
    strategies: tuple[str, ...] = ("per_achievement", "consistent"),
    resource_overrides: bool = False,
    lambda_range: tuple[float, float] | None = None,
    storage: str | Path | None = None,
    study_name: str = "workbench-search",
    bootstrap_reps: int = 2000,
    show_progress: bool = True,
    evaluate_on: Callable[[TrialEvaluator], Callable[[list[dict[str, Any]]], list[dict[str, float]]]] | None = None,
    batch_size: int = 1,
    max_exploitability: float | None = None,
    exploitability: ExploitabilityScorer | None = None,
) -> SearchResult:
    """Search for a config whose shaped return ranks ``corpus``'s episodes as ``progress`` does.

    Args:
        corpus: The episodes (split into fit and held-out episodes).
        trials: Optuna trials (0: the exact fit with default settings only).
        seed: The split's, the folds' and the sampler's seed.
        base: The config to start from (None: the named config ``per_achievement``); the result
            keeps its lambda and resource tables and replaces strategy, weights and k-limits.
        progress: What the return should rank like: a measure's name or weights per achievement.
        metric: "spearman" or "kendall".
        penalize: A group (e.g. "farmer") whose pay per unit of progress above the rest's is
            subtracted, ``penalty`` times (None: no penalty).
        penalty: The penalty's factor.
        weight_range: Bounds of every achievement weight (keep the low end >= 0 for a
            lint-clean config).
        held_out: The share of episodes held out.
        folds: Cross-validation folds inside the fit episodes.
        stratify: The index column the split and folds are stratified by.
        strategies: The strategies searched.
        resource_overrides: Also search scales of the resource tables (a workbench extension a
            training TOML cannot carry).
        lambda_range: Also search lambda in this range (None: keep the base's).
        storage: An Optuna journal file to share or resume the study (None: in memory).
        study_name: The study's name in ``storage``.
        bootstrap_reps: Resamples of the held-out score's interval.
        show_progress: Show a tqdm bar over the trials.
        evaluate_on: Given the evaluator, a function evaluating a batch of trials elsewhere
            (e.g. ``workbench.cluster.trial_mapper(client, ...)``; see ``study.run_study``).
        batch_size: Trials evaluated at a time; with 1 the result is a serial search's.
        max_exploitability: Constrain the search: a trial whose config pays some probe loop's
            sustained progress-free pay above this many times honest play's is infeasible
            (``exploit_constraint``; 1.0: no probe above honest play). None: no constraint.
        exploitability: What scores a config's exploitability for the constraint, e.g.
            ``workbench.analysis.exploitability.default_check()`` (required with
            ``max_exploitability``).

    Returns:
        The ``SearchResult``.

    Raises:
        SearchError: ``trials < 0``, settings the search cannot use, or ``max_exploitability``
            without ``exploitability``.
        CorpusError: A corpus too small to split.
        WorkbenchError: An unknown metric, progress measure or group to penalise, or bad ranges.
    """
    if trials < 0:
        raise SearchError(f"trials must be >= 0, got {trials}")
    if max_exploitability is not None and exploitability is None:
        raise SearchError("max_exploitability needs exploitability (e.g. analysis.exploitability.default_check())")
    return _search(corpus, dict(locals()))  # every argument by name: the work is split off to keep each part short


def _search(corpus: Corpus, settings: dict[str, Any]) -> SearchResult:
    """``search``'s work, its arguments by name in ``settings``."""
    base = settings["base"] or STARTING_CONFIG.config
    metric, seed, penalize = settings["metric"], settings["seed"], settings["penalize"]
    objective = Objective(
        metric=metric, penalize=penalize, penalty=settings["penalty"] if penalize is not None else 0.0
    )
    split = (settings["held_out"], settings["folds"], settings["stratify"], seed)
    problem = _Problem.build(corpus, base, settings["progress"], objective, split, settings["weight_range"])
    space = SearchSpace(
        strategies=tuple(settings["strategies"]),
        repeating=problem.repeating,
        resource_overrides=settings["resource_overrides"],
        lambda_range=settings["lambda_range"],
    )
    evaluator: Callable[[Mapping[str, Any]], dict[str, float]] = problem.evaluator
    constraint = None
    if settings["max_exploitability"] is not None:
        make_config = partial(_trial_config, problem.evaluator, base=base, lam=problem.lam)
        constraint = ExploitabilityConstraint(
            problem.evaluator, settings["exploitability"], make_config, settings["max_exploitability"]
        )
        evaluator = constraint
    study, params, cross_validated, table = _run_trials(
        evaluator,
        space,
        settings["trials"],
        settings["evaluate_on"],
        seed,
        settings["storage"],
        settings["study_name"],
        settings["show_progress"],
        settings["batch_size"],
    )
    bootstrap_reps = settings["bootstrap_reps"]
    config, weights = _config_of(problem.evaluator, params, base, problem.lam)
    returns = score(problem.prepared, config).reward_sum
    baseline_returns = score(problem.prepared, _lint_clean_base(base, problem.lam)).reward_sum
    held = problem.held_out_score(returns, bootstrap_reps, seed)
    baseline = problem.held_out_score(baseline_returns, bootstrap_reps, seed)
    fitted = agreement(returns[problem.fit_rows], problem.design.progress[problem.fit_rows], metric)
    notes = problem.notes
    if len(problem.held_rows) < FEW_HELD_OUT:
        notes.append(few_held_out_note(held, problem.design.groups[problem.held_rows]))
    if problem.split.unsplit_groups:
        notes.append(f"group(s) with one episode, fitted but never held out: {', '.join(problem.split.unsplit_groups)}")
    if constraint is not None:
        worst = constraint.check.of(config).worst_ratio
        met = "met" if not worst > constraint.max_ratio else "NOT met (no trial met it)"
        notes.append(
            f"exploitability constraint (no probe above {constraint.max_ratio:g}x honest play's sustained "
            f"progress-free pay): {met}; the worst probe is paid {worst:.2f}x honest play"
        )
    importance = _importance(problem.evaluator, config, weights, problem.fit_rows, metric)
    return SearchResult(
        config, params, weights, held, baseline, cross_validated, fitted, table, importance, problem.split, notes, study
    )


@dataclass
class _Problem:
    """What a search fits on: the prepared corpus and its design, the split (row positions of
    the fit and held-out episodes), the evaluator of trials, the lambda used and the notes so
    far."""

    prepared: PreparedCorpus
    design: Design
    split: Split
    fit_rows: np.ndarray
    held_rows: np.ndarray
    objective: Objective
    evaluator: TrialEvaluator
    lam: float
    notes: list[str]

    @classmethod
    def build(
        cls,
        corpus: Corpus,
        base: RewardConfig,
        progress: str | Mapping[str, float],
        objective: Objective,
        splitting: tuple[float, int, str, int],
        weight_range: tuple[float, float],
    ) -> _Problem:
        """The problem of ranking ``corpus`` by ``progress`` from ``base``, split as
        ``splitting`` = (held-out fraction, folds, stratify by, seed) says. Raises as ``search``."""
        held_out, folds, stratify, seed = splitting
        ids = list(corpus.ids)
        group_list = _groups_to_split(corpus, stratify, objective.penalize)
        prepared = prepare(corpus)
        design = build_design(prepared, group_list, progress)
        split = split_episodes(ids, group_list, held_out=held_out, seed=seed, stratify=stratify)
        fit_rows = np.flatnonzero(split.mask(ids, "fit"))
        held_rows = np.flatnonzero(split.mask(ids, "held_out"))
        notes: list[str] = []
        fold_of = _folds(design.groups[fit_rows], folds, seed, notes)
        lam = base.effective_lambda if base.effective_lambda > 0 else 1.0
        if base.effective_lambda <= 0:
            notes.append(f"the base lambda {base.indicator_lambda} is not positive; the result uses 1.0")
        prior = achievement_weights(base.weights)  # weights.get(name, 1.0) as the task app reads them
        resources = resource_slot_weights(base.resource_weights)
        evaluator = TrialEvaluator(design, fit_rows, fold_of, objective, weight_range, prior, resources, lam)
        return cls(prepared, design, split, fit_rows, held_rows, objective, evaluator, lam, notes)

    @property
    def repeating(self) -> tuple[str, ...]:
        """The achievements some episode unlocks more than once (their k-limits are searched)."""
        return tuple(name for name, repeats in zip(ACHIEVEMENTS, self.design.repeating) if repeats)

    def held_out_score(self, returns: np.ndarray, bootstrap_reps: int, seed: int) -> HeldOutScore:
        """The objective of every episode's ``returns`` on the held-out episodes, with its interval."""
        rows, design, objective = self.held_rows, self.design, self.objective
        return held_out_score(
            returns[rows], design.progress[rows], design.groups[rows], objective, bootstrap_reps, seed
        )


def _groups_to_split(corpus: Corpus, stratify: str, penalize: str | None) -> list[str]:
    """Each episode's ``stratify`` group, in ``corpus`` order; ``WorkbenchError`` when the group
    to ``penalize`` has no episode."""
    groups = corpus.groups(stratify)
    group_list = [groups[i] for i in corpus.ids]
    if penalize is not None and penalize not in set(group_list):
        raise WorkbenchError(
            f"cannot penalise {penalize!r}: no episode has {stratify} {penalize!r} "
            f"(there are {sorted(set(group_list))})"
        )
    return group_list


def _folds(fit_groups: np.ndarray, folds: int, seed: int, notes: list[str]) -> np.ndarray | None:
    """The cross-validation fold of each fit episode (stratified by its group), or None (with a
    note added to ``notes``) when there are too few fit episodes or folds to cross-validate."""
    if len(fit_groups) >= 4 and folds >= 2:
        return stratified_folds(list(fit_groups), folds, seed=seed)
    notes.append(f"only {len(fit_groups)} fit episodes: trials are scored in-sample, without cross-validation")
    return None


def _run_trials(
    evaluator: Callable[[Mapping[str, Any]], dict[str, float]],
    space: SearchSpace,
    trials: int,
    evaluate_on: Callable[[Any], Callable[[list[dict[str, Any]]], list[dict[str, float]]]] | None,
    seed: int,
    storage: str | Path | None,
    study_name: str,
    show_progress: bool,
    batch_size: int,
) -> tuple[Any, dict[str, Any], float, pd.DataFrame]:
    """The search's trials: an Optuna study of ``trials`` (batches evaluated by
    ``evaluate_on(evaluator)`` when given; the other arguments as ``run_study`` takes them), or
    for 0 the default settings evaluated once here. Returns the study (None for 0), the best
    parameters, their cross-validated objective and the table of trials."""
    if trials == 0:
        params = default_params(space)
        value = evaluator(params)["value"]
        return None, params, value, trials_table_from([params], [value])
    evaluate_batch = None if evaluate_on is None else evaluate_on(evaluator)
    study = run_study(
        evaluator,
        space,
        trials,
        seed=seed,
        storage=storage,
        study_name=study_name,
        show_progress=show_progress,
        evaluate_batch=evaluate_batch,
        batch_size=batch_size,
    )
    table = trials_table(study)
    if not table.empty and any("exploitability" in t.user_attrs for t in study.trials):  # under the constraint
        table.insert(4, "exploitability", [t.user_attrs.get("exploitability") for t in study.trials])
    return study, dict(study.best_trial.params), float(study.best_value), table


def trials_table_from(params: list[dict[str, Any]], values: list[float]) -> pd.DataFrame:
    """A trials table for runs without a study (``trials=0``): one row per params dict."""
    rows = [
        {"trial": i, "value": v, "best_so_far": max(values[: i + 1]), "state": "COMPLETE", **p}
        for i, (p, v) in enumerate(zip(params, values))
    ]
    return pd.DataFrame(rows)


def _config_of(
    evaluator: TrialEvaluator, params: Mapping[str, Any], base: RewardConfig, lam: float
) -> tuple[RewardConfig, dict[str, float]]:
    """The config a trial's params describe, refitted on every fit episode, weights rounded."""
    changes: dict[str, Any] = {
        "enabled": True,
        "mode": STEPWISE_MODE,
        "indicator_lambda": float(params.get("indicator_lambda", lam)),
    }
    if not rule_for(params["strategy"]).pays_credits:  # nothing to fit: the indicator alone
        return base.with_changes(strategy=params["strategy"], weights={}, k_limits={}, **changes), {}
    fit = evaluator.fit(params, evaluator.fit_rows)
    weights = {name: round(float(w), WEIGHT_DECIMALS) for name, w in zip(ACHIEVEMENTS, fit.weights)}
    k_limits = {
        name: 0
        for name, unlimited in zip(ACHIEVEMENTS, evaluator.unlimited(params))
        if unlimited and evaluator.design.repeating[ACHIEVEMENTS.index(name)]
    }
    overrides = dict(base.resource_overrides)
    if "inventory_scale" in params:
        slots = evaluator.resource_weights(params)
        items, counts = slots[: len(INVENTORY_ITEMS)], slots[len(INVENTORY_ITEMS) :]
        overrides = {
            "inventory": {item: round(float(w), 6) for item, w in zip(INVENTORY_ITEMS, items)},
            "achievement_counts": {name: round(float(w), 6) for name, w in zip(ACHIEVEMENTS, counts)},
        }
    config = base.with_changes(
        strategy="per_achievement", weights=weights, k_limits=k_limits, resource_overrides=overrides, **changes
    )
    return config, weights


def _trial_config(
    evaluator: TrialEvaluator, params: Mapping[str, Any], *, base: RewardConfig, lam: float
) -> RewardConfig:
    """The config a trial's params describe (``_config_of``'s, without the weights)."""
    return _config_of(evaluator, params, base, lam)[0]


def _lint_clean_base(base: RewardConfig, lam: float) -> RewardConfig:
    """The base config as scored for the baseline (its lambda made positive, shaping on)."""
    return base.with_changes(enabled=True, mode=STEPWISE_MODE, indicator_lambda=lam)


def _importance(
    evaluator: TrialEvaluator, config: RewardConfig, weights: Mapping[str, float], rows: np.ndarray, metric: str
) -> pd.DataFrame:
    """Per achievement on the fit episodes (in-sample): weight, share of the shaped return, and
    the agreement lost when that weight alone is set to 0."""
    columns = ["achievement", "weight", "share_of_return", "agreement_drop_if_zero"]
    if not weights:
        return pd.DataFrame(columns=columns)
    design = evaluator.design
    w = np.array([weights[name] for name in ACHIEVEMENTS])
    slots = resource_slot_weights(config.resource_weights)
    unlimited = np.array([config.k_limits.get(name, 1) <= 0 for name in ACHIEVEMENTS])
    credited = design.credited(unlimited)[rows]
    returns = design.returns(w, slots, unlimited=unlimited, rows=rows)
    progress = design.progress[rows]
    full = agreement(returns, progress, metric)
    total = float(np.abs(returns).sum()) or 1.0
    drops = []
    for a in range(len(ACHIEVEMENTS)):
        without = returns - credited[:, a] * w[a]
        drops.append(full - agreement(without, progress, metric))
    table = pd.DataFrame(
        {
            "achievement": list(ACHIEVEMENTS),
            "weight": w,
            "share_of_return": (credited * w).sum(axis=0) / total,
            "agreement_drop_if_zero": drops,
        }
    )
    return table.sort_values(["agreement_drop_if_zero", "share_of_return"], ascending=False, kind="stable").reset_index(
        drop=True
    )
