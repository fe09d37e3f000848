"""Where a per_achievement return can lie when an episode's achievement counts are estimated.

Text observations show unlocks, not repeats, so an imported episode's counts may be estimates
(``metadata["counts"] == "estimated"``): lower bounds from the inventory, the actions and the
unlocks (``workbench.data.importers.counts.estimated_counts``). Crafter also bounds them from
above: a count rises only on a step that can raise it, at most once (a ``do`` raises at most one
``collect_*``, ``eat_*`` or ``defeat_*`` count; ``place_X`` and ``make_X`` their own; ``wake_up``
ends a sleep), and it is 0 while the achievement is locked.
``count_bounds`` gives both; ``return_intervals`` scores a corpus under both and gives each
episode's return interval. Only per_achievement's achievement-count resource shaping reads the
counts, so under consistent (and for observed or logged counts) the interval is one number.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.core.reward import PER_ACHIEVEMENT
from workbench.data.episodes import Corpus, Episode
from workbench.scoring.score import score

#: Achievements whose count a ``do`` raises (a ``do`` raises at most one of them).
_BY_DO = np.array([a.startswith(("collect_", "eat_", "defeat_")) for a in ACHIEVEMENTS])
_WAKE_UP = ACHIEVEMENTS.index("wake_up")


def _most_by_action(actions: list[str]) -> np.ndarray:
    """How much each count other than the ``do`` ones can rise in a decision of ``actions``:
    ``place_X`` / ``make_X`` once per such action, ``wake_up`` once per ``sleep`` (plus one
    for a sleep already under way)."""
    most = np.array([actions.count(name) for name in ACHIEVEMENTS], dtype=np.int64)
    most[_WAKE_UP] = actions.count("sleep") + 1
    return most


def count_bounds(episode: Episode, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) achievement counts, each (n+1, 22), of ``episode``: both its counts when
    they are exact (observed or logged); for estimated ones, the estimate and counts paying the
    most count shaping Crafter's rules allow (see the module docstring): per decision, the
    ``do`` steps beyond the estimated ``do``-raised rises all go to the unlocked ``do``
    achievement of the largest ``weights`` entry (the count-shaping weight per achievement;
    default 1 each), every other count rises by its most. Never below the estimate."""
    lower = np.asarray(episode.achievement_counts, dtype=np.int64)
    if episode.metadata.get("counts") != "estimated":
        return lower, lower
    weights = np.ones(len(ACHIEVEMENTS)) if weights is None else np.asarray(weights, dtype=np.float64)
    status = np.asarray(episode.achievement_status, dtype=bool)
    upper = lower.copy()
    for i, actions in enumerate(episode.actions, start=1):
        least = lower[i] - lower[i - 1]
        rise = np.where(_BY_DO, least, np.maximum(least, _most_by_action(actions)))
        spare = actions.count("do") - int(least[_BY_DO].sum())
        candidates = np.flatnonzero(_BY_DO & status[i])
        if spare > 0 and candidates.size:
            rise[candidates[np.argmax(weights[candidates])]] += spare
        upper[i] = np.maximum(np.where(status[i], upper[i - 1] + rise, 0), lower[i])
    return lower, upper


def _with_counts(episode: Episode, counts: np.ndarray) -> Episode:
    """``episode`` with other achievement counts (its status kept: it is exact)."""
    return Episode(
        id=episode.id,
        inventory=episode.inventory,
        achievement_counts=counts,
        achievement_status=episode.achievement_status,
        actions=episode.actions,
        env_reward=episode.env_reward,
        done=episode.done,
        player_pos=episode.player_pos,
        metadata=dict(episode.metadata),
        logged=episode.logged,
    )


def return_intervals(corpus: Corpus, config: RewardConfig) -> pd.DataFrame:
    """Each estimated episode's shaped return under ``config`` as an interval.

    Columns ``episode``, ``return_low``, ``return_high`` and ``exact`` (low == high), one row per
    episode with ``metadata["counts"] == "estimated"`` (empty when none). Under per_achievement
    the two ends are the returns with the lower and the upper count bounds (``count_bounds``),
    ordered (a negative lambda flips them); under consistent both are the return as scored.
    """
    estimated = corpus.index["counts"].to_numpy() == "estimated"
    columns = ["episode", "return_low", "return_high", "exact"]
    if not estimated.any():
        return pd.DataFrame(columns=columns)
    subset = corpus[estimated]
    as_scored = score(subset, config).episodes["reward_sum"].to_numpy()
    if config.effective_strategy != PER_ACHIEVEMENT:
        high = as_scored
    else:
        table = config.resource_weights
        weights = np.array([table.achievement_count_weight(name) for name in ACHIEVEMENTS])
        upper = Corpus([_with_counts(e, count_bounds(e, weights)[1]) for e in subset])
        high = score(upper, config).episodes["reward_sum"].to_numpy()
    low, high = np.minimum(as_scored, high), np.maximum(as_scored, high)
    return pd.DataFrame({"episode": subset.ids, "return_low": low, "return_high": high, "exact": low == high})


def interval_text(low: float, high: float) -> str:
    """``[low, high]`` to 4 decimals, or the one number when they are equal."""
    return f"{low:.4f}" if low == high else f"[{low:.4f}, {high:.4f}]"
