"""Crafter's own score: per-achievement success rates and their offset geometric mean."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.episodes import Corpus
from workbench.scoring.prepare import PreparedCorpus, as_prepared


def success_rates(corpus: Corpus | PreparedCorpus) -> pd.DataFrame:
    """Per achievement (Crafter order): ``success_rate``, the percentage of episodes in which it
    was unlocked at least once (true in some state after reset), and ``episodes``, how many.

    Args:
        corpus: The episodes, or ``prepare(corpus)``.

    Returns:
        One row per achievement: ``achievement``, ``success_rate``, ``episodes``.
    """
    prepared = as_prepared(corpus)
    unlocked = prepared.ever_status.sum(axis=0).astype(np.int64)
    return pd.DataFrame(
        {
            "achievement": list(ACHIEVEMENTS),
            "success_rate": 100.0 * unlocked / prepared.n_episodes,
            "episodes": unlocked,
        }
    )


def crafter_score(corpus: Corpus | PreparedCorpus) -> float:
    """Crafter's score in percent: exp(mean_i ln(1 + s_i)) - 1 over the 22 success rates s_i
    (percent), a geometric mean with a 1% offset (crafter.md).

    Args:
        corpus: The episodes, or ``prepare(corpus)``.

    Returns:
        The score, 0..100.
    """
    rates = success_rates(corpus)["success_rate"].to_numpy()
    return float(np.exp(np.mean(np.log1p(rates))) - 1.0)
