"""Progress-free pay: what a config pays per 100 decisions in stretches with no new unlock, against honest play's rate.

A policy that has found a paying shortcut keeps collecting without unlocking anything new. This
module measures that pay, per episode, from three per-decision arrays any caller has
(``Scores.reward``, ``PreparedCorpus.n_first`` and the episodes' lengths), with no Python loop
over decisions:

- a **stretch** is a run of decisions of one episode between two decisions that unlock an
  achievement for the first time in the episode (the unlocking decisions belong to none: their
  pay is progress's);
- a decision is **progress-free** when its stretch holds at least ``min_stretch`` decisions
  (``MIN_STRETCH``: early play, which unlocks something every few dozen decisions, is not);
- ``progress_free_pay`` gives per episode the progress-free decisions, their pay, the pay per
  100 of them (``rate``) and the best ``window`` consecutive progress-free decisions of one
  stretch (``peak``: the *sustained* rate, with the decisions where it was earned);
- ``reference_rate`` is honest play's rate under the same config: the pooled progress-free pay
  per 100 progress-free decisions of honest episodes, or a quantile of their per-episode rates.

Signatures (shared with ``workbench exploitability``, which reports each probe policy's peak
against the honest reference)::

    progress_free_mask(new_unlocks, lengths, min_stretch=MIN_STRETCH) -> (N,) bool
    progress_free_pay(rewards, new_unlocks, lengths, *, min_stretch=MIN_STRETCH, window=WINDOW)
        -> ProgressFree (per-episode arrays: decisions, paid, rate, peak, peak_first)
    reference_rate(paid, decisions, quantile=None) -> float

``rewards`` (N,) is the reward per decision after lambda in corpus order, ``new_unlocks`` (N,)
how many achievements each decision unlocked for the first time in its episode, ``lengths`` (E,)
each episode's decisions (summing to N).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from workbench.errors import DiagnosisError

__all__ = [
    "MIN_STRETCH",
    "WINDOW",
    "PayScan",
    "ProgressFree",
    "best_windows",
    "progress_free_mask",
    "progress_free_pay",
    "progress_free_scan",
    "reference_rate",
    "stretch_ids",
]

#: The fewest decisions a stretch without a new unlock must hold before its pay counts as
#: progress-free: honest play unlocks something new every 10-40 decisions early on.
MIN_STRETCH = 50
#: The decisions ``ProgressFree.peak`` is measured over: pay sustained that long is a habit.
WINDOW = 100


class ProgressFree(NamedTuple):
    """Per episode (corpus order), each an (E,) array.

    Attributes:
        decisions: Progress-free decisions.
        paid: Their reward (after lambda).
        rate: ``paid`` per 100 ``decisions`` (NaN with none).
        peak: The most paid by ``window`` consecutive progress-free decisions of one stretch,
            per 100 decisions (NaN when no stretch holds ``window`` of them).
        peak_first: The 1-based decision where that window starts (0 when ``peak`` is NaN).
    """

    decisions: np.ndarray
    paid: np.ndarray
    rate: np.ndarray
    peak: np.ndarray
    peak_first: np.ndarray


def _check(new_unlocks: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    new_unlocks, lengths = np.asarray(new_unlocks), np.asarray(lengths, dtype=np.int64)
    if new_unlocks.ndim != 1 or lengths.ndim != 1 or int(lengths.sum()) != len(new_unlocks):
        raise DiagnosisError(
            f"progress-free pay: the episodes' lengths sum to {int(lengths.sum())}, "
            f"but {len(new_unlocks)} decisions were given"
        )
    return new_unlocks, lengths


def stretch_ids(new_unlocks: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each decision's stretch: a new stretch starts at each episode's first decision and at each
    decision that unlocks something new (that decision is the stretch's first, and not in it).

    Args:
        new_unlocks: (N,) first-time unlocks per decision.
        lengths: (E,) decisions per episode.

    Returns:
        (N,) int64 stretch ids, increasing in corpus order from 0.

    Raises:
        DiagnosisError: ``lengths`` does not sum to N.
    """
    new_unlocks, lengths = _check(new_unlocks, lengths)
    starts = np.zeros(len(new_unlocks), dtype=bool)
    starts[(np.cumsum(lengths) - lengths)[lengths > 0]] = True
    return np.cumsum(starts | (new_unlocks > 0)) - 1


