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

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.alignment import bootstrap_interval, kendall_tau, spearman_rho
from workbench.analysis.search.objective import (
    Design,
    Objective,
    agreement,
    build_design,
    overpay,
    resource_slot_weights,
)
from workbench.analysis.search.split import Split, split_episodes, stratified_folds
from workbench.analysis.search.study import SearchSpace, TrialEvaluator, default_params, run_study, trials_table
from workbench.core.config import STEPWISE_MODE, RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.reward import coerce_weights
from workbench.data.episodes import Corpus
from workbench.errors import SearchError, WorkbenchError
from workbench.scoring import prepare, score

__all__ = ["HeldOutScore", "SearchResult", "search"]

#: Below this many held-out episodes the result says its interval is wide.
FEW_HELD_OUT = 20
#: Decimal places of written weights (the reported scores are those of the rounded config).
WEIGHT_DECIMALS = 4


@dataclass(frozen=True)
class HeldOutScore:
    """A score on episodes nothing was fitted on: ``metric`` (spearman / kendall), ``value`` with
    its stratified-bootstrap percentile interval ``low`` .. ``high`` at ``confidence``, over
    ``episodes`` episodes; ``overpay`` of the penalised policy among them (NaN if none)."""

    metric: str
    value: float
    low: float
    high: float
    confidence: float
    episodes: int
    overpay: float = float("nan")

    def __str__(self) -> str:
        interval = (
            "no interval"
            if math.isnan(self.low)
            else f"{self.confidence:.0%} interval {self.low:.3f} to {self.high:.3f}"
        )
        return f"{self.metric} {self.value:.3f} ({interval}; {self.episodes} held-out episodes)"


