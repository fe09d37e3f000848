"""Leave-one-family-out measurement of the loop detectors: per-episode scores, thresholds set on honest play, Wilson intervals.

``episode_table`` gives, per episode under one config, what every farming detector reads:
``loop_signs.sign_table`` (the multi-scale scan of loop units, the progress-free pay) and
``farming-loop``'s laps past the shipped allowances of ``loops.LOOPS``. ``unit_thresholds``
sets each (kind, scale) threshold of the scan to ``MARGIN`` times the most any honest tune
episode reached there, and at least ``MIN_UNITS``: the rule ``farming-loop``'s allowances follow
(twice the most an honest tune episode ran, at least 2). The thresholds come from honest play
alone, so no exploit family, held out or not, takes part in setting them; the margin was chosen
on honest play too (``MARGIN``). ``episode_scores``
turns a table into each detector's statistic; ``flagged_by`` into flags. ``wilson`` is the
Wilson score interval for a binomial proportion (Wilson 1927; Brown, Cai & DasGupta 2001
recommend it over the normal interval for small n and p near 0 or 1).
``benchmarks/bench_detectors_lofo.py`` runs the folds and prints the table of
docs/detector-accuracy.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from workbench.analysis.diagnostics.loop_scan import KINDS
from workbench.analysis.diagnostics.loop_signs import (
    CAP_CODE,
    PROGRESS_FREE_CODE,
    REGAINED_CODE,
    SignTable,
    SignThresholds,
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

__all__ = [
    "GATE",
    "MARGIN",
    "MIN_UNITS",
    "episode_scores",
    "episode_table",
    "flagged_by",
    "kinds_fired",
    "honest_rate",
    "pay_over_honest",
    "progress_free_thresholds",
    "unit_thresholds",
    "wilson",
]

#: How many times the most an honest tune episode reached a (kind, scale) threshold allows: the
#: smallest of 1, 1.25, 1.5, 2 that flagged at most 2% of honest episodes both on the benchmark's
#: honest held-out split and on a fresh-seed honest set (docs/detector-accuracy.md; 1.25 flagged
#: 5 of 64 fresh honest episodes, 1.5 one). ``farming-loop``'s allowances use 2 (on fewer honest
#: episodes: ``detector_accuracy.ALLOWANCE_MARGIN``).
MARGIN = 1.5
#: The fewest units a (kind, scale) is ever allowed: a couple is not yet a loop.
MIN_UNITS = 2.0
#: The farming detectors that may gate, together: whether an episode farms. (Progress-free pay,
#: a note in v1 at 2.5x honest play's rate, joins at 1.5x the honest tune maximum: it flagged no
#: honest episode on the held-out split or the fresh seeds; docs/detector-accuracy.md.)
GATE = (LOOP_CODE, CAP_CODE, REGAINED_CODE, PROGRESS_FREE_CODE)


def episode_table(corpus: Corpus, config: RewardConfig) -> tuple[SignTable, np.ndarray]:
    """What the farming detectors read of each episode under ``config``.

    Args:
        corpus: The episodes (at least one).
        config: The config to score under.

    Returns:
        ``sign_table``'s result, and (E,) float: per episode (corpus order) ``farming-loop``'s
        laps past the allowance of its most-passed paid loop (0 when none passed).

    Raises:
        DiagnosisError: The corpus is empty.
    """
    if len(corpus) == 0:
        raise DiagnosisError("episode_table: the corpus has no episodes")
    scores = score(corpus, config)
    table = sign_table(corpus, scores.reward, scores.prepared.n_first, slot_pay(config), scores.reward_sum)
    loops = loop_table(corpus, config, scores.reward_sum, LOOPS)
    paid = loops[loops["paid"] > 0]
    excess = (paid["laps"] - paid["allowed"]).clip(lower=0).groupby(paid["episode"]).max()
    return table, excess.reindex(list(corpus.ids)).fillna(0).to_numpy(dtype=float)


def unit_thresholds(peaks: np.ndarray, margin: float = MARGIN, floor: float = MIN_UNITS) -> np.ndarray:
    """Each (kind, scale) threshold of the scan: ``margin`` times the most any of ``peaks``'
    episodes reached there, and at least ``floor``.

    Args:
        peaks: (E, len(KINDS), scales) the scan peaks of honest tune episodes.
        margin: How many times the honest maximum.
        floor: The least threshold.

    Returns:
        (len(KINDS), scales) float.
    """
    peaks = np.asarray(peaks, dtype=float)
    top = peaks.max(axis=0) if len(peaks) else np.zeros(peaks.shape[1:])
    return np.maximum(margin * top, floor)


def honest_rate(table: SignTable, honest: np.ndarray) -> float:
    """Honest play's progress-free pay per 100 progress-free decisions: the ``honest`` episodes
    of ``table``, pooled (``progress_free.reference_rate``).

    Args:
        table: ``episode_table``'s sign table.
        honest: (E,) bool, the honest episodes.

    Returns:
        The rate (NaN when none has a progress-free decision).
    """
    honest = np.asarray(honest, dtype=bool)
    frame = table.episodes
    paid, decisions = frame["progress_free_paid"].to_numpy(), frame["progress_free_decisions"].to_numpy()
    return reference_rate(paid[honest], decisions[honest])


def pay_over_honest(table: SignTable, reference: float) -> np.ndarray:
    """Per episode and scale, the progress-free pay scan's peak over honest play's rate.

    Args:
        table: ``episode_table``'s sign table.
        reference: Honest play's rate (``honest_rate``).

    Returns:
        (E, scales) float, 0 where no window fits or the rate is unknown.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = table.pay.peak / reference if reference > 0 else np.zeros_like(table.pay.peak)
    return np.nan_to_num(ratio, nan=0.0, posinf=0.0)