def progress_free_mask(new_unlocks: np.ndarray, lengths: np.ndarray, min_stretch: int = MIN_STRETCH) -> np.ndarray:
    """Which decisions are progress-free: unlock nothing new, in a stretch of at least
    ``min_stretch`` such decisions.

    Args:
        new_unlocks: (N,) first-time unlocks per decision.
        lengths: (E,) decisions per episode.
        min_stretch: The fewest decisions a stretch must hold.

    Returns:
        (N,) bool.

    Raises:
        DiagnosisError: ``lengths`` does not sum to N, or ``min_stretch`` is below 1.
    """
    if min_stretch < 1:
        raise DiagnosisError(f"min_stretch must be at least 1, not {min_stretch}")
    ids = stretch_ids(new_unlocks, lengths)
    quiet = np.asarray(new_unlocks) == 0
    size = np.bincount(ids, weights=quiet).astype(np.int64) if len(ids) else np.zeros(0, np.int64)
    return quiet & (size[ids] >= min_stretch)


def progress_free_pay(
    rewards: np.ndarray,
    new_unlocks: np.ndarray,
    lengths: np.ndarray,
    *,
    min_stretch: int = MIN_STRETCH,
    window: int = WINDOW,
) -> ProgressFree:
    """Per episode, the pay of its progress-free decisions (see the module).

    Args:
        rewards: (N,) reward per decision after lambda, corpus order.
        new_unlocks: (N,) first-time unlocks per decision.
        lengths: (E,) decisions per episode.
        min_stretch: The fewest decisions a stretch must hold to count.
        window: The decisions ``peak`` is measured over (at least 1).

    Returns:
        The per-episode arrays.

    Raises:
        DiagnosisError: The arrays disagree in length, ``min_stretch`` or ``window`` is below 1.
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    new_unlocks, lengths = _check(new_unlocks, lengths)
    if len(rewards) != len(new_unlocks):
        raise DiagnosisError(f"progress-free pay: {len(rewards)} rewards but {len(new_unlocks)} decisions")
    if window < 1:
        raise DiagnosisError(f"window must be at least 1, not {window}")
    n_episodes = len(lengths)
    episode = np.repeat(np.arange(n_episodes), lengths)
    mask = progress_free_mask(new_unlocks, lengths, min_stretch)
    decisions = np.bincount(episode, weights=mask, minlength=n_episodes).astype(np.int64)
    paid = np.bincount(episode, weights=np.where(mask, rewards, 0.0), minlength=n_episodes)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(decisions > 0, 100.0 * paid / decisions, np.nan)
    # a window must lie in one stretch (hence one episode) and be progress-free throughout
    total, peak_first = best_windows(
        np.where(mask, rewards, 0.0), stretch_ids(new_unlocks, lengths), lengths, window, mask
    )
    peak = 100.0 * total / window
    return ProgressFree(decisions, paid, rate, peak, peak_first)


class PayScan(NamedTuple):
    """Per episode and scale, each an (E, len(scales)) array: the multi-scale scan of progress-free pay.

    Attributes:
        peak: The most paid by that many consecutive progress-free decisions of one stretch, per
            100 decisions; at the whole scale (0) the rate over all the episode's progress-free
            decisions, when there are at least ``WINDOW`` of them (NaN: no window fits).
        first: The 1-based decision where that window starts (the first progress-free decision
            at the whole scale; 0 when ``peak`` is NaN).
        last: The 1-based decision where it ends (the last progress-free decision at the whole
            scale; 0 when ``peak`` is NaN).
        decisions: The decisions the window holds (the progress-free decisions at the whole scale).
        free_decisions: (E,) each episode's progress-free decisions (``ProgressFree.decisions``).
        free_paid: (E,) their reward (``ProgressFree.paid``).
    """

    peak: np.ndarray
    first: np.ndarray
    last: np.ndarray
    decisions: np.ndarray
    free_decisions: np.ndarray
    free_paid: np.ndarray


def progress_free_scan(
    rewards: np.ndarray,
    new_unlocks: np.ndarray,
    lengths: np.ndarray,
    scales: tuple[int, ...],
    *,
    min_stretch: int = MIN_STRETCH,
    mask: np.ndarray | None = None,
) -> PayScan:
    """Progress-free pay scanned at several scales: per episode the best window of each length
    (``best_windows`` within one stretch), and for scale 0 the rate over all of the episode's
    progress-free decisions (at least ``WINDOW`` of them: a sustained rate). A scan statistic
    over several window lengths (Kulldorff 1997; Glaz, Naus & Wallenstein 2001), as
    ``loop_scan`` counts units: a short burst of pay shows at a short scale, pay sustained over a
    whole episode at the whole one.

    Args:
        rewards: (N,) reward per decision after lambda, corpus order.
        new_unlocks: (N,) first-time unlocks per decision.
        lengths: (E,) decisions per episode.
        scales: Window lengths in decisions (0: all progress-free decisions).
        min_stretch: The fewest decisions a stretch must hold to count.
        mask: ``progress_free_mask(new_unlocks, lengths, min_stretch)`` when the caller has it.

    Returns:
        The peaks per 100 decisions and where they lie.

    Raises:
        DiagnosisError: The arrays disagree in length, or ``min_stretch`` is below 1.
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    new_unlocks, lengths = _check(new_unlocks, lengths)
    if len(rewards) != len(new_unlocks):
        raise DiagnosisError(f"progress-free pay: {len(rewards)} rewards but {len(new_unlocks)} decisions")
    n_episodes = len(lengths)
    shape = (n_episodes, len(scales))
    peak, first, last = np.full(shape, np.nan), np.zeros(shape, np.int64), np.zeros(shape, np.int64)
    width = np.zeros(shape, np.int64)
    if mask is None:
        mask = progress_free_mask(new_unlocks, lengths, min_stretch)
    starts = np.cumsum(lengths) - lengths
    # the progress-free decisions alone: within a stretch they are consecutive (only its first,
    # unlocking, decision is not), so w of them in a row in one stretch are a window of w decisions
    where = np.flatnonzero(mask)
    episode = np.repeat(np.arange(n_episodes), lengths)[where]
    stretch = stretch_ids(new_unlocks, lengths)[where]
    total = np.concatenate([[0.0], np.cumsum(rewards[where])])
    decisions = np.bincount(episode, minlength=n_episodes).astype(np.int64)
    paid = np.bincount(episode, weights=rewards[where], minlength=n_episodes)
    for s, scale in enumerate(scales):
        if scale == 0:
            some = decisions >= WINDOW
            counts = np.r_[0, np.cumsum(decisions)]
            peak[some, s] = 100.0 * paid[some] / decisions[some]
            first[some, s] = where[counts[:-1][some]] - starts[some] + 1
            last[some, s] = where[counts[1:][some] - 1] - starts[some] + 1
            width[some, s] = decisions[some]
            continue
        if len(where) < scale:
            continue
        begin = np.flatnonzero(stretch[: len(where) - scale + 1] == stretch[scale - 1 :])
        if not len(begin):
            continue
        sums = total[begin + scale] - total[begin]
        owner = episode[begin]
        # windows are in corpus order: each episode's are one run; its best, then the first reaching it
        runs = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        top = np.maximum.reduceat(sums, runs)
        hits = np.flatnonzero(sums == np.repeat(top, np.diff(np.r_[runs, len(sums)])))
        keep = hits[np.r_[True, owner[hits][1:] != owner[hits][:-1]]]
        mine = owner[keep]
        peak[mine, s] = 100.0 * sums[keep] / scale
        first[mine, s] = where[begin[keep]] - starts[mine] + 1
        last[mine, s] = first[mine, s] + scale - 1
        width[mine, s] = scale
    return PayScan(peak, first, last, width, decisions, paid)


