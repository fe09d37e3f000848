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
from workbench.core.crafter_facts import ACHIEVEMENTS, ACTIONS
from workbench.data.episodes import Corpus, Episode
from workbench.scoring.prepare import PreparedCorpus, prepare
from workbench.scoring.score import score

#: Achievements whose count a ``do`` raises (a ``do`` raises at most one of them).
_BY_DO = np.array([a.startswith(("collect_", "eat_", "defeat_")) for a in ACHIEVEMENTS])
#: For each achievement, the action whose every step may raise its count by one (-1: ``do``
#: achievements, counted apart); ``wake_up`` ends a sleep: once per ``sleep``, plus one.
_RAISED_BY = np.array([ACTIONS.index(a) if a in ACTIONS else -1 for a in ACHIEVEMENTS])
_RAISED_BY[ACHIEVEMENTS.index("wake_up")] = ACTIONS.index("sleep")
_WAKE_UP = ACHIEVEMENTS.index("wake_up")
_DO = ACTIONS.index("do")
_ACTION_CODE = {name: k for k, name in enumerate(ACTIONS)}


def _action_table(actions: list[list[str]]) -> np.ndarray:
    """(n, 17): how many times each Crafter action was played in each decision."""
    decision = np.repeat(np.arange(len(actions)), [len(a) for a in actions])
    codes = np.fromiter((_ACTION_CODE.get(name, 0) for a in actions for name in a), dtype=np.int64, count=len(decision))
    table = np.zeros((len(actions), len(ACTIONS)), dtype=np.int64)
    np.add.at(table, (decision, codes), 1)
    return table


def count_bounds(episode: Episode, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) achievement counts, each (n+1, 22), of ``episode``: both its counts when
    they are exact (observed or logged); for estimated ones, the estimate and counts paying the
    most count shaping Crafter's rules allow (see the module docstring): per decision, the
    ``do`` steps beyond the estimated ``do``-raised rises all go to the unlocked ``do``
    achievement of the largest ``weights`` entry (the count-shaping weight per achievement;
    default 1 each), every other count rises by its most. Never below the estimate, 0 while locked.

    Args:
        episode: The episode.
        weights: Count-shaping weight per achievement (22,); None: 1 each.

    Returns:
        ``(lower, upper)``, int (n+1, 22) each.
    """
    lower = np.asarray(episode.achievement_counts, dtype=np.int64)
    if episode.metadata.get("counts") != "estimated":
        return lower, lower
    weights = np.ones(len(ACHIEVEMENTS)) if weights is None else np.asarray(weights, dtype=np.float64)
    status = np.asarray(episode.achievement_status, dtype=bool)[1:]
    played = _action_table(episode.actions)
    least = np.diff(lower, axis=0)
    most = np.where(_RAISED_BY >= 0, played[:, np.maximum(_RAISED_BY, 0)], 0)
    most[:, _WAKE_UP] += 1
    rise = np.where(_BY_DO, least, np.maximum(least, most))
    spare = played[:, _DO] - least[:, _BY_DO].sum(axis=1)
    paid = np.where(_BY_DO & status, weights, -np.inf)
    best = np.argmax(paid, axis=1)
    gets = (spare > 0) & np.isfinite(paid.max(axis=1))
    rise[np.flatnonzero(gets), best[gets]] += spare[gets]
    upper = np.vstack([lower[:1], lower[:1] + np.cumsum(np.where(status, rise, 0), axis=0)])
    upper[1:] = np.where(status, upper[1:], 0)
    return lower, np.maximum(upper, lower)


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


class UpperReturns:
    """The returns of a corpus's estimated episodes with their upper count bounds, re-scored as
    cheaply as the corpus itself: the upper-bound episodes are prepared once per table of
    count-shaping weights (the only part of a config the bounds depend on), so a view can
    re-score them on every change of weights or lambda.

    Args:
        corpus: The corpus whose estimated episodes are bounded.
    """

    #: Upper-bound corpora kept (one per count-weight table seen), newest last.
    KEPT = 4

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        #: Positions (in ``corpus``) of the episodes with estimated counts.
        self.positions = np.flatnonzero(corpus.index["counts"].to_numpy() == "estimated")
        self._prepared: dict[tuple[float, ...], PreparedCorpus] = {}

    def high(self, config: RewardConfig) -> np.ndarray | None:
        """The estimated episodes' returns (in ``positions`` order) under ``config`` with their
        upper count bounds, or None when ``config`` reads no counts (not per_achievement) or no
        episode's counts are estimated.

        Args:
            config: The config.

        Returns:
            One return per estimated episode, or None.
        """
        if not len(self.positions) or not config.rule.reads_counts:
            return None
        table = config.resource_weights
        key = tuple(table.achievement_count_weight(name) for name in ACHIEVEMENTS)
        if key not in self._prepared:
            weights = np.array(key)
            subset = self.corpus[np.isin(np.arange(len(self.corpus)), self.positions)]
            self._prepared[key] = prepare(Corpus([_with_counts(e, count_bounds(e, weights)[1]) for e in subset]))
            while len(self._prepared) > self.KEPT:
                del self._prepared[next(iter(self._prepared))]
        return score(self._prepared[key], config).reward_sum

    def intervals(self, config: RewardConfig, returns: np.ndarray) -> dict[int, tuple[float, float]]:
        """Position -> (low, high) for each estimated episode, given every episode's return as
        scored (``returns``, corpus order); {} when ``high`` is None.

        Args:
            config: The config the returns were scored under.
            returns: Every episode's return, corpus order.

        Returns:
            Corpus position -> (low, high), ordered.
        """
        high = self.high(config)
        if high is None:
            return {}
        low = np.asarray(returns, dtype=np.float64)[self.positions]
        return {int(p): (float(min(a, b)), float(max(a, b))) for p, a, b in zip(self.positions, low, high, strict=True)}


def return_intervals(corpus: Corpus, config: RewardConfig) -> pd.DataFrame:
    """Each estimated episode's shaped return under ``config`` as an interval.

    Columns ``episode``, ``return_low``, ``return_high`` and ``exact`` (low == high), one row per
    episode with ``metadata["counts"] == "estimated"`` (empty when none). Under per_achievement
    the two ends are the returns with the lower and the upper count bounds (``count_bounds``),
    ordered (a negative lambda flips them); under consistent both are the return as scored.

    Args:
        corpus: The episodes.
        config: The config.

    Returns:
        The table described above.
    """
    upper = UpperReturns(corpus)
    columns = ["episode", "return_low", "return_high", "exact"]
    if not len(upper.positions):
        return pd.DataFrame(columns=columns)
    returns = score(corpus, config).reward_sum
    bounds = upper.intervals(config, returns)
    low = np.array([bounds.get(int(p), (returns[p], returns[p]))[0] for p in upper.positions])
    high = np.array([bounds.get(int(p), (returns[p], returns[p]))[1] for p in upper.positions])
    ids = [corpus.ids[p] for p in upper.positions]
    return pd.DataFrame({"episode": ids, "return_low": low, "return_high": high, "exact": low == high})


def interval_text(low: float, high: float, digits: int = 2) -> str:
    """``[low, high]`` to ``digits`` decimals, or the one number when they are equal.

    Args:
        low: The interval's low end.
        high: Its high end.
        digits: Decimals shown.

    Returns:
        The text.
    """
    return f"{low:.{digits}f}" if low == high else f"[{low:.{digits}f}, {high:.{digits}f}]"