def progress_free_thresholds(ratios: np.ndarray, margin: float = MARGIN) -> np.ndarray:
    """``progress-free-pay``'s threshold at each scale: ``margin`` times the most an honest
    tune episode's progress-free pay reached there over honest play's rate, and at least 1 (that
    rate).

    Args:
        ratios: (E, scales) honest tune episodes' ``pay_over_honest``.
        margin: How many times the honest maximum.

    Returns:
        (scales,) float.
    """
    ratios = np.asarray(ratios, dtype=float)
    top = ratios.max(axis=0) if len(ratios) else np.zeros(ratios.shape[1:])
    return np.maximum(margin * top, 1.0)


def episode_scores(
    table: SignTable,
    farming: np.ndarray,
    units: np.ndarray,
    pay_limits: np.ndarray | float,
    honest: np.ndarray | None = None,
    reference: float | None = None,
) -> pd.DataFrame:
    """Per episode every farming detector's statistic: ``farming-loop`` laps past its
    allowance, then ``loop_signs.sign_statistics`` (the scans' peak-to-threshold ratios: units,
    and progress-free pay over honest play's rate).

    Args:
        table: ``episode_table``'s sign table.
        farming: ``episode_table``'s laps past the allowances.
        units: The scan's thresholds (``unit_thresholds``).
        pay_limits: Progress-free pay's thresholds per scale (``progress_free_thresholds``),
            in multiples of honest play's rate.
        honest: (E,) bool, the honest episodes honest play's progress-free rate is taken on.
        reference: Honest play's progress-free rate itself (as the audit takes it:
            ``sign_gates.honest_reference``); it wins over ``honest``. With neither, no rate and
            progress-free pay 0.

    Returns:
        (episodes, 1 + len(SIGN_CODES)) float, columns ``farming-loop`` then ``SIGN_CODES``
        (each sign fires above 1); ``reference`` in ``attrs`` (honest play's progress-free pay
        per 100 decisions).
    """
    if reference is None:
        reference = honest_rate(table, honest) if honest is not None else float("nan")
    stats = sign_statistics(table, SignThresholds(units, pay_limits, reference))
    stats.insert(0, LOOP_CODE, np.asarray(farming, dtype=float))
    stats.attrs["reference"] = reference
    return stats


def flagged_by(stats: pd.DataFrame, gate: Sequence[str] = GATE) -> pd.DataFrame:
    """Per episode and detector whether it fires, and ``any``: whether one of ``gate`` does.

    Args:
        stats: ``episode_scores`` rows (``farming-loop`` fires above 0, the signs above 1).
        gate: The detectors ``any`` joins.

    Returns:
        Bool frame: ``farming-loop``, ``SIGN_CODES``, then ``any``.
    """
    limits = {LOOP_CODE: 0.0, CAP_CODE: 1.0, REGAINED_CODE: 1.0, PROGRESS_FREE_CODE: 1.0}
    fired = pd.DataFrame({code: stats[code].to_numpy() > limits[code] for code in limits}, index=stats.index)
    fired["any"] = fired[list(gate)].any(axis=1)
    return fired


def kinds_fired(table: SignTable, units: np.ndarray) -> list[str]:
    """Per episode the kinds whose peak passed a threshold at some scale (paid or not), joined by
    ", " ("" when none): what a benchmark table says fired on an episode.

    Args:
        table: ``episode_table``'s sign table.
        units: The scan's thresholds.

    Returns:
        One string per episode.
    """
    over = (table.scan.peak > units[None]).any(axis=2) & (table.unit_pay != 0)[None, :]
    return [", ".join(KINDS[k].name for k in np.flatnonzero(row)) for row in over]


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