@dataclass
class SearchResult:
    """What ``search`` found.

    - ``config``: the best config (lint clean when only task-app settings were searched), with
      ``params`` (its trial's settings) and ``weights`` (per achievement, as written).
    - ``held_out``: its score on the held-out episodes (a ``HeldOutScore``), and ``baseline``:
      the base config's score on the same episodes, for comparison.
    - ``cross_validated``: the best trial's objective on out-of-fold returns of the fit episodes
      (what chose it: optimistic, as any selection score); ``fitted``: agreement of the final
      config on the fit episodes themselves (in-sample, never a held-out score).
    - ``trials``: one row per trial (``study.trials_table``); ``importance``: per achievement,
      its weight, share of the fit episodes' returns and the in-sample agreement lost when it
      is set to 0; ``split``; ``warnings``: what to keep in mind (few episodes, wide interval).
    """

    config: RewardConfig
    params: dict[str, Any]
    weights: dict[str, float]
    held_out: HeldOutScore
    baseline: HeldOutScore
    cross_validated: float
    fitted: float
    trials: pd.DataFrame
    importance: pd.DataFrame
    split: Split
    warnings: list[str] = field(default_factory=list)
    study: Any = field(default=None, repr=False)

    def to_file(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the best config (YAML or standalone TOML, ``RewardConfig.to_file``)."""
        return self.config.to_file(path, overwrite=overwrite)

    def export_into(self, toml_path: str | Path) -> Path:
        """Write the best config into an existing training TOML (``RewardConfig.export_into``)."""
        return self.config.export_into(toml_path)

    def summary(self) -> str:
        """A few lines for people: the held-out score first, then what chose the config."""
        lines = [
            f"held-out: {self.held_out}"
            + ("" if math.isnan(self.held_out.overpay) else f", overpay {self.held_out.overpay:+.1%}"),
            f"baseline (base config) on the same episodes: {self.baseline.metric} {self.baseline.value:.3f}",
            f"cross-validated objective of the best trial (fit episodes, selection score): {self.cross_validated:.3f}",
            f"in-sample agreement on the {len(self.split.fit)} fit episodes (not a held-out score): {self.fitted:.3f}",
            f"strategy {self.config.effective_strategy}, {len(self.trials)} trial(s)",
        ]
        return "\n".join(lines + [f"note: {w}" for w in self.warnings])


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
) -> SearchResult:
    """Search for a config whose shaped return ranks ``corpus``'s episodes as ``progress`` does.

    ``base``: the config to start from (default: per_achievement, lambda 1, every weight 1.0);
    the result keeps its lambda and resource tables and replaces strategy, weights and
    k-limits. ``metric``: "spearman" or "kendall"; ``penalize`` / ``penalty``: subtract
    ``penalty`` times how much more that group (e.g. "farmer") is paid per unit of progress
    than the rest; ``weight_range``: bounds of every achievement weight (keep the low end >= 0
    for a lint-clean config); ``held_out`` / ``folds`` / ``stratify`` / ``seed``: the split
    and the cross-validation inside the fit episodes; ``resource_overrides``: also search
    scales of the resource tables (a workbench extension a training TOML cannot carry);
    ``lambda_range``: also search lambda; ``storage``: an Optuna journal file to share or
    resume the study. ``trials=0`` runs the exact fit with default settings only.
    ``evaluate_on(evaluator)``: a function evaluating a batch of trials elsewhere (e.g.
    ``workbench.cluster.trial_mapper(client, ...)``), ``batch_size`` trials at a time (see
    ``study.run_study``); with ``batch_size=1`` the result is that of a serial search.

    Raises ``CorpusError`` for a corpus too small to split, ``WorkbenchError`` for an unknown
    metric, progress measure or group to penalise, ``ValueError`` for bad ranges.
    """
    if trials < 0:
        raise SearchError(f"trials must be >= 0, got {trials}")
    base = base or RewardConfig(strategy="per_achievement")
    groups = corpus.groups(stratify)
    ids = list(corpus.ids)
    group_list = [groups[i] for i in ids]
    if penalize is not None and penalize not in set(group_list):
        raise WorkbenchError(
            f"cannot penalise {penalize!r}: no episode has {stratify} {penalize!r} "
            f"(there are {sorted(set(group_list))})"
        )
    objective = Objective(metric=metric, penalize=penalize, penalty=penalty if penalize is not None else 0.0)
    prepared = prepare(corpus)
    design = build_design(prepared, group_list, progress)
    split = split_episodes(ids, group_list, held_out=held_out, seed=seed, stratify=stratify)
    fit_rows = np.flatnonzero(split.mask(ids, "fit"))
    held_rows = np.flatnonzero(split.mask(ids, "held_out"))
    notes: list[str] = []
    fold_of = None
    if len(fit_rows) >= 4 and folds >= 2:
        fold_of = stratified_folds(list(design.groups[fit_rows]), folds, seed=seed)
    else:
        notes.append(f"only {len(fit_rows)} fit episodes: trials are scored in-sample, without cross-validation")
    lam = base.effective_lambda if base.effective_lambda > 0 else 1.0
    if base.effective_lambda <= 0:
        notes.append(f"the base lambda {base.indicator_lambda} is not positive; the result uses 1.0")
    repeating = tuple(name for name, repeats in zip(ACHIEVEMENTS, design.repeating) if repeats)
    space = SearchSpace(
        strategies=tuple(strategies),
        repeating=repeating,
        resource_overrides=resource_overrides,
        lambda_range=lambda_range,
    )
    prior = np.array([coerce_weights(dict(base.weights)).get(name, 1.0) for name in ACHIEVEMENTS])
    evaluator = TrialEvaluator(
        design, fit_rows, fold_of, objective, weight_range, prior, resource_slot_weights(base.resource_weights), lam
    )

    study = None
    if trials > 0:
        study = run_study(
            evaluator,
            space,
            trials,
            seed=seed,
            storage=storage,
            study_name=study_name,
            show_progress=show_progress,
            evaluate_batch=None if evaluate_on is None else evaluate_on(evaluator),
            batch_size=batch_size,
        )
        params = dict(study.best_trial.params)
        cross_validated = float(study.best_value)
        table = trials_table(study)
    else:
        params = default_params(space)
        cross_validated = evaluator(params)["value"]
        table = trials_table_from([params], [cross_validated])
    config, weights = _config_of(evaluator, params, base, lam)
    scores = score(prepared, config)
    returns = scores.reward_sum
    held = _held_out_score(returns[held_rows], design, held_rows, objective, bootstrap_reps, seed)
    baseline_returns = score(prepared, _lint_clean_base(base, lam)).reward_sum
    baseline = _held_out_score(baseline_returns[held_rows], design, held_rows, objective, bootstrap_reps, seed)
    fitted = agreement(returns[fit_rows], design.progress[fit_rows], metric)
    if len(held_rows) < FEW_HELD_OUT:
        counts = pd.Series(design.groups[held_rows]).value_counts(sort=False)
        per_group = ", ".join(f"{n} {g}" for g, n in counts.items())
        interval = f"({held.low:.2f} to {held.high:.2f})"
        if counts.min() <= 2:
            why = (
                f"a score on so few is uncertain whatever its interval {interval} says, since resampling within a "
                "policy of one or two episodes can barely vary it"
            )
        elif held.high - held.low < 0.05:
            why = (
                f"the interval {interval} is narrow, but it only resamples these {len(held_rows)} episodes, and so "
                "few can look more certain than they are"
            )
        else:
            why = f"the interval {interval} is wide"
        notes.append(
            f"only {len(held_rows)} held-out episodes ({per_group}): {why}; record more episodes per policy "
            "for a score you can rely on"
        )
    if split.unsplit_groups:
        notes.append(f"group(s) with one episode, fitted but never held out: {', '.join(split.unsplit_groups)}")
    return SearchResult(
        config,
        params,
        weights,
        held,
        baseline,
        cross_validated,
        fitted,
        table,
        _importance(evaluator, config, weights, fit_rows, metric),
        split,
        notes,
        study,
    )


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
    if params["strategy"] == "consistent":
        return base.with_changes(strategy="consistent", weights={}, k_limits={}, **changes), {}
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


def _lint_clean_base(base: RewardConfig, lam: float) -> RewardConfig:
    """The base config as scored for the baseline (its lambda made positive, shaping on)."""
    return base.with_changes(enabled=True, mode=STEPWISE_MODE, indicator_lambda=lam)


def _held_out_score(
    returns: np.ndarray, design: Design, rows: np.ndarray, objective: Objective, reps: int, seed: int
) -> HeldOutScore:
    progress, groups = design.progress[rows], design.groups[rows]
    rank = spearman_rho if objective.metric == "spearman" else kendall_tau

    def statistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(rank(x, y))

    value, low, high = bootstrap_interval(statistic, [returns, progress], strata=list(groups), reps=reps, seed=seed)
    paid = overpay(returns, progress, groups == objective.penalize) if objective.penalize else float("nan")
    return HeldOutScore(objective.metric, value, low, high, 0.95, len(rows), paid)


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
