"""Leave-one-family-out measurement of the loop detectors: per-episode scores, thresholds tuned without a family, Wilson intervals.

``episode_scores`` gives, per episode under one config, the statistic of every gating farming
detector: ``farming-loop`` (laps past the shipped allowances of ``loops.LOOPS``) and the three
signs of ``loop_signs`` (count-at-cap, spent-and-regained, progress-free-pay against honest
play's rate measured on the given honest episodes). ``sign_thresholds`` sets each sign's
threshold to ``margin`` times the most any honest tune episode reached (and at least
``MIN_UNITS`` for the unit counts); ``choose_margin`` picks the largest margin on a grid that
still catches ``target`` of the exploit episodes it may see (the held-out family never among
them). ``wilson`` is the Wilson score interval for a binomial proportion (Wilson 1927; Brown,
Cai & DasGupta 2001 recommend it over the normal interval for small n and p near 0 or 1).
``benchmarks/bench_detectors_lofo.py`` runs the folds and prints the table of
docs/detector-accuracy.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from workbench.analysis.diagnostics.loop_signs import (
    CAP_CODE,
    REGAINED_CODE,
    SIGN_CODES,
    sign_statistics,
    sign_table,
)
from workbench.analysis.diagnostics.loop_table import loop_table
from workbench.analysis.diagnostics.loops import LOOP_CODE, LOOPS
from workbench.analysis.diagnostics.progress_free import reference_rate
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import DiagnosisError
from workbench.scoring import score, slot_pay

__all__ = ["GATE", "MARGINS", "MIN_UNITS", "choose_margin", "episode_scores", "flagged_by", "sign_thresholds", "wilson"]

#: The margins ``choose_margin`` tries: how many times the honest tune maximum a sign may reach.
MARGINS = (1.0, 1.25, 1.5, 2.0, 2.5, 3.0)
#: The fewest units a unit-counting sign is ever allowed: a couple is not yet a loop.
MIN_UNITS = 2.0
#: The detectors that together decide whether an episode farms (progress-free pay is reported
#: beside them: honest play's own rate varies too much for it to gate; docs/detector-accuracy.md).
GATE = (LOOP_CODE, CAP_CODE, REGAINED_CODE)


def episode_scores(corpus: Corpus, config: RewardConfig, honest: np.ndarray) -> pd.DataFrame:
    """Per episode (corpus order, index the ids) every gating farming detector's statistic:
    ``farming-loop`` laps past the allowance of the most-passed paid loop (0 when none), and
    ``loop_signs.sign_statistics`` with honest play's progress-free rate taken on ``honest``.

    Args:
        corpus: The episodes (at least one).
        config: The config to score under.
        honest: (episodes,) bool, the honest episodes the reference rate is taken on.

    Returns:
        (episodes, 4) float, columns ``farming-loop`` then ``SIGN_CODES``; ``reference`` in
        ``attrs`` (honest play's progress-free pay per 100 decisions).

    Raises:
        DiagnosisError: The corpus is empty.
    """
    if len(corpus) == 0:
        raise DiagnosisError("episode_scores: the corpus has no episodes")
    scores = score(corpus, config)
    table = sign_table(corpus, scores.reward, scores.prepared.n_first, slot_pay(config), scores.reward_sum)
    honest = np.asarray(honest, dtype=bool)
    reference = reference_rate(
        table["progress_free_paid"].to_numpy()[honest], table["progress_free_decisions"].to_numpy()[honest]
    )
    stats = sign_statistics(table, reference)
    loops = loop_table(corpus, config, scores.reward_sum, LOOPS)
    paid = loops[loops["paid"] > 0]
    excess = (paid["laps"] - paid["allowed"]).clip(lower=0).groupby(paid["episode"]).max()
    stats.insert(0, LOOP_CODE, excess.reindex(stats.index).fillna(0).to_numpy(dtype=float))
    stats.attrs["reference"] = reference
    return stats


def sign_thresholds(honest_stats: pd.DataFrame, margin: float) -> dict[str, float]:
    """Each sign's threshold (flag when above): ``margin`` times the most an honest episode
    reached, at least ``MIN_UNITS`` for the unit counts and 1 (honest play's rate) for
    progress-free pay; ``farming-loop`` stays at 0 (its allowances are in ``LOOPS``).

    Args:
        honest_stats: ``episode_scores`` rows of honest tune episodes (any configs stacked).
        margin: How many times the honest maximum.

    Returns:
        Code -> threshold, ``farming-loop`` first then ``SIGN_CODES``.
    """
    out = {LOOP_CODE: 0.0}
    for code in SIGN_CODES:
        top = float(honest_stats[code].max()) if len(honest_stats) else 0.0
        floor = MIN_UNITS if code in (CAP_CODE, REGAINED_CODE) else 1.0
        out[code] = max(margin * top, floor)
    return out


def flagged_by(stats: pd.DataFrame, thresholds: dict[str, float], gate: Sequence[str] = GATE) -> pd.DataFrame:
    """Per episode and detector whether it fires, and ``any``: whether one of ``gate`` does.

    Args:
        stats: ``episode_scores`` rows.
        thresholds: Code -> threshold (``sign_thresholds``).
        gate: The detectors ``any`` joins.

    Returns:
        Bool frame, the codes of ``thresholds`` then ``any``.
    """
    fired = pd.DataFrame({code: stats[code].to_numpy() > t for code, t in thresholds.items()}, index=stats.index)
    fired["any"] = fired[list(gate)].any(axis=1)
    return fired


def choose_margin(
    honest_stats: pd.DataFrame, exploit_stats: pd.DataFrame, target: float, margins: Sequence[float] = MARGINS
) -> float:
    """The largest margin whose thresholds (``sign_thresholds`` on ``honest_stats``) flag at
    least ``target`` of ``exploit_stats`` with any detector; the smallest margin when none does.

    Args:
        honest_stats: ``episode_scores`` rows of honest tune episodes.
        exploit_stats: ``episode_scores`` rows of the exploit episodes tuning may see.
        target: The recall to keep (0..1).
        margins: The margins to try.

    Returns:
        The margin.
    """
    best = min(margins)
    for margin in sorted(margins):
        recall = flagged_by(exploit_stats, sign_thresholds(honest_stats, margin))["any"].mean()
        if recall >= target:
            best = margin
    return best


def wilson(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (Wilson 1927).

    Args:
        successes: Successes counted.
        trials: Trials (0: the interval is undefined).
        z: The normal quantile (1.96: 95%).

    Returns:
        (low, high); (NaN, NaN) for no trials.
    """
    if trials <= 0:
        return float("nan"), float("nan")
    p, n = successes / trials, trials
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))
