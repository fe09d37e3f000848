"""The stratified bootstrap: percentile intervals of statistics of paired samples, many at once.

``bootstrap_interval`` gives one statistic's interval; ``bootstrap_intervals`` gives several
statistics' intervals from the same resamples (each exactly what ``bootstrap_interval`` gives
it with the same seed: the resamples are drawn once, not once per statistic). The rank
statistics they are mostly used with live in ``analysis.rankstats``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["MAX_REPS", "Weighted", "bootstrap_interval", "bootstrap_intervals"]

#: The most bootstrap resamples taken: one float each is kept (8 MB at this bound) and each costs
#: a statistic's evaluation; a billion would exhaust memory before the first interval.
MAX_REPS = 1_000_000
#: Bootstrap resamples drawn and evaluated at once (bounds memory: rows x items indices).
_BOOTSTRAP_CELLS = 1 << 22


@dataclass(frozen=True)
class Weighted:
    """A statistic that reads a resample as the items weighted by how often it drew each:
    ``function(weights, *data)``, ``weights`` (m, u) counts (each row summing to n), ``data`` the
    k arrays' u distinct items (items equal in every array are one, their counts summed: u = n
    when no two are), returning (m,). It must equal the statistic of the resampled arrays, so
    depend on the weighted items only (e.g. ``rankcounts.kendall_tau_weighted``, exactly
    ``kendall_tau`` of the resample): the bootstrap then neither gathers the resampled arrays
    nor hands a sort per resample on.

    Attributes:
        function: ``(weights, *data) -> (m,)``.
    """

    function: Callable[..., np.ndarray]


def bootstrap_interval(
    statistic: Callable[..., float | np.ndarray],
    data: Sequence[np.ndarray | Sequence[float]],
    strata: np.ndarray | Sequence[object] | None = None,
    *,
    reps: int = 2000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """A statistic of paired samples with a stratified-bootstrap percentile interval.

    ``data`` is a sequence of k arrays of n items each, item i of every array belonging together
    (e.g. episode i's return and its achievements). ``statistic(*arrays)`` receives k arrays of
    shape (m, n), each row one sample of the items, and returns shape (m,): e.g.
    ``kendall_tau`` or ``spearman_rho`` as they are, or ``lambda v: v.mean(axis=1)``.

    Resampling is within strata, as rliable's ``StratifiedBootstrap`` resamples runs within each
    task: ``strata`` (n labels, e.g. each episode's policy) fixes how many items of each stratum
    every resample holds, and each stratum's items are drawn with replacement from that stratum
    only, so a resample never has more farmer episodes than the corpus. ``None`` is one stratum
    (a plain bootstrap). The interval is the percentile interval of ``reps`` resamples (rliable's
    default method); resamples where the statistic is NaN (e.g. every drawn episode unlocked the
    same number of achievements) are left out, and the interval is NaN when all are.

    Deterministic for a given ``seed``.

    Args:
        statistic: k arrays of shape (m, n) -> shape (m,).
        data: k arrays of n paired items.
        strata: n stratum labels; None is one stratum.
        reps: Resamples.
        seed: The generator's seed (None: fresh randomness).
        confidence: The interval's level.

    Returns:
        ``(point, low, high)``: the statistic of the data as given and the interval's bounds.

    Raises:
        ValueError: Arrays of different lengths, strata of the wrong length, no items,
            ``reps`` outside 1..``MAX_REPS`` or ``confidence`` outside (0, 1).
    """
    return bootstrap_intervals({"": statistic}, data, strata, reps=reps, seed=seed, confidence=confidence)[""]


def bootstrap_intervals(
    statistics: Mapping[str, Callable[..., float | np.ndarray] | Weighted],
    data: Sequence[np.ndarray | Sequence[float]],
    strata: np.ndarray | Sequence[object] | None = None,
    *,
    reps: int = 2000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> dict[str, tuple[float, float, float]]:
    """Several statistics of the same paired samples, each with its stratified-bootstrap
    percentile interval from the same resamples: for each name, exactly what
    ``bootstrap_interval(statistic, data, strata, reps=reps, seed=seed, confidence=confidence)``
    gives (with a fixed seed), for the cost of drawing the resamples once. Every statistic reads
    the same resampled arrays: none may change its arguments. A ``Weighted`` statistic gets each
    resample's counts of the items instead (the point estimate: every item once).

    Args:
        statistics: Name -> statistic (k arrays of shape (m, n) -> shape (m,)), or a ``Weighted`` one.
        data: k arrays of n paired items.
        strata: n stratum labels; None is one stratum.
        reps: Resamples.
        seed: The generator's seed (None: fresh randomness).
        confidence: The intervals' level.

    Returns:
        Name -> ``(point, low, high)``, as ``bootstrap_interval`` gives it.

    Raises:
        ValueError: Arrays of different lengths, strata of the wrong length, no items,
            ``reps`` outside 1..``MAX_REPS`` or ``confidence`` outside (0, 1).
    """
    arrays = [np.asarray(array) for array in data]
    if not arrays or any(a.ndim != 1 for a in arrays) or len({len(a) for a in arrays}) != 1:
        raise ValueError(f"data must be one or more 1-D arrays of equal length; got shapes {[a.shape for a in arrays]}")
    n = len(arrays[0])
    if n == 0:
        raise ValueError("bootstrap_interval needs at least one item")
    if not 1 <= reps <= MAX_REPS:
        raise ValueError(f"reps must be from 1 to {MAX_REPS}, got {reps}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    labels = np.zeros(n, dtype=np.int64) if strata is None else pd.factorize(pd.Series(list(strata), dtype=object))[0]
    if len(labels) != n:
        raise ValueError(f"strata must give one label per item: {len(labels)} labels for {n} items")
    members = [np.flatnonzero(labels == label) for label in range(int(labels.max()) + 1)]
    points = {
        name: float(np.asarray(_evaluate(f, np.ones((1, n), np.int64), [a[None, :] for a in arrays], arrays))[0])
        for name, f in statistics.items()
    }
    weighted = any(isinstance(f, Weighted) for f in statistics.values())
    gathered = not all(isinstance(f, Weighted) for f in statistics.values())
    item, distinct = _distinct_items(arrays) if weighted else (np.arange(n), arrays)
    rng = np.random.default_rng(seed)
    values = {name: np.empty(reps) for name in statistics}
    chunk = max(1, _BOOTSTRAP_CELLS // n)
    for start in range(0, reps, chunk):
        m = min(chunk, reps - start)
        index = np.empty((m, n), dtype=np.int64)
        for positions in members:
            # Each resample keeps the stratum's slots and fills them from the stratum only.
            index[:, positions] = positions[rng.integers(0, len(positions), size=(m, len(positions)))]
        resampled = [a[index] for a in arrays] if gathered else []
        # how many times each resample drew each item (a row of index holds n draws)
        counts = _draw_counts(item[index], len(distinct[0])) if weighted else np.zeros((m, 0), np.int64)
        for name, statistic in statistics.items():
            values[name][start : start + m] = np.asarray(
                _evaluate(statistic, counts, resampled, distinct), dtype=np.float64
            )
    tail = (1.0 - confidence) / 2.0
    found = {}
    for name, drawn in values.items():
        drawn = drawn[~np.isnan(drawn)]
        if len(drawn) == 0:
            found[name] = (points[name], float("nan"), float("nan"))
            continue
        low, high = np.quantile(drawn, [tail, 1.0 - tail])
        found[name] = (points[name], float(low), float(high))
    return found


def _evaluate(
    statistic: Callable[..., float | np.ndarray] | Weighted,
    counts: np.ndarray,
    resampled: Sequence[np.ndarray],
    arrays: Sequence[np.ndarray],
) -> float | np.ndarray:
    """A statistic of resamples: of their ``counts`` of the items for a ``Weighted`` one, else
    of the ``resampled`` arrays."""
    if isinstance(statistic, Weighted):
        return statistic.function(counts, *arrays)
    return statistic(*resampled)


def _draw_counts(index: np.ndarray, n: int) -> np.ndarray:
    """(m, n): how many times row r of ``index`` (m, n draws of items 0..n-1) holds item i."""
    m = len(index)
    slots = index + (np.arange(m, dtype=np.int64) * n)[:, None]
    return np.bincount(slots.ravel(), minlength=m * n).reshape(m, n)


def _distinct_items(arrays: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Each item's position among the distinct items (equal in every array), and the arrays of
    the distinct items; the items themselves when no two are equal."""
    order = np.lexsort(arrays[::-1])  # by the first array, then the next, ...
    new = np.ones(len(order), dtype=bool)
    for array in arrays:
        ordered = array[order]
        new[1:] &= ordered[1:] == ordered[:-1]
    new[1:] = ~new[1:]  # a new item where any array differs from the previous item
    if new.all():
        return np.arange(len(order)), list(arrays)
    item = np.empty(len(order), dtype=np.int64)
    item[order] = np.cumsum(new) - 1
    firsts = order[new]
    return item, [array[firsts] for array in arrays]
