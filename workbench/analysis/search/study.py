"""The non-linear part of a search, with Optuna: strategy, k-limits, fit settings, resource scales.

Every trial proposes a plain ``params`` dict (``suggest``); ``TrialEvaluator`` turns it into a
cross-validated score over cached arrays: per fold, the exact fit (``workbench.analysis.search.linear``)
on the other folds' episodes, then the returns of the fold's own episodes; the objective is
computed on those out-of-fold returns of every fit episode. Held-out episodes are not in the
evaluator at all.

The evaluator is a plain callable over numpy arrays and a dict (no corpus, no study, no
closure), so another process can run it (docs/diagnostics-and-search.md, "On a cluster").
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pandas as pd
from tqdm.auto import tqdm

from workbench.analysis.search.journal import open_study
from workbench.analysis.search.linear import LinearFit, fit_weights
from workbench.analysis.search.objective import Design, Objective
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.reward_rule import rule_for
from workbench.errors import SearchError
from workbench.util.blas import single_threaded

__all__ = ["GRID", "SearchSpace", "TrialEvaluator", "default_params", "on_grid", "run_study", "suggest", "trials_table"]

STRATEGIES = ("per_achievement", "consistent")
#: Fits kept per evaluator: trials that repeat a fold's settings re-use its fit.
_FIT_CACHE = 4096


@dataclass(frozen=True)
class SearchSpace:
    """What Optuna varies.

    Attributes:
        strategies: The strategies tried (some of ``STRATEGIES``, at least one).
        repeating: The achievements whose ``k_limit.<name>`` (0 = unlimited, or 1) is varied
            (in real Crafter none: a name unlocks once per episode).
        resource_overrides: Vary ``inventory_scale`` and ``count_scale`` multiplying the task
            app's resource tables (a workbench extension the task app cannot express).
        lambda_range: The ``indicator_lambda`` range, or None to keep the base config's (a
            positive lambda changes no rank).
        log10_temperature: The range of the exact fit's log10 temperature.
        log10_ridge: The range of its log10 ridge.

    Raises:
        SearchError: An unknown or no strategy, or a ``lambda_range`` not 0 < low <= high.
    """

    strategies: tuple[str, ...] = STRATEGIES
    repeating: tuple[str, ...] = ()
    resource_overrides: bool = False
    lambda_range: tuple[float, float] | None = None
    log10_temperature: tuple[float, float] = (-2.0, 0.5)
    log10_ridge: tuple[float, float] = (-5.0, 0.0)

    def __post_init__(self) -> None:
        unknown = [s for s in self.strategies if s not in STRATEGIES]
        if unknown or not self.strategies:
            raise SearchError(f"strategies must be some of {list(STRATEGIES)}, got {list(self.strategies)}")
        if self.lambda_range is not None and not 0 < self.lambda_range[0] <= self.lambda_range[1]:
            raise SearchError(f"lambda_range must be 0 < low <= high, got {self.lambda_range}")


def suggest(trial: optuna.Trial, space: SearchSpace) -> dict[str, Any]:
    """One trial's params drawn from ``space``; every name is always suggested, so the space is
    the same for every trial (what multivariate TPE needs).

    Args:
        trial: The Optuna trial to draw from.
        space: What may vary.

    Returns:
        ``strategy``, ``log10_temperature``, ``log10_ridge`` and the optional names of ``space``.
    """
    params: dict[str, Any] = {
        "strategy": trial.suggest_categorical("strategy", list(space.strategies)),
        "log10_temperature": trial.suggest_float("log10_temperature", *space.log10_temperature),
        "log10_ridge": trial.suggest_float("log10_ridge", *space.log10_ridge),
    }
    for name in space.repeating:
        params[f"k_limit.{name}"] = trial.suggest_categorical(f"k_limit.{name}", [0, 1])
    if space.resource_overrides:
        params["inventory_scale"] = trial.suggest_float("inventory_scale", 0.0, 1.0)
        params["count_scale"] = trial.suggest_float("count_scale", 0.0, 1.0)
    if space.lambda_range is not None:
        params["indicator_lambda"] = trial.suggest_float("indicator_lambda", *space.lambda_range)
    return params


def default_params(space: SearchSpace) -> dict[str, Any]:
    """The first trial of every study (and what ``trials=0`` uses).

    Args:
        space: What may vary.

    Returns:
        per_achievement if allowed, temperature 1, ridge 1e-3, the task app's k-limit 1 and
        resource tables (scales 1), and with a ``lambda_range`` lambda 1 clipped to it.
    """
    params: dict[str, Any] = {
        # the strategy with weights to fit (per_achievement) if allowed
        "strategy": next((s for s in space.strategies if rule_for(s).pays_credits), space.strategies[0]),
        "log10_temperature": 0.0,
        "log10_ridge": -3.0,
    }
    params.update({f"k_limit.{name}": 1 for name in space.repeating})
    if space.resource_overrides:
        params.update(inventory_scale=1.0, count_scale=1.0)
    if space.lambda_range is not None:
        params["indicator_lambda"] = float(np.clip(1.0, *space.lambda_range))
    return params


@dataclass(frozen=True, eq=False)
class TrialEvaluator:
    """Cross-validated objective of a params dict, over the fit episodes of a design.

    Attributes:
        design: The per-episode arrays of the corpus.
        fit_rows: (n,) int, design positions of the fit episodes.
        fold_of: (n,) int, a fold per fit row (``split.stratified_folds``); None: no
            cross-validation, the score is in-sample.
        objective: What is maximised.
        weight_range: The (low, high) bounds of a fitted achievement weight.
        prior: (22,) float, the base config's achievement weights (where fits start).
        slot_weights: (38,) float, the base config's resource weights.
        lam: The base config's effective lambda.
    """

    design: Design
    fit_rows: np.ndarray
    fold_of: np.ndarray | None
    objective: Objective
    weight_range: tuple[float, float]
    prior: np.ndarray
    slot_weights: np.ndarray
    lam: float = 1.0
    _fits: dict[tuple[Any, ...], LinearFit] = field(default_factory=dict, repr=False)

    def __call__(self, params: Mapping[str, Any]) -> dict[str, float]:
        """``value`` (maximised), ``agreement`` and ``overpay`` on out-of-fold returns."""
        rows = self.fit_rows
        if not rule_for(params["strategy"]).pays_credits or self.fold_of is None:
            returns = self.returns(params, rows, rows)
        else:
            returns = np.empty(len(rows))
            for fold in range(int(self.fold_of.max()) + 1):
                held = self.fold_of == fold
                returns[held] = self.returns(params, rows[~held], rows[held], key=fold)
        return self.objective.evaluate(returns, self.design.progress[rows], self.design.groups[rows])

    def returns(
        self, params: Mapping[str, Any], fit_on: np.ndarray, score_on: np.ndarray, key: Any = "all"
    ) -> np.ndarray:
        """Returns of the episodes ``score_on`` under ``params`` with weights fitted on ``fit_on``.

        Args:
            params: One trial's params.
            fit_on: Design rows to fit the weights on (unused under ``consistent``).
            score_on: Design rows to score.
            key: Names the fit in the cache (e.g. the fold).

        Returns:
            (len(score_on),) float64 shaped returns.
        """
        lam = float(params.get("indicator_lambda", self.lam))
        if not rule_for(params["strategy"]).pays_credits:  # no weights to fit
            return self.design.returns(
                self.prior, self.slot_weights, strategy=params["strategy"], lam=lam, rows=score_on
            )
        fit = self.fit(params, fit_on, key)
        return self.design.returns(
            fit.weights, self.resource_weights(params), unlimited=self.unlimited(params), lam=lam, rows=score_on
        )

    def fit(self, params: Mapping[str, Any], rows: np.ndarray, key: Any = "all") -> LinearFit:
        """The exact fit of ``params`` on ``rows`` (cached per ``key`` and settings).

        The fit's settings act on a grid (``GRID``: 0.05 in log10 temperature, 0.1 in log10
        ridge, 0.05 in resource scales), finer than they matter, so that trials proposing nearly
        the same settings re-use one fit: the TPE sampler samples them continuously, which costs
        it far less than stepped parameters.

        Args:
            params: One trial's params.
            rows: Design rows to fit on.
            key: Names the fit in the cache (e.g. the fold), with the gridded settings.

        Returns:
            The fitted achievement weights and the fit's details.
        """
        unlimited = self.unlimited(params)
        slot_weights = self.resource_weights(params)
        temperature, ridge = on_grid(params, "log10_temperature"), on_grid(params, "log10_ridge")
        settings = (
            key,
            temperature,
            ridge,
            tuple(np.flatnonzero(unlimited).tolist()),
            on_grid(params, "inventory_scale"),
            on_grid(params, "count_scale"),
        )
        cached = self._fits.get(settings)
        if cached is None:
            named = self.design.groups[rows] == self.objective.penalize if self.objective.penalize else None
            cached = fit_weights(
                self.design,
                rows,
                slot_weights=slot_weights,
                unlimited=unlimited,
                weight_range=self.weight_range,
                prior=self.prior,
                temperature=10.0**temperature,
                ridge=10.0**ridge,
                named=named,
                penalty=self.objective.penalty,
            )
            if len(self._fits) >= _FIT_CACHE:
                self._fits.pop(next(iter(self._fits)))
            self._fits[settings] = cached
        return cached

    def unlimited(self, params: Mapping[str, Any]) -> np.ndarray:
        """The achievements the params give k-limit 0.

        Args:
            params: One trial's params.

        Returns:
            (22,) bool, ``ACHIEVEMENTS`` order.
        """
        return np.array([int(params.get(f"k_limit.{name}", 1)) <= 0 for name in ACHIEVEMENTS], dtype=bool)

    def resource_weights(self, params: Mapping[str, Any]) -> np.ndarray:
        """The base resource tables, scaled when the params carry resource scales.

        Args:
            params: One trial's params.

        Returns:
            (38,) float, 16 inventory then 22 count weights.
        """
        weights = self.slot_weights.copy()
        weights[: len(INVENTORY_ITEMS)] *= on_grid(params, "inventory_scale", 1.0)
        weights[len(INVENTORY_ITEMS) :] *= on_grid(params, "count_scale", 1.0)
        return weights


#: Grid steps of the fit's settings (see ``TrialEvaluator.fit``).
GRID = {"log10_temperature": 0.05, "log10_ridge": 0.1, "inventory_scale": 0.05, "count_scale": 0.05}


def on_grid(params: Mapping[str, Any], name: str, default: float | None = None) -> Any:
    """A setting rounded to its ``GRID`` step.

    Args:
        params: One trial's params.
        name: A ``GRID`` name.
        default: What an absent ``name`` gives.

    Returns:
        ``params[name]`` on the grid (a float), or ``default``.
    """
    if name not in params:
        return default
    step = GRID[name]
    return round(round(float(params[name]) / step) * step, 10)


@contextmanager
def _quiet_optuna() -> Iterator[None]:
    """Optuna's per-trial INFO lines and experimental warnings off, restored afterwards."""
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            yield
    finally:
        optuna.logging.set_verbosity(verbosity)


