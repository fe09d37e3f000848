"""Any configs scored on a search's held-out episodes exactly as ``search`` scores its best one."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.analysis.rankstats import bootstrap_interval, kendall_tau, spearman_rho
from workbench.analysis.search.objective import Objective, build_design, overpay
from workbench.analysis.search.split import Split
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import SearchError
from workbench.scoring import prepare, score

__all__ = ["HeldOutScore", "few_held_out_note", "held_out_score", "held_out_scores"]

#: Matches ``search``'s default ``bootstrap_reps``.
DEFAULT_REPS = 2000


@dataclass(frozen=True)
class HeldOutScore:
    """A score on episodes nothing was fitted on.

    Attributes:
        metric: The rank agreement: ``spearman`` or ``kendall``.
        value: Its value on the held-out episodes (-1..1).
        low: The lower end of its stratified-bootstrap percentile interval (NaN: no interval).
        high: The upper end.
        confidence: The interval's level (0.95).
        episodes: How many held-out episodes it rests on.
        overpay: How much more the penalised policy earns per unit of progress than the rest
            (NaN without one).
    """

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


def held_out_score(
    returns: np.ndarray, progress: np.ndarray, groups: np.ndarray, objective: Objective, reps: int, seed: int
) -> HeldOutScore:
    """How well ``returns`` rank the held-out episodes by ``progress`` (``objective.metric``).

    Args:
        returns: (n,) float, each held-out episode's shaped return.
        progress: (n,) float, each one's progress.
        groups: (n,) each one's group (the bootstrap's strata; the penalised group's name).
        objective: The metric and the group to penalise (None: no overpay).
        reps: How many bootstrap resamples.
        seed: The bootstrap's seed.

    Returns:
        The agreement with its 95% interval and the penalised group's overpay (NaN without one).
    """
    rank = spearman_rho if objective.metric == "spearman" else kendall_tau

    def statistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(rank(x, y))

    value, low, high = bootstrap_interval(statistic, [returns, progress], strata=list(groups), reps=reps, seed=seed)
    paid = overpay(returns, progress, groups == objective.penalize) if objective.penalize is not None else float("nan")
    return HeldOutScore(objective.metric, value, low, high, 0.95, len(returns), paid)


def few_held_out_note(held: HeldOutScore, held_groups: np.ndarray) -> str:
    """The note for a held-out set too small to trust.

    Args:
        held: The score on the held-out episodes.
        held_groups: (n,) each held-out episode's group.

    Returns:
        How many episodes of each group there are, and why the interval does not settle it.
    """
    counts = pd.Series(held_groups).value_counts(sort=False)
    per_group = ", ".join(f"{n} {g}" for g, n in counts.items())
    interval = f"({held.low:.2f} to {held.high:.2f})"
    if counts.min() <= 2:
        why = (
            f"a score on so few is uncertain whatever its interval {interval} says, since resampling within a "
            "policy of one or two episodes can barely vary it"
        )
    elif held.high - held.low < 0.05:
        why = (
            f"the interval {interval} is narrow, but it only resamples these {len(held_groups)} episodes, and so "
            "few can look more certain than they are"
        )
    else:
        why = f"the interval {interval} is wide"
    return (
        f"only {len(held_groups)} held-out episodes ({per_group}): {why}; record more episodes per policy "
        "for a score you can rely on"
    )


def held_out_scores(
    corpus: Corpus,
    split: Split,
    configs: Mapping[str, RewardConfig],
    *,
    metric: str = "spearman",
    progress: str | Mapping[str, float] = "achievements",
    penalize: str | None = None,
    reps: int = DEFAULT_REPS,
) -> pd.DataFrame:
    """One row per config (index: its name) with its rank agreement on the held-out episodes of
    ``split`` (a ``SearchResult.split`` of ``corpus``): ``metric`` (spearman / kendall) ``value``,
    the 95% stratified-bootstrap interval ``low`` .. ``high`` (episodes resampled within their
    ``split.stratify`` group, ``reps`` times, seeded by ``split.seed``), ``episodes`` and
    ``overpay`` (how much more the ``penalize`` group earns per unit of progress than the rest;
    NaN without one). With the ``metric``, ``progress``, ``penalize`` and ``bootstrap_reps`` the
    search was given, the row of ``result.config`` equals ``result.held_out``, so other configs
    (``recommended``, the base) can be put next to it on the same episodes and resamples.

    Args:
        corpus: The corpus the split was made of.
        split: A ``SearchResult.split`` of ``corpus``.
        configs: The configs to score, by name.
        metric: ``spearman`` or ``kendall``.
        progress: A progress measure's name, or weights per measure (as ``search`` takes it).
        penalize: The group whose overpay is reported (None: none).
        reps: How many bootstrap resamples.

    Returns:
        One row per config (index its name), the ``HeldOutScore`` fields as columns.

    Raises:
        SearchError: ``split`` holds out episodes ``corpus`` lacks, or ``metric`` is unknown.
        WorkbenchError: An unknown progress measure.
        CorpusError: ``split.stratify`` is not an index column of ``corpus``.
    """
    if metric not in ("spearman", "kendall"):
        raise SearchError(f"unknown agreement metric {metric!r}; use 'spearman' or 'kendall'")
    ids = list(corpus.ids)
    missing = sorted(set(split.held_out) - set(ids))
    if missing:
        raise SearchError(f"the split holds out {len(missing)} episode(s) this corpus lacks, e.g. {missing[0]}")
    groups = corpus.groups(split.stratify)
    prepared = prepare(corpus)
    design = build_design(prepared, [groups[i] for i in ids], progress)
    rows = np.flatnonzero(split.mask(ids, "held_out"))
    values, strata = design.progress[rows], design.groups[rows]
    objective = Objective(metric=metric, penalize=penalize)
    table = {}
    for name, config in configs.items():
        returns = score(prepared, config).reward_sum[rows]
        table[name] = dataclasses.asdict(held_out_score(returns, values, strata, objective, reps, split.seed))
    return pd.DataFrame.from_dict(table, orient="index")
