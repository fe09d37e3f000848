"""Over-optimisation watch: over a run's episodes in order, does the proxy (shaped return) keep rising while the gold (Crafter progress) falls?

Gao, Schulman and Hilton (2022, *Scaling laws for reward model overoptimization*) measure a
policy optimised against a proxy reward by a gold reward it was meant to stand for: as
optimisation goes on, the proxy keeps rising while the gold first rises, then falls. Here the
proxy is a config's shaped return per episode and the gold is what Crafter itself counts: the
achievements an episode unlocked (and Crafter's score, the offset geometric mean of success
rates, over a span of episodes).

``watch_series(gold, proxy)`` looks at one pair of series in episode order:

1. the gold's peak: the maximum of its centred rolling mean (``window`` episodes) over every
   episode so far (ties: the earliest). It is *settled* once at least ``min_run`` episodes follow
   it; until then there is no alarm (a watch run as episodes arrive, as the Live page does, would
   otherwise take the best of the settled positions, before the true peak, and name a decline
   that began before the peak);
2. from the peak to the end, the least-squares slopes per episode of gold and proxy, each with a
   percentile bootstrap interval (``rankstats.bootstrap_interval``, episodes of the span
   resampled with their positions: a pairs bootstrap of the regression);
3. the alarm: the peak is settled, the proxy's interval lies above 0 and the gold's below 0.
   It began at the episode after the peak (the first of the decline).

``overoptimisation_watch(corpus, configs)`` runs it per config on a corpus (in corpus order or by
an index column) and adds Crafter's score over the ``window`` episodes up to the peak and over
the last ``window`` episodes, with a bootstrap interval of the change (episodes resampled within
each span). ``live_watch(table)`` does the same on a ``LiveScores.episodes()`` table (arrival
order), without preparing the corpus again: what the Live page re-runs after each append.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.analysis.rankstats import bootstrap_interval
from workbench.analysis.timeline import unlocked_matrix
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import AnalysisError
from workbench.scoring import prepare, score

__all__ = [
    "OveroptimisationWatch",
    "SeriesAlarm",
    "crafter_score_change",
    "episodes_needed",
    "live_watch",
    "overoptimisation_watch",
    "watch_series",
]

#: Episodes in the centred rolling mean that finds the gold's peak.
WINDOW = 9
#: At least this many episodes after the peak before a slope is trusted.
MIN_RUN = 10


@dataclass(frozen=True)
class SeriesAlarm:
    """What ``watch_series`` found: ``peak`` (position of the gold's peak so far), ``start`` (the
    first position of the decline, ``peak + 1``), the slopes per episode from the peak on with their
    bootstrap intervals (``gold_slope``, ``gold_low``, ``gold_high``, ``proxy_*`` alike; NaN over
    a span of one episode), ``episodes`` in the span, ``alarm`` (the peak settled, proxy interval
    above 0 and gold interval below 0) and ``settled`` (at least ``min_run`` episodes follow the
    peak: before that the watch waits, whatever the slopes)."""

    peak: int
    start: int
    episodes: int
    gold_slope: float
    gold_low: float
    gold_high: float
    proxy_slope: float
    proxy_low: float
    proxy_high: float
    alarm: bool
    settled: bool


def episodes_needed(min_run: int = MIN_RUN) -> int:
    """How many episodes the watch needs before it can say anything: the peak, ``min_run``
    episodes after it and one more for the rolling mean to have a neighbour.

    Args:
        min_run: As in ``watch_series``.

    Returns:
        ``min_run + 2``.
    """
    return min_run + 2


def _slopes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares slope of each row of ``y`` on the same row of ``x`` (NaN when x is constant)."""
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (dx * dy).sum(axis=1) / (dx * dx).sum(axis=1)


def _peak(gold: np.ndarray, window: int) -> int:
    """The first position where the centred rolling mean of ``gold`` is largest.

    Over every position, not only those already followed by ``min_run`` episodes: the best of
    those lies before the true peak while the peak is recent, and a decline "starting" there
    would start before the peak (``_alarms`` waits instead)."""
    smooth = pd.Series(gold).rolling(window, center=True, min_periods=1).mean().to_numpy()
    return int(np.argmax(smooth))


