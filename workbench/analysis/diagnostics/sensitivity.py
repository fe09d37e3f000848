"""Sensitivity: how far each achievement weight can move before the ranking of episodes changes. Exact.

Under ``per_achievement`` an episode's shaped return is linear in each weight: changing weight
``w_a`` to ``w`` changes episode e's return by ``lambda * c[e, a] * (w - w_a)``, where
``c[e, a]`` is how many credits of achievement a the episode earned (0 or 1 in Crafter). Two
episodes swap places exactly where their lines cross, so the interval over which no pair swaps
(no ranking change) and the weight at which a misranked pair ties are closed-form: no sampling,
no re-scoring. Crossings are found per pair of credit levels with a sorted search, O(n log n)
per weight, so thousands of episodes are cheap.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.analysis.rankstats import discordant_pairs
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.core.reward import coerce_weights
from workbench.core.reward_rule import achievement_weights
from workbench.scoring import Scores

__all__ = ["credit_matrix", "sensitivity"]


def credit_matrix(scores: Scores) -> np.ndarray:
    """(episodes, 22) int: how many credits of each achievement (Crafter order) each episode
    earned under this config (all zero under consistent, which credits no names)."""
    unlocks = scores.unlocks
    credited = unlocks[unlocks["credited"].to_numpy()]
    e = scores.prepared.n_episodes
    key = credited["episode"].cat.codes.to_numpy().astype(np.int64) * len(ACHIEVEMENTS) + credited[
        "name"
    ].cat.codes.to_numpy().astype(np.int64)
    return np.bincount(key, minlength=e * len(ACHIEVEMENTS)).reshape(e, len(ACHIEVEMENTS))


def sensitivity(scores: Scores, config: RewardConfig, worst_pair: tuple[str, str] | None) -> pd.DataFrame:
    """Per achievement (Crafter order): its ``weight`` (the config's, else the task app's default
    1.0; ``in_config`` says which), ``episodes_credited``, and the open interval ``(low, high)``
    of weights over which the ranking of episodes by shaped return stays exactly as it is; at
    either bound the two episodes named in ``low_pair`` / ``high_pair`` ("a / b") tie, and beyond
    it they swap. ±inf when no pair ever crosses (every episode earned the credit equally often);
    low == high == weight when two episodes tie now and the weight would separate them.

    With ``worst_pair`` = (paid_more, progressed_more), a pair the shaping misranks:
    ``fix_weight`` is where that pair ties (beyond it the episode that progressed more is paid
    more), ``fix_change`` = fix_weight - weight (NaN when the weight credits both alike), and
    ``misranked_after_fix`` the misranked pairs left just beyond the fix. Under consistent the
    weights pay nothing: intervals are ±inf and fixes NaN (``attrs["note"]`` says so).
    """
    ids = list(scores.prepared.ids)
    returns = scores.reward_sum
    achievements = scores.episodes["unique_achievements_total"].to_numpy()
    lam = config.effective_lambda
    per_achievement = config.rule.pays_credits  # else the weights pay nothing
    credits = credit_matrix(scores)
    written = coerce_weights(dict(config.weights))
    weights = achievement_weights(config.weights)  # written.get(name, 1.0)
    intervals = [_stable_interval(returns, lam * credits[:, a], weights[a], ids) for a in range(len(ACHIEVEMENTS))]
    low, high, low_pair, high_pair = (list(column) for column in zip(*intervals))
    change = np.full(len(ACHIEVEMENTS), np.nan)
    after = pd.array([pd.NA] * len(ACHIEVEMENTS), dtype="Int64")
    if worst_pair is not None and per_achievement:
        paid, progressed = ids.index(worst_pair[0]), ids.index(worst_pair[1])
        slope = lam * (credits[progressed] - credits[paid]).astype(np.float64)
        fixable = slope != 0
        change[fixable] = (returns[paid] - returns[progressed]) / slope[fixable]
        if fixable.any():
            # Just past the tie: far enough that float noise cannot undo the fix (1e-9 relative).
            step = change[fixable] + np.sign(change[fixable]) * 1e-9 * np.maximum(1.0, np.abs(change[fixable]))
            moved = returns[None, :] + (lam * credits[:, fixable].T) * step[:, None]
            after[np.flatnonzero(fixable)] = discordant_pairs(np.broadcast_to(achievements, moved.shape), moved)
    table = pd.DataFrame(
        {
            "achievement": list(ACHIEVEMENTS),
            "weight": weights,
            "in_config": [n in written for n in ACHIEVEMENTS],
            "episodes_credited": (credits > 0).sum(axis=0),
            "low": low,
            "high": high,
            "low_pair": low_pair,
            "high_pair": high_pair,
            "fix_weight": weights + change,
            "fix_change": change,
            "misranked_after_fix": after,
        }
    )
    table.attrs["worst_pair"] = worst_pair
    table.attrs["note"] = (
        ""
        if per_achievement
        else f"{config.rule.name} pays no per-achievement credits: weights cannot change any return"
    )
    return table


def _stable_interval(
    returns: np.ndarray, slopes: np.ndarray, weight: float, ids: list[str]
) -> tuple[float, float, str, str]:
    """The open interval of weights around ``weight`` in which no two returns (each moving at
    its ``slope`` per unit of weight) cross, and the pairs that tie at its bounds."""
    levels = np.unique(slopes)
    up, down = np.inf, np.inf
    up_pair = down_pair = ""
    for i, fast in enumerate(levels):
        for slow in levels[:i]:
            # Episodes on the faster line gain (fast - slow) per unit of weight on the slower.
            faster, slower = np.flatnonzero(slopes == fast), np.flatnonzero(slopes == slow)
            rate = fast - slow
            # Raising the weight: a faster episode below (or level with) a slower one catches up.
            gap, pair = _closest_above(returns, faster, slower)
            if gap / rate < up:
                up, up_pair = gap / rate, f"{ids[pair[0]]} / {ids[pair[1]]}"
            # Lowering it: a slower episode below (or level with) a faster one catches up.
            gap, pair = _closest_above(returns, slower, faster)
            if gap / rate < down:
                down, down_pair = gap / rate, f"{ids[pair[0]]} / {ids[pair[1]]}"
    return weight - down, weight + up, down_pair, up_pair


def _closest_above(returns: np.ndarray, below: np.ndarray, above: np.ndarray) -> tuple[float, tuple[int, int]]:
    """The smallest ``returns[j] - returns[i] >= 0`` over i in ``below``, j in ``above``, and
    (i, j); (inf, (-1, -1)) when no episode of ``above`` is level with or above one of ``below``."""
    order = above[np.argsort(returns[above], kind="stable")]
    sorted_above = returns[order]
    at = np.searchsorted(sorted_above, returns[below], side="left")
    valid = at < len(order)
    if not valid.any():
        return np.inf, (-1, -1)
    gaps = np.where(valid, sorted_above[np.minimum(at, len(order) - 1)] - returns[below], np.inf)
    best = int(np.argmin(gaps))
    return float(gaps[best]), (int(below[best]), int(order[at[best]]))
