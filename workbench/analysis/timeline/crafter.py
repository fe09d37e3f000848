"""Crafter's own measures over a run: per-achievement success rates and Crafter's score per window."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist

import numpy as np
import pandas as pd

from workbench.analysis.rankstats import bootstrap_interval
from workbench.analysis.timeline.frames import TimelineError, per_episode, window_ends
from workbench.core.crafter_facts import ACHIEVEMENTS


def wilson_interval(successes: np.ndarray, n: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of the proportions ``successes / n``; it stays inside (0, 1) for 0
    or n successes, where the normal one collapses.

    Args:
        successes: (k,) the successes.
        n: (k,) the trials, each > 0.
        confidence: The interval's level.

    Returns:
        (low, high): (k,) float64 each, in [0, 1].
    """
    k, m = np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = k / m
    centre = (p + z * z / (2 * m)) / (1 + z * z / m)
    half = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def unlocked_matrix(episodes: pd.DataFrame) -> np.ndarray:
    """Which achievements each row of ``episodes`` unlocked, from its ``unique_achievements``
    names (a list, or text separated by commas).

    Args:
        episodes: One row per episode (e.g. one config's rows of ``LiveScores.episodes()``).

    Returns:
        (rows, 22) booleans, achievements in Crafter order.

    Raises:
        TimelineError: no column of names unlocked.
    """
    column = next((c for c in ("unique_achievements", "achievements", "unlocked") if c in episodes.columns), None)
    if column is None:
        raise TimelineError("the episodes table has no unique_achievements column (names unlocked per episode)")
    position = {name: i for i, name in enumerate(ACHIEVEMENTS)}
    out = np.zeros((len(episodes), len(ACHIEVEMENTS)), dtype=bool)
    for row, names in enumerate(episodes[column]):
        names = names.split(",") if isinstance(names, str) else list(names if names is not None else [])
        for name in names:
            if name.strip() in position:
                out[row, position[name.strip()]] = True
    return out


def success_rates(
    table: pd.DataFrame,
    window: int = 20,
    *,
    achievements: Sequence[str] | None = None,
    confidence: float = 0.95,
    since: int = 0,
) -> pd.DataFrame:
    """Per arrival and achievement: the percentage of the trailing ``window`` episodes that
    unlocked it, with a Wilson interval (``wilson_interval``).

    Args:
        table: The episodes table, with ``unique_achievements`` (names unlocked per episode).
        window: Episodes per window (at least 1; the first windows hold fewer: column ``n``).
        achievements: The achievements reported (None: all 22, in Crafter's order).
        confidence: The interval's level.
        since: The first arrival whose window is computed.

    Returns:
        Columns arrival, episode (the window's last), achievement, n, successes, rate, low,
        high (the last three in percent); one row per (arrival, achievement).

    Raises:
        TimelineError: A missing column, an unknown achievement, or ``window`` below 1.
    """
    episodes = per_episode(table)
    unlocked = unlocked_matrix(episodes)
    picked = list(achievements or ACHIEVEMENTS)
    unknown = [a for a in picked if a not in ACHIEVEMENTS]
    if unknown:
        raise TimelineError(f"unknown achievement(s) {unknown}")
    columns = [ACHIEVEMENTS.index(a) for a in picked]
    counts = np.vstack([np.zeros(len(ACHIEVEMENTS)), unlocked.cumsum(axis=0)])
    rows = []
    for end in window_ends(len(episodes), window, since):
        start = max(0, end - window + 1)
        n = end - start + 1
        hits = (counts[end + 1] - counts[start])[columns]
        low, high = wilson_interval(hits, np.full(len(hits), n), confidence)
        for name, k, lo, hi in zip(picked, hits, low, high):
            rows.append(
                (
                    int(episodes["arrival"].iloc[end]),
                    episodes["episode"].iloc[end],
                    name,
                    n,
                    int(k),
                    100 * k / n,
                    100 * lo,
                    100 * hi,
                )
            )
    return pd.DataFrame(rows, columns=["arrival", "episode", "achievement", "n", "successes", "rate", "low", "high"])


def _score_rows(*indicators: np.ndarray) -> np.ndarray:
    """Crafter's score (percent) of each row of resampled episodes: 22 arrays of shape (m, n)."""
    rates = 100.0 * np.stack([a.mean(axis=1) for a in indicators], axis=1)
    return np.exp(np.log1p(rates).mean(axis=1)) - 1.0


def crafter_score_series(
    table: pd.DataFrame, window: int = 20, *, reps: int = 1000, seed: int = 0, confidence: float = 0.95, since: int = 0
) -> pd.DataFrame:
    """Per arrival: Crafter's score (offset geometric mean of the 22 success rates, percent) of
    the trailing ``window`` episodes, with a bootstrap percentile interval over episodes.

    Args:
        table: The episodes table, with ``unique_achievements`` (names unlocked per episode).
        window: Episodes per window (at least 1; the first windows hold fewer: column ``n``).
        reps: Bootstrap resamples per window.
        seed: The bootstrap's seed.
        confidence: The interval's level.
        since: The first arrival whose window is computed.

    Returns:
        Columns arrival, episode (the window's last), n, score, low, high (percent).

    Raises:
        TimelineError: A missing column, or ``window`` below 1.
    """
    episodes = per_episode(table)
    unlocked = unlocked_matrix(episodes).astype(np.float64)
    rows = []
    for end in window_ends(len(episodes), window, since):
        start = max(0, end - window + 1)
        block = unlocked[start : end + 1]
        point, low, high = bootstrap_interval(_score_rows, list(block.T), reps=reps, seed=seed, confidence=confidence)
        rows.append((int(episodes["arrival"].iloc[end]), episodes["episode"].iloc[end], len(block), point, low, high))
    return pd.DataFrame(rows, columns=["arrival", "episode", "n", "score", "low", "high"])
