"""Alignment with error bars: does the shaped return rank episodes as progress does, and how sure is that?

Builds on ``workbench.analysis.alignment``: Spearman's rho and Kendall's tau-b between the shaped return
and a progress measure, each with a stratified-bootstrap interval (episodes resampled within
their group, e.g. policy, as rliable does), and the misranked pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from workbench.analysis.alignment import misranked_positions, misranked_table
from workbench.analysis.bootstrap import Weighted, bootstrap_intervals
from workbench.analysis.diagnostics.flags import Flag
from workbench.analysis.rankcounts import kendall_tau_weighted, spearman_rho_weighted
from workbench.analysis.rankstats import kendall_tau, spearman_rho
from workbench.scoring import Scores

__all__ = ["PROGRESS_MEASURES", "STATISTICS", "agreement", "misranked", "progress_measures"]

#: Progress measures, with what each means.
PROGRESS_MEASURES: Mapping[str, str] = {
    "achievements": "distinct achievements unlocked in the episode",
    "crafter_score": "what the episode adds to the corpus's Crafter score (score with it minus without it, "
    "percentage points): rare achievements count more",
}
#: Rank statistics, by name.
STATISTICS: Mapping[str, Callable[..., float | np.ndarray]] = {
    "spearman": spearman_rho,
    "kendall": kendall_tau,
}
#: Each of ``STATISTICS`` of a resample read from its counts of the episodes (the same floats).
_WEIGHTED: Mapping[str, Callable[..., np.ndarray]] = {
    "spearman": spearman_rho_weighted,
    "kendall": kendall_tau_weighted,
}


def progress_measures(scores: Scores) -> pd.DataFrame:
    """Per episode (corpus order): ``achievements`` (``unique_achievements_total``) and
    ``crafter_score``: Crafter's score of the corpus minus its score without this episode
    (exp(mean_i ln(1 + s_i)) - 1 over the 22 success rates s_i in percent, as
    ``scoring.crafter_score``); NaN for a corpus of one episode."""
    ever = scores.prepared.ever_status.astype(np.float64)
    n = len(ever)
    unlocked = ever.sum(axis=0)
    score_all = np.expm1(np.mean(np.log1p(100.0 * unlocked / n)))
    if n > 1:
        without = np.expm1(np.mean(np.log1p(100.0 * (unlocked[None, :] - ever) / (n - 1)), axis=1))
        contribution = score_all - without
    else:
        contribution = np.full(n, np.nan)
    return pd.DataFrame(
        {
            "episode": scores.episodes["episode"],
            "achievements": scores.episodes["unique_achievements_total"].to_numpy(),
            "crafter_score": contribution,
        }
    )


def _against(function: Callable[..., np.ndarray], i: int) -> Weighted:
    """``function`` of a resample's counts, the returns (the first array) and the i-th progress
    measure (of the rest)."""
    return Weighted(lambda weights, returns, *measures: function(weights, returns, measures[i]))


def agreement(
    scores: Scores,
    strata: np.ndarray,
    *,
    by: str,
    reps: int,
    seed: int | None,
    confidence: float,
    progress: Sequence[str] = tuple(PROGRESS_MEASURES),
) -> pd.DataFrame:
    """Per progress measure (of ``progress``, names in ``PROGRESS_MEASURES``) and statistic
    (``STATISTICS``): ``estimate`` and the stratified-bootstrap interval
    ``low`` / ``high`` (``confidence``, ``reps`` resamples within ``strata``, one label per
    episode), with ``strata`` naming the grouping column and ``episodes``. NaN where progress or
    return is the same for every episode."""
    measures = progress_measures(scores)
    returns = scores.reward_sum
    # Both statistics read only order and ties: each resample is read as its counts of the
    # episodes (``rankcounts``: the same numbers as the statistic of the resampled values, with
    # no sort per resample), every measure and statistic from one draw of the resamples (each
    # interval exactly its own bootstrap_interval with this seed).
    coded = {measure: measures[measure].to_numpy() for measure in progress if not measures[measure].isna().any()}
    columns = list(coded)
    statistics = {
        f"{measure}/{name}": _against(function, i)
        for i, measure in enumerate(columns)
        for name, function in _WEIGHTED.items()
    }
    found = bootstrap_intervals(
        statistics, [np.asarray(returns), *coded.values()], strata, reps=reps, seed=seed, confidence=confidence
    )
    rows = []
    for measure in progress:
        for statistic in STATISTICS:
            point, low, high = found.get(f"{measure}/{statistic}", (float("nan"),) * 3)
            rows.append(
                {
                    "progress": measure,
                    "statistic": statistic,
                    "estimate": point,
                    "low": low,
                    "high": high,
                    "confidence": confidence,
                    "reps": reps,
                    "strata": by,
                    "episodes": len(returns),
                }
            )
    return pd.DataFrame(rows)


def misranked(scores: Scores, groups: pd.Series, by: str) -> pd.DataFrame:
    """``alignment.misranked_pairs`` with each episode's group (``<by>_paid_more``,
    ``<by>_progressed_more``) after the ids; worst first."""
    progressed, paid = misranked_positions(scores)
    pairs = misranked_table(scores, progressed, paid)
    if groups.index.equals(pd.Index(scores.episodes["episode"])):  # by position: no lookup per pair
        labels = groups.to_numpy()
        paid_group, progressed_group = labels[paid], labels[progressed]
    else:
        paid_group = pairs["paid_more"].map(groups).to_numpy()
        progressed_group = pairs["progressed_more"].map(groups).to_numpy()
    pairs.insert(1, f"{by}_paid_more", paid_group)
    pairs.insert(3, f"{by}_progressed_more", progressed_group)
    return pairs


def alignment_flags(
    table: pd.DataFrame, pairs: pd.DataFrame, sensitivity: pd.DataFrame, *, threshold: float
) -> list[Flag]:
    """A flag when the shaping misranks pairs (naming the worst and the single weight change
    that fixes it leaving the fewest misranked pairs), and when Kendall's tau with achievements
    is below ``threshold``."""
    flags: list[Flag] = []
    if len(pairs):
        worst = pairs.iloc[0].to_dict()
        why = (
            f"{len(pairs)} pair(s) of episodes paid more for less progress; worst: {worst['paid_more']} "
            f"({worst['achievements_paid_more']} achievements) got {worst['return_paid_more']:.3f}, "
            f"{worst['progressed_more']} ({worst['achievements_progressed_more']}) got "
            f"{worst['return_progressed_more']:.3f}"
        )
        change = sensitivity["fix_change"].to_numpy()
        candidates = np.flatnonzero(~np.isnan(change))
        if len(candidates):
            fix_weight = sensitivity["fix_weight"].to_numpy()
            left = sensitivity["misranked_after_fix"].to_numpy(dtype=np.float64, na_value=np.inf)
            # Prefer a weight that stays non-negative, then the fewest pairs left, then the smallest change.
            order = np.lexsort((np.abs(change[candidates]), left[candidates], fix_weight[candidates] < 0))
            best = candidates[order[0]]
            verb = "raising" if change[best] > 0 else "lowering"
            why += (
                f"; {verb} weights.{sensitivity['achievement'].iloc[best]} from "
                f"{sensitivity['weight'].iloc[best]:g} past {fix_weight[best]:.4g} ({change[best]:+.4g}) ranks "
                f"that pair by progress, leaving {int(left[best])} misranked pair(s)"
            )
        else:
            why += "; no single achievement weight can fix it (both earned the same credits)"
        flags.append(Flag("alignment", "misranked-pairs", f"{worst['paid_more']} / {worst['progressed_more']}", why))
    kendall = (table["progress"] == "achievements").to_numpy() & (table["statistic"] == "kendall").to_numpy()
    if kendall.any():
        row = table.iloc[int(np.flatnonzero(kendall)[0])].to_dict()
        if row["estimate"] < threshold:
            flags.append(
                Flag(
                    "alignment",
                    "weak-agreement",
                    "kendall tau",
                    f"Kendall's tau between shaped return and achievements is {row['estimate']:.3f} "
                    f"({row['confidence']:.0%} interval {row['low']:.3f} to {row['high']:.3f}, bootstrap within "
                    f"{row['strata']}), below {threshold:g}: the shaped return orders episodes unlike their progress",
                )
            )
    return flags
