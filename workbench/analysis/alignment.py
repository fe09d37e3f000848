"""Does a shaped reward pay for progress? Small pure functions over ``Scores``.

A shaped reward should rank behaviour the way the task does: an episode that unlocks more
achievements should earn more. Where it does not, a policy can raise its shaped return without
progressing (a reward hacker, such as the sample corpus's farmer). These functions measure that
per corpus, per pair of episodes and per group of episodes. The rank statistics and the
stratified bootstrap they build on live in ``workbench.analysis.rankstats``. "Achievements" is the number of
distinct achievements an episode unlocked (``Scores.episodes["unique_achievements_total"]``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from workbench.data.episodes import Corpus
from workbench.scoring import Comparison, Scores

__all__ = [
    "group_comparison",
    "misranked_overview",
    "misranked_pairs",
    "misranked_positions",
    "misranked_table",
    "progress_agreement",
    "progress_summary",
    "returns_by_group",
]

#: Comparisons held in memory at once by ``misranked_pairs`` (rows x episodes).
_PAIR_CHUNK = 1 << 22


def _episodes(scores: Scores | pd.DataFrame) -> pd.DataFrame:
    return scores if isinstance(scores, pd.DataFrame) else scores.episodes


def progress_agreement(scores: Scores | pd.DataFrame) -> float:
    """Spearman's rank correlation between shaped return and achievements unlocked, per episode.

    1.0: the shaped return orders episodes as their progress does; near 0: unrelated; negative:
    the shaping pays for something else.

    Args:
        scores: A scoring's result, or (a subset of) its ``episodes`` table.

    Returns:
        The correlation in -1..1; NaN when returns or achievements are the same for every
        episode (no order to agree with).
    """
    episodes = _episodes(scores)
    returns = episodes["reward_sum"].rank()
    achievements = episodes["unique_achievements_total"].rank()
    if returns.nunique() < 2 or achievements.nunique() < 2:
        return float("nan")
    return float(np.corrcoef(returns, achievements)[0, 1])


def misranked_pairs(scores: Scores) -> pd.DataFrame:
    """Pairs of episodes the shaping ranks against progress: ``paid_more`` earned a strictly
    higher shaped return than ``progressed_more`` while unlocking strictly fewer achievements.

    One row per pair with both episodes' ``return_*`` and ``achievements_*``, the largest
    achievement gap first, then the largest return gap. Empty when the shaping never pays less
    for more progress. (n episodes give at most n(n-1)/2 rows.)

    Args:
        scores: A scoring's result (its ``episodes`` table is read).

    Returns:
        Columns ``paid_more``, ``progressed_more`` (episode ids), ``return_paid_more``,
        ``return_progressed_more``, ``achievements_paid_more``, ``achievements_progressed_more``.
    """
    return misranked_table(scores, *misranked_positions(scores))


def misranked_positions(scores: Scores) -> tuple[np.ndarray, np.ndarray]:
    """The positions (in ``scores.episodes``) of ``misranked_pairs``' episodes, in its order.

    Args:
        scores: A scoring's result.

    Returns:
        ``(progressed_more, paid_more)``: two int arrays, one entry per misranked pair, worst first.
    """
    episodes = scores.episodes
    returns = episodes["reward_sum"].to_numpy()
    achievements = episodes["unique_achievements_total"].to_numpy()
    n = len(episodes)
    progressed, paid = [], []
    chunk = max(1, _PAIR_CHUNK // max(n, 1))
    for start in range(0, n, chunk):
        rows = slice(start, start + chunk)
        mask = (achievements[rows, None] > achievements[None, :]) & (returns[rows, None] < returns[None, :])
        i, j = np.nonzero(mask)
        progressed.append(i + start)
        paid.append(j)
    i = np.concatenate(progressed) if progressed else np.zeros(0, dtype=np.int64)
    j = np.concatenate(paid) if paid else np.zeros(0, dtype=np.int64)
    gap = achievements[i] - achievements[j]
    overpaid = returns[j] - returns[i]
    order = np.lexsort((-overpaid, -gap))  # stable: ties keep the pairs' (i, j) order
    return i[order], j[order]


def misranked_table(scores: Scores, progressed: np.ndarray, paid: np.ndarray) -> pd.DataFrame:
    """``misranked_pairs``' table of the pairs at these positions (``misranked_positions``).

    Args:
        scores: A scoring's result.
        progressed: Positions of the episodes that progressed more.
        paid: Positions of the episodes paid more.

    Returns:
        ``misranked_pairs``' columns, one row per pair, in the order given.
    """
    episodes = scores.episodes
    returns = episodes["reward_sum"].to_numpy()
    achievements = episodes["unique_achievements_total"].to_numpy()
    ids = episodes["episode"].to_numpy()
    return pd.DataFrame(
        {
            "paid_more": ids[paid],
            "progressed_more": ids[progressed],
            "return_paid_more": returns[paid],
            "return_progressed_more": returns[progressed],
            "achievements_paid_more": achievements[paid],
            "achievements_progressed_more": achievements[progressed],
        }
    )


def misranked_overview(scores: Scores | pd.DataFrame) -> tuple[int, pd.Series | None]:
    """How many pairs ``misranked_pairs`` would list, and its first (worst) row, without listing
    them: O(n log n) instead of O(n^2) pairs, since achievements take at most 23 values.

    Args:
        scores: A scoring's result, or (a subset of) its ``episodes`` table.

    Returns:
        The number of misranked pairs, and the worst one as a row of ``misranked_pairs``'s
        columns (None when there is none).
    """
    episodes = _episodes(scores)
    returns = episodes["reward_sum"].to_numpy(dtype=np.float64)
    achievements = episodes["unique_achievements_total"].to_numpy()
    ids = episodes["episode"].to_numpy()
    levels = np.unique(achievements)
    by_level = {level: np.flatnonzero(achievements == level) for level in levels}
    sorted_returns = {level: np.sort(returns[rows]) for level, rows in by_level.items()}
    count = 0
    worst: tuple | None = None  # (-gap, -overpaid, i, j): the smallest is misranked_pairs' first row
    for high_index, high in enumerate(levels):
        rows = by_level[high]
        for low in levels[:high_index]:
            lower = sorted_returns[low]
            # episodes of the lower level paid strictly more than each episode of the higher one
            above = len(lower) - np.searchsorted(lower, returns[rows], side="right")
            count += int(above.sum())
            if not above.any():
                continue
            i = rows[int(np.argmin(returns[rows]))]
            low_rows = by_level[low]
            j = low_rows[int(np.argmax(returns[low_rows]))]
            key = (-(high - low), -(returns[j] - returns[i]), i, j)
            if worst is None or key < worst:
                worst = key
    if worst is None:
        return count, None
    i, j = worst[2], worst[3]
    row = pd.Series(
        {
            "paid_more": ids[j],
            "progressed_more": ids[i],
            "return_paid_more": returns[j],
            "return_progressed_more": returns[i],
            "achievements_paid_more": achievements[j],
            "achievements_progressed_more": achievements[i],
        }
    )
    return count, row


def progress_summary(scores: Scores | pd.DataFrame) -> str:
    """One line for people: the rank agreement and the misranked pairs, with the worst one
    named (what ``workbench score``, the Tuner and Compare show).

    Args:
        scores: A scoring's result, or (a subset of) its ``episodes`` table.

    Returns:
        The line, e.g. ``rank agreement with progress 0.812 (Spearman, ...); 3 episode pair(s)
        paid more for less progress, worst: ...``.
    """
    count, worst = misranked_overview(scores)
    rho = progress_agreement(scores)
    agreement = "n/a (returns or achievements all equal)" if math.isnan(rho) else f"{rho:.3f}"
    line = (
        f"rank agreement with progress {agreement} (Spearman, return vs achievements); "
        f"{count} episode pair(s) paid more for less progress"
    )
    if worst is not None:
        line += (
            f", worst: {worst.paid_more} ({worst.achievements_paid_more} achievements, return "
            f"{worst.return_paid_more:.3f}) over {worst.progressed_more} ({worst.achievements_progressed_more}, "
            f"{worst.return_progressed_more:.3f})"
        )
    return line


def returns_by_group(scores: Scores, corpus: Corpus, *, by: str = "policy") -> pd.DataFrame:
    """Per group of episodes (a ``corpus.index`` column, e.g. "policy"): ``episodes``,
    ``mean_return`` (shaped), ``mean_achievements``, ``mean_env_return`` (Crafter's) and
    ``return_per_achievement`` (mean return / mean achievements: what one unit of progress is
    worth to this group; NaN for a group that unlocked nothing). Groups in first-seen order.

    Args:
        scores: A scoring of ``corpus`` (or of some of its episodes).
        corpus: The episodes' corpus, whose index gives each episode's group.
        by: The ``corpus.index`` column to group by.

    Returns:
        One row per group: ``by``, ``episodes``, ``mean_return``, ``mean_achievements``,
        ``mean_env_return``, ``return_per_achievement``.

    Raises:
        CorpusError: ``by`` is not an index column (``Corpus.groups``).
    """
    episodes = scores.episodes.assign(group=scores.episodes["episode"].map(corpus.groups(by)))
    table = episodes.groupby("group", sort=False).agg(
        episodes=("episode", "size"),
        mean_return=("reward_sum", "mean"),
        mean_achievements=("unique_achievements_total", "mean"),
        mean_env_return=("env_return", "mean"),
    )
    table["return_per_achievement"] = table["mean_return"] / table["mean_achievements"].replace(0, np.nan)
    return table.rename_axis(by).reset_index()


def group_comparison(comparison: Comparison, corpus: Corpus, *, by: str = "policy") -> pd.DataFrame:
    """``returns_by_group`` under both configs of a comparison, side by side: per group
    ``mean_achievements``, ``mean_return_a`` / ``mean_return_b`` and ``return_per_achievement_a``
    / ``_b``. Does B still pay the hacker more per unit of progress than the honest policy?

    Args:
        comparison: Two scorings (configs A and B) of ``corpus``.
        corpus: The episodes' corpus, whose index gives each episode's group.
        by: The ``corpus.index`` column to group by.

    Returns:
        One row per group: ``by``, ``mean_achievements``, ``mean_return_a``, ``mean_return_b``,
        ``return_per_achievement_a``, ``return_per_achievement_b``.

    Raises:
        CorpusError: ``by`` is not an index column (``Corpus.groups``).
    """
    a = returns_by_group(comparison.a, corpus, by=by).set_index(by)
    b = returns_by_group(comparison.b, corpus, by=by).set_index(by)
    return pd.DataFrame(
        {
            "mean_achievements": a["mean_achievements"],
            "mean_return_a": a["mean_return"],
            "mean_return_b": b["mean_return"],
            "return_per_achievement_a": a["return_per_achievement"],
            "return_per_achievement_b": b["return_per_achievement"],
        }
    ).reset_index()