def best_windows(
    values: np.ndarray, groups: np.ndarray, lengths: np.ndarray, window: int, allowed: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per episode, the largest sum of ``values`` over ``window`` consecutive decisions of one
    group (``groups``: non-decreasing ids that never span two episodes, e.g. the episode's own
    position or ``stretch_ids``), all of them ``allowed``.

    Args:
        values: (N,) per decision, corpus order.
        groups: (N,) each decision's group.
        lengths: (E,) decisions per episode.
        window: The decisions a window holds (at least 1).
        allowed: (N,) bool, decisions a window may hold (None: all).

    Returns:
        (E,) the best sum (NaN where no window fits) and (E,) int64 the 1-based decision where
        it starts (0 where none fits); the earliest of equal sums.
    """
    values, lengths = np.asarray(values, dtype=np.float64), np.asarray(lengths, dtype=np.int64)
    n_episodes, n = len(lengths), len(values)
    best = np.full(n_episodes, np.nan)
    first_decision = np.zeros(n_episodes, dtype=np.int64)
    if n < window:
        return best, first_decision
    ok_mask = np.ones(n, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    pay = np.concatenate([[0.0], np.cumsum(values)])
    free = np.concatenate([[0], np.cumsum(ok_mask)])
    # window starts 0 .. n - window, compared by slices (views), not gathers of an index array
    starts_free = free[window:] - free[: n - window + 1] == window
    first = np.flatnonzero(starts_free & (groups[: n - window + 1] == groups[window - 1 :]))
    if len(first):
        sums = pay[first + window] - pay[first]
        owner = np.repeat(np.arange(n_episodes), lengths)[first]
        # the best window per episode (windows are in corpus order, so each episode's are one
        # run): its maximum by reduceat, then the first window reaching it
        runs = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        top = np.maximum.reduceat(sums, runs)
        hits = np.flatnonzero(sums == np.repeat(top, np.diff(np.r_[runs, len(sums)])))
        keep = hits[np.r_[True, owner[hits][1:] != owner[hits][:-1]]]
        best[owner[keep]] = sums[keep]
        starts = np.cumsum(lengths) - lengths
        first_decision[owner[keep]] = first[keep] - starts[owner[keep]] + 1
    return best, first_decision


def reference_rate(paid: np.ndarray, decisions: np.ndarray, quantile: float | None = None) -> float:
    """Honest play's progress-free pay per 100 decisions: pooled over the episodes given
    (total paid per 100 total decisions), or the ``quantile`` of their per-episode rates.

    Args:
        paid: (E,) each honest episode's progress-free pay (``ProgressFree.paid``).
        decisions: (E,) its progress-free decisions (``ProgressFree.decisions``).
        quantile: None for the pooled rate; else in 0..1, over episodes with any such decision.

    Returns:
        The rate per 100 decisions; NaN when no episode has a progress-free decision.

    Raises:
        DiagnosisError: ``quantile`` is outside 0..1.
    """
    paid, decisions = np.asarray(paid, dtype=np.float64), np.asarray(decisions, dtype=np.float64)
    if quantile is not None and not 0.0 <= quantile <= 1.0:
        raise DiagnosisError(f"quantile must be between 0 and 1, not {quantile}")
    some = decisions > 0
    if not some.any():
        return float("nan")
    if quantile is None:
        return float(100.0 * paid[some].sum() / decisions[some].sum())
    return float(np.quantile(100.0 * paid[some] / decisions[some], quantile))
