"""Any configs scored on a search's held-out episodes exactly as ``search`` scores its best one."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from workbench.analysis.alignment import bootstrap_interval, kendall_tau, spearman_rho
from workbench.analysis.search.objective import build_design, overpay
from workbench.analysis.search.split import Split
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import SearchError
from workbench.scoring import prepare, score

__all__ = ["held_out_scores"]

#: Matches ``search``'s default ``bootstrap_reps``.
DEFAULT_REPS = 2000


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

    Raises ``SearchError`` when ``split`` names episodes ``corpus`` lacks or ``metric`` is
    unknown, and ``WorkbenchError`` for an unknown progress measure.
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
    rank = spearman_rho if metric == "spearman" else kendall_tau

    def statistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(rank(x, y))

    table = {}
    for name, config in configs.items():
        returns = score(prepared, config).reward_sum[rows]
        value, low, high = bootstrap_interval(
            statistic, [returns, values], strata=list(strata), reps=reps, seed=split.seed
        )
        paid = overpay(returns, values, strata == penalize) if penalize is not None else float("nan")
        table[name] = {
            "metric": metric,
            "value": value,
            "low": low,
            "high": high,
            "confidence": 0.95,
            "episodes": len(rows),
            "overpay": paid,
        }
    return pd.DataFrame.from_dict(table, orient="index")