def run_study(
    evaluator: Callable[[Mapping[str, Any]], dict[str, float]],
    space: SearchSpace,
    trials: int,
    *,
    seed: int = 0,
    storage: str | Path | None = None,
    study_name: str = "workbench-search",
    show_progress: bool = True,
    evaluate_batch: Callable[[list[dict[str, Any]]], list[dict[str, float]]] | None = None,
    batch_size: int = 1,
) -> optuna.Study:
    """Run ``trials`` trials of multivariate TPE (seeded) maximising ``evaluator``.

    The first trial of a new study is ``default_params(space)``. ``storage``: None keeps the
    study in memory; a path is an Optuna journal file (created if missing, resumed if it holds a
    study of that name, so several processes or later runs can share it). Each trial records
    ``agreement`` and ``overpay`` as user attributes. Progress is a tqdm bar (``show_progress``).

    ``evaluate_batch``: evaluates a list of params elsewhere (``workbench.cluster.trial_mapper``,
    a Dask cluster's workers); the study stays here (ask and tell on this process), asking
    ``batch_size`` trials at a time, whose proposals cannot know each other's values. With
    ``batch_size=1`` the trials are those of a serial run with the same seed.

    Args:
        evaluator: The objective of a params dict.
        space: What may vary.
        trials: How many trials to run.
        seed: The sampler's seed.
        storage: None (in memory) or an Optuna journal file.
        study_name: The study's name in ``storage``.
        show_progress: Show a tqdm bar.
        evaluate_batch: Evaluates a list of params elsewhere (None: ``evaluator`` here).
        batch_size: Trials asked at a time.

    Returns:
        The study, holding every trial (earlier ones too when resumed).

    Raises:
        SearchError: ``batch_size`` is below 1, or ``storage`` is not a journal Optuna can resume.
    """
    if batch_size < 1:
        raise SearchError(f"batch_size must be at least 1, got {batch_size}")
    evaluate = evaluate_batch or (lambda batch: [evaluator(params) for params in batch])
    with _quiet_optuna():
        study = open_study(storage, study_name, optuna.samplers.TPESampler(multivariate=True, seed=seed))
        if len(study.trials) == 0 and trials > 0:
            study.enqueue_trial(default_params(space))
        bar = tqdm(total=trials, desc="search", unit="trial", disable=not show_progress, leave=False)
        try:
            with single_threaded():
                for first in range(0, trials, batch_size):
                    asked = [study.ask() for _ in range(min(batch_size, trials - first))]
                    results = evaluate([suggest(trial, space) for trial in asked])
                    for trial, result in zip(asked, results):
                        for key in sorted(set(result) - {"value"}):  # agreement, overpay (, a constraint's)
                            trial.set_user_attr(key, _finite_or_none(result[key]))
                        study.tell(trial, result["value"])
                        bar.update(1)
                    bar.set_postfix(best=f"{study.best_value:.4f}", refresh=False)
        finally:
            bar.close()
    return study


def _finite_or_none(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def trials_table(study: optuna.Study) -> pd.DataFrame:
    """One row per trial: ``trial`` (number), ``value`` (the cross-validated objective),
    ``agreement``, ``overpay``, ``best_so_far``, ``state``, ``seconds`` and one column per
    param (``strategy``, ``log10_temperature``, ...).

    Args:
        study: A study ``run_study`` ran.

    Returns:
        The trials in number order (empty when there is none).
    """
    rows = []
    for trial in study.trials:
        seconds = (
            (trial.datetime_complete - trial.datetime_start).total_seconds()
            if trial.datetime_complete and trial.datetime_start
            else float("nan")
        )
        rows.append(
            {
                "trial": trial.number,
                "value": trial.value,
                "agreement": trial.user_attrs.get("agreement"),
                "overpay": trial.user_attrs.get("overpay"),
                "state": trial.state.name,
                "seconds": seconds,
                **trial.params,
            }
        )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table = table.astype({"value": "float64", "agreement": "float64", "overpay": "float64"})
    table.insert(2, "best_so_far", table["value"].cummax())
    return table