def watch_series(
    gold: np.ndarray,
    proxy: np.ndarray,
    *,
    window: int = WINDOW,
    min_run: int = MIN_RUN,
    reps: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> SeriesAlarm:
    """Whether ``proxy`` keeps rising while ``gold`` falls, over episodes in order (see the module).

    Args:
        gold: (E,) the gold measure per episode, in run order (e.g. achievements unlocked).
        proxy: (E,) the proxy per episode (e.g. the shaped return under a config).
        window: episodes in the centred rolling mean that locates the gold's peak.
        min_run: episodes required after the peak.
        reps: bootstrap resamples.
        confidence: the intervals' coverage.
        seed: the bootstrap's seed (deterministic for a given seed).

    Returns:
        The ``SeriesAlarm``.

    Raises:
        AnalysisError: series of different lengths, non-finite values, or fewer than
            ``min_run + 2`` episodes.
    """
    found = _alarms(gold, {"": proxy}, window=window, min_run=min_run, reps=reps, confidence=confidence, seed=seed)
    return found[""]


def _alarms(
    gold: np.ndarray,
    proxies: Mapping[str, np.ndarray],
    *,
    window: int,
    min_run: int,
    reps: int,
    confidence: float,
    seed: int | None,
) -> dict[str, SeriesAlarm]:
    """``watch_series`` of each proxy against one gold: the peak and the gold's interval are
    computed once (the same for every proxy), each proxy's interval with the same seed."""
    gold = np.asarray(gold, dtype=np.float64)
    series = {name: np.asarray(proxy, dtype=np.float64) for name, proxy in proxies.items()}
    for proxy in series.values():
        if gold.shape != proxy.shape or gold.ndim != 1:
            raise AnalysisError(f"gold and proxy must be 1-D series of one length, got {gold.shape} and {proxy.shape}")
        if not (np.isfinite(gold).all() and np.isfinite(proxy).all()):
            raise AnalysisError("gold and proxy must be finite numbers")
    if window < 1 or min_run < 2:
        raise AnalysisError(f"window must be >= 1 and min_run >= 2, got {window} and {min_run}")
    if len(gold) < episodes_needed(min_run):
        raise AnalysisError(f"the watch needs at least {episodes_needed(min_run)} episodes in order, got {len(gold)}")
    peak = _peak(gold, window)
    settled = peak <= len(gold) - 1 - min_run
    span = np.arange(peak, len(gold), dtype=np.float64)
    g = bootstrap_interval(_slopes, [span, gold[peak:]], reps=reps, seed=seed, confidence=confidence)
    found = {}
    for name, proxy in series.items():
        p = bootstrap_interval(_slopes, [span, proxy[peak:]], reps=reps, seed=seed, confidence=confidence)
        found[name] = SeriesAlarm(
            peak, peak + 1, len(span), *g, *p, bool(settled and p[1] > 0.0 and g[2] < 0.0), settled
        )
    return found


def crafter_score_change(
    before: np.ndarray, after: np.ndarray, *, reps: int = 2000, confidence: float = 0.95, seed: int | None = 0
) -> tuple[float, float, float, float, float]:
    """Crafter's score over two spans of episodes and the change, with its interval.

    Args:
        before: (B, 22) bool, which achievements each episode of the first span unlocked.
        after: (A, 22) bool, the same for the second span.
        reps: bootstrap resamples (episodes drawn within each span).
        confidence: the interval's coverage.
        seed: the bootstrap's seed.

    Returns:
        ``(score_before, score_after, change, low, high)``: the two scores in percent,
        ``after - before`` and its percentile interval.

    Raises:
        AnalysisError: an empty span.
    """
    if not len(before) or not len(after):
        raise AnalysisError("both spans need at least one episode")
    unlocked = np.concatenate([before, after]).astype(bool)
    side = np.r_[np.zeros(len(before)), np.ones(len(after))]

    def change(side: np.ndarray, *columns: np.ndarray) -> np.ndarray:
        later = side == 1
        counts = [(~later).sum(axis=1), later.sum(axis=1)]
        logs = [np.zeros(len(side)), np.zeros(len(side))]
        for column in columns:  # one achievement at a time: no (resamples, episodes, 22) array
            logs[0] += np.log1p(100.0 * (column * ~later).sum(axis=1) / counts[0])
            logs[1] += np.log1p(100.0 * (column * later).sum(axis=1) / counts[1])
        return np.expm1(logs[1] / len(columns)) - np.expm1(logs[0] / len(columns))

    columns = [unlocked[:, a].astype(np.float64) for a in range(unlocked.shape[1])]
    point, low, high = bootstrap_interval(
        change, [side, *columns], strata=side, reps=reps, seed=seed, confidence=confidence
    )
    score_before = float(np.expm1(np.log1p(100.0 * unlocked[side == 0].mean(axis=0)).mean()))
    return score_before, score_before + point, point, low, high


@dataclass(frozen=True, eq=False)
class OveroptimisationWatch:
    """``overoptimisation_watch``'s tables.

    - ``series``: one row per (episode, config): ``position`` (run order), ``episode``,
      ``config``, ``gold`` (achievements unlocked) and ``proxy`` (shaped return).
    - ``alarms``: one row per config: the ``SeriesAlarm`` fields, ``began_at`` (the episode id
      where the decline began), and Crafter's score ``score_before`` (the ``window`` episodes up
      to the peak) / ``score_after`` (the last ``window`` episodes) with the change's interval (``score_change``, ``score_low``, ``score_high``).
    """

    series: pd.DataFrame
    alarms: pd.DataFrame

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by name (what ``--out`` writes)."""
        return {"series": self.series, "alarms": self.alarms}


def overoptimisation_watch(
    corpus: Corpus,
    configs: Mapping[str, RewardConfig],
    *,
    order: str | None = None,
    window: int = WINDOW,
    min_run: int = MIN_RUN,
    reps: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> OveroptimisationWatch:
    """The over-optimisation watch of each config on a run's episodes (see the module docstring).

    Args:
        corpus: the run's episodes.
        configs: name -> reward config (the proxies).
        order: an index column giving run order (e.g. ``training_step``; stable sort), or None
            for corpus order.
        window: as in ``watch_series``.
        min_run: as in ``watch_series``.
        reps: bootstrap resamples.
        confidence: the intervals' coverage.
        seed: the bootstraps' seed.

    Returns:
        The ``OveroptimisationWatch``.

    Raises:
        AnalysisError: no configs, an unknown ``order`` column, or too few episodes.
    """
    if not configs:
        raise AnalysisError("the watch needs at least one config")
    positions = np.arange(len(corpus))
    if order is not None:
        if order not in corpus.index.columns:
            raise AnalysisError(f"no index column {order!r} to order by; columns are {list(corpus.index.columns)}")
        positions = np.argsort(corpus.index[order].to_numpy(), kind="stable")
    prepared = prepare(corpus)
    unlocked = prepared.ever_status[positions]
    ids = np.array(prepared.ids, dtype=object)[positions]
    proxies = {name: score(prepared, config).reward_sum[positions] for name, config in configs.items()}
    return _watch(ids, unlocked, proxies, window=window, min_run=min_run, reps=reps, confidence=confidence, seed=seed)


def live_watch(
    table: pd.DataFrame,
    *,
    window: int = WINDOW,
    min_run: int = MIN_RUN,
    reps: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> OveroptimisationWatch:
    """The watch of each config on a ``LiveScores.episodes()`` table, in arrival order: the gold
    is the achievements each episode unlocked (its ``unique_achievements``, as the Timeline's
    Crafter score reads them), the proxy its ``return`` under the config.

    Args:
        table: One row per (episode, config) with columns ``episode``, ``config``, ``arrival``,
            ``return`` and ``unique_achievements`` (``LiveScores.episodes()``).
        window: as in ``watch_series``.
        min_run: as in ``watch_series``.
        reps: bootstrap resamples.
        confidence: the intervals' coverage.
        seed: the bootstraps' seed.

    Returns:
        The ``OveroptimisationWatch`` (``position`` is the arrival).

    Raises:
        AnalysisError: a missing column, no rows, configs with different episodes, or too few
            episodes (``episodes_needed``).
    """
    missing = [c for c in ("episode", "config", "arrival", "return", "unique_achievements") if c not in table.columns]
    if missing:
        raise AnalysisError(f"the episodes table has no column(s) {missing}; it has {list(table.columns)}")
    if not len(table):
        raise AnalysisError("the watch needs at least one config's episodes; the table is empty")
    ordered = table.sort_values(["arrival"], kind="stable")
    frames = {str(name): rows for name, rows in ordered.groupby("config", sort=False)}
    first = next(iter(frames.values()))
    ids = first["episode"].astype(str).to_numpy(dtype=object)
    for name, rows in frames.items():
        if not np.array_equal(rows["episode"].astype(str).to_numpy(dtype=object), ids):
            raise AnalysisError(f"config {name!r} has other episodes than {str(first['config'].iat[0])!r}")
    unlocked = unlocked_matrix(first)
    proxies = {name: rows["return"].to_numpy(dtype=np.float64) for name, rows in frames.items()}
    return _watch(ids, unlocked, proxies, window=window, min_run=min_run, reps=reps, confidence=confidence, seed=seed)


def _watch(
    ids: np.ndarray,
    unlocked: np.ndarray,
    proxies: Mapping[str, np.ndarray],
    *,
    window: int,
    min_run: int,
    reps: int,
    confidence: float,
    seed: int | None,
) -> OveroptimisationWatch:
    """Each proxy against the gold ``unlocked.sum(axis=1)``, episodes ``ids`` in run order."""
    gold = unlocked.sum(axis=1).astype(np.float64)
    alarms = _alarms(gold, proxies, window=window, min_run=min_run, reps=reps, confidence=confidence, seed=seed)
    # Crafter's score near the peak (the window up to it) and at the end (the last window): the
    # gold, hence the peak, is every config's, so once
    start = next(iter(alarms.values())).start
    near_peak = unlocked[max(0, start - window) : start]
    # the last window, at least the last episode (a peak not yet settled may be the last)
    at_end = unlocked[min(max(start, len(unlocked) - window), len(unlocked) - 1) :]
    before, after, change, low, high = crafter_score_change(
        near_peak, at_end, reps=reps, confidence=confidence, seed=seed
    )
    series, rows = [], []
    for name, proxy in proxies.items():
        found = alarms[name]
        rows.append(
            {
                "config": name,
                **found.__dict__,
                "began_at": ids[min(found.start, len(ids) - 1)],
                "score_before": before,
                "score_after": after,
                "score_change": change,
                "score_low": low,
                "score_high": high,
            }
        )
        series.append(
            pd.DataFrame(
                {"position": np.arange(len(ids)), "episode": ids, "config": name, "gold": gold, "proxy": proxy}
            )
        )
    return OveroptimisationWatch(pd.concat(series, ignore_index=True), pd.DataFrame(rows))
