"""Rank statistics of paired samples and a stratified bootstrap, in numpy, many samples at once.

``kendall_tau`` (tau-b), ``spearman_rho`` and ``discordant_pairs`` take two (n,) arrays, or two
(m, n) arrays of m samples (rows) at once, which is how ``bootstrap_interval`` evaluates its
resamples. Each picks its algorithm by size: every pair compared directly for a few dozen items
(bootstraps of a small corpus); for more, one sort per row, then per-level counts when one
variable has few distinct values (achievements unlocked: at most 23), else a merge sort. The
tests check all paths against each other and against the definition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

__all__ = ["bootstrap_interval", "discordant_pairs", "kendall_tau", "spearman_rho"]

#: Bootstrap resamples drawn and evaluated at once (bounds memory: rows x items indices).
_BOOTSTRAP_CELLS = 1 << 22
#: Up to this many items per row, rank statistics compare all pairs directly (n^2 cells per
#: row, few numpy calls: fastest for bootstraps of a few dozen episodes); above, they sort.
_PAIRWISE_MAX_N = 48
#: Above this many items, Kendall's tau counts pairs per level of the variable with fewer distinct
#: values (achievements: at most 23) when it has at most this many; else by merge sort.
_MAX_LEVELS = 64
#: Pairwise cells (rows x n x n) held at once.
_PAIRWISE_CELLS = 1 << 21


# -- rank correlations (one pair of samples, or many rows of them at once) -------------------
#: The most bootstrap resamples taken: one float each is kept (8 MB at this bound) and each costs
#: a statistic's evaluation; a billion would exhaust memory before the first interval.
MAX_REPS = 1_000_000


def _rows(x: np.ndarray | Sequence[float], y: np.ndarray | Sequence[float]) -> tuple[np.ndarray, np.ndarray, bool]:
    """x and y as (m, n) arrays of the same shape (a 1-D pair is one row) and whether they were 1-D."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim not in (1, 2):
        raise ValueError(f"x and y must have the same shape, (n,) or (m, n); got {x.shape} and {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("x and y must not hold NaN (a rank of NaN is undefined)")
    single = x.ndim == 1
    return np.atleast_2d(x), np.atleast_2d(y), single


def _row_keys(codes: np.ndarray, size: int) -> np.ndarray:
    """Codes offset by row (row r's codes become r * size + code), so one flat sort or search
    over all rows never mixes two rows."""
    return codes + (np.arange(codes.shape[0], dtype=np.int64) * size)[:, None]


def _tied_pairs(codes: np.ndarray, size: int) -> np.ndarray:
    """Per row, the number of pairs of equal codes: sum over tie groups of t (t - 1) / 2."""
    m, n = codes.shape
    flat = np.sort(_row_keys(codes, size).ravel())
    starts = np.flatnonzero(np.concatenate([[True], flat[1:] != flat[:-1]]))
    runs = np.diff(np.append(starts, len(flat)))
    return np.bincount(starts // n, weights=runs * (runs - 1) // 2, minlength=m).astype(np.int64)


def _inversions(codes: np.ndarray, size: int) -> np.ndarray:
    """Per row, the pairs i < j with codes[i] > codes[j] (strict), by a bottom-up merge sort:
    at each level every element of a right half counts the larger elements of its sorted left
    half (one flat ``searchsorted`` for all rows and blocks), then the halves are merged (one
    flat sort). O(m n log^2 n) time, O(m n) memory."""
    m, n = codes.shape
    total = np.zeros(m, dtype=np.int64)
    current = codes.copy()
    position = np.arange(n)
    width = 1
    while width < n:
        block = position // (2 * width)
        right = (position // width) % 2 == 1
        n_blocks = int(block[-1]) + 1
        # Key = (row, block, code): left halves are sorted within (row, block), so the flat
        # left keys are sorted too.
        keys = (np.arange(m, dtype=np.int64)[:, None] * n_blocks + block[None, :]) * (size + 1) + current
        left_keys, right_keys = keys[:, ~right].ravel(), keys[:, right]
        block_top = right_keys - current[:, right] + size  # (row, block, largest code)
        larger = np.searchsorted(left_keys, block_top, side="right") - np.searchsorted(
            left_keys, right_keys, side="right"
        )
        total += larger.sum(axis=1)
        current = np.sort(keys, axis=1) % (size + 1)
        width *= 2
    return total


def _pair_counts(
    x: np.ndarray | Sequence[float],
    y: np.ndarray | Sequence[float],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """Per row: (pairs, tied in x, tied in y, tied in both, discordant), and whether x was 1-D."""
    x2, y2, single = _rows(x, y)
    m, n = x2.shape
    pairs = np.full(m, n * (n - 1) // 2, dtype=np.int64)
    if n <= _PAIRWISE_MAX_N:
        return (pairs, *_pairwise_counts(x2, y2), single)
    x_codes, x_size = _row_codes(x2)
    y_codes, y_size = _row_codes(y2)
    if min(x_size, y_size) <= _MAX_LEVELS:
        if x_size <= y_size:
            tied_x, tied_y, tied_both, discordant = _level_counts(x_codes, x_size, y_codes)
        else:
            tied_y, tied_x, tied_both, discordant = _level_counts(y_codes, y_size, x_codes)
        return pairs, tied_x, tied_y, tied_both, discordant, single
    # Sort each row by (x, y): a pair tied in x then has non-decreasing y, so the strict
    # inversions of y in that order are exactly the discordant pairs.
    order = np.argsort(x_codes * y_size + y_codes, axis=1, kind="stable")
    discordant = _inversions(np.take_along_axis(y_codes, order, axis=1), y_size)
    ties_x, ties_y = _tied_pairs(x_codes, x_size), _tied_pairs(y_codes, y_size)
    ties_both = _tied_pairs(x_codes * y_size + y_codes, x_size * y_size)
    return pairs, ties_x, ties_y, ties_both, discordant, single


def _pairwise_counts(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(tied in x, tied in y, tied in both, discordant) per row by comparing every pair i < j."""
    m, n = x.shape
    first, second = np.triu_indices(n, 1)
    out = np.zeros((4, m), dtype=np.int64)
    chunk = max(1, _PAIRWISE_CELLS // max(len(first), 1))
    for start in range(0, m, chunk):
        rows = slice(start, start + chunk)
        dx = x[rows][:, first] - x[rows][:, second]
        dy = y[rows][:, first] - y[rows][:, second]
        tied_x, tied_y = dx == 0, dy == 0
        out[0, rows] = tied_x.sum(axis=1)
        out[1, rows] = tied_y.sum(axis=1)
        out[2, rows] = (tied_x & tied_y).sum(axis=1)
        out[3, rows] = (np.sign(dx) * np.sign(dy) < 0).sum(axis=1)
    return out[0], out[1], out[2], out[3]


def discordant_pairs(x: np.ndarray | Sequence[float], y: np.ndarray | Sequence[float]) -> int | np.ndarray:
    """How many pairs (i, j) x and y order strictly oppositely (x_i > x_j and y_i < y_j): with
    x = achievements and y = shaped return, ``len(misranked_pairs(scores))`` without listing
    them. O(n log^2 n) per row.

    Args:
        x: (n,) or (m, n) values.
        y: Values of the same shape.

    Returns:
        An int for (n,) inputs, an (m,) array for (m, n).

    Raises:
        ValueError: Mismatched shapes or NaN values.
    """
    *_, discordant, single = _pair_counts(x, y)
    return int(discordant[0]) if single else discordant


def kendall_tau(x: np.ndarray | Sequence[float], y: np.ndarray | Sequence[float]) -> float | np.ndarray:
    """Kendall's tau-b between ``x`` and ``y``, ties handled (as ``scipy.stats.kendalltau``).

    tau-b = (concordant - discordant) / sqrt((P - ties_x) (P - ties_y)) over the P = n(n-1)/2
    pairs, where a pair tied in x or y is neither. Shapes: ``x`` and ``y`` both (n,), giving a
    float, or both (m, n), giving an (m,) array (row r of x against row r of y: e.g. bootstrap
    resamples). NaN where x or y is constant (no order to agree with) or n < 2. O(n log^2 n)
    per row, so thousands of episodes are cheap.

    Args:
        x: (n,) or (m, n) values.
        y: Values of the same shape.

    Returns:
        A float for (n,) inputs, an (m,) array for (m, n).

    Raises:
        ValueError: Mismatched shapes or NaN values.
    """
    pairs, ties_x, ties_y, ties_both, discordant, single = _pair_counts(x, y)
    concordant = pairs - ties_x - ties_y + ties_both - discordant
    denominator = np.sqrt((pairs - ties_x).astype(np.float64) * (pairs - ties_y))
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = np.where(denominator > 0, (concordant - discordant) / denominator, np.nan)
    return float(tau[0]) if single else tau


def _sorted_ranks(values: np.ndarray) -> np.ndarray:
    """Per row, 1-based ranks with ties given their average rank (as ``pandas.Series.rank``),
    from one sort of each row: a tie group spanning sorted positions [start, end] ranks
    (start + end) / 2 + 1."""
    m, n = values.shape
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    start = _group_starts(ordered)
    last = n - 1 - _group_starts(ordered[:, ::-1])[:, ::-1]
    ranks = np.empty((m, n))
    np.put_along_axis(ranks, order, (start + last) / 2.0 + 1.0, axis=1)
    return ranks


def _group_starts(ordered: np.ndarray) -> np.ndarray:
    """Per row of sorted values, the position where each value's run of equal values starts."""
    n = ordered.shape[1]
    new = np.ones(ordered.shape, dtype=bool)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    return np.maximum.accumulate(np.where(new, np.arange(n), 0), axis=1)


def _row_codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Per row, dense integer ranks (0 = smallest; equal values equal codes) and the largest
    number of distinct values in a row."""
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    new = np.zeros(ordered.shape, dtype=np.int64)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    codes = np.empty(values.shape, dtype=np.int64)
    np.put_along_axis(codes, order, np.cumsum(new, axis=1), axis=1)
    return codes, int(codes.max()) + 1


def _level_counts(
    levels: np.ndarray, n_levels: int, other: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(tied in levels, tied in other, tied in both, discordant) per row when one variable has
    few distinct values (``levels``, codes below ``n_levels``): sort each row by (other, level);
    an element's discordant partners are the elements before its run of equal ``other`` with a
    higher level, read from running per-level counts. O(m n (log n + n_levels))."""
    m, n = levels.shape
    order = np.argsort(other * n_levels + levels, axis=1, kind="stable")
    level = np.take_along_axis(levels, order, axis=1)
    value = np.take_along_axis(other, order, axis=1)
    position = np.arange(n)
    start = _group_starts(value)
    tied_other = (position - start).sum(axis=1)  # each element pairs with the earlier ones of its run
    tied_both = (position - _group_starts(value * n_levels + level)).sum(axis=1)
    counts = np.bincount((np.arange(m)[:, None] * n_levels + levels).ravel(), minlength=m * n_levels)
    tied_levels = (counts * (counts - 1) // 2).reshape(m, n_levels).sum(axis=1)
    discordant = np.zeros(m, dtype=np.int64)
    for value_level in range(n_levels - 1):
        # Per row, how many elements at earlier positions have a level above value_level; each
        # element of that level reads it at the start of its run of equal ``other``.
        above = level > value_level
        earlier: np.ndarray = np.cumsum(above, axis=1) - above
        at_start: np.ndarray = np.take_along_axis(earlier, start, axis=1)
        discordant += np.where(level == value_level, at_start, 0).sum(axis=1)
    return tied_levels, tied_other, tied_both, discordant


def _pairwise_ranks(values: np.ndarray) -> np.ndarray:
    """``_sorted_ranks`` by comparing every pair: 1 + (items below) + (other items level) / 2."""
    m, n = values.shape
    ranks = np.empty((m, n))
    chunk = max(1, _PAIRWISE_CELLS // max(n * n, 1))
    for start in range(0, m, chunk):
        block = values[start : start + chunk]
        below = (block[:, None, :] < block[:, :, None]).sum(axis=2)
        level = (block[:, None, :] == block[:, :, None]).sum(axis=2)
        ranks[start : start + chunk] = below + (level + 1) / 2.0
    return ranks


def spearman_rho(x: np.ndarray | Sequence[float], y: np.ndarray | Sequence[float]) -> float | np.ndarray:
    """Spearman's rank correlation (Pearson's r of average ranks; the number
    ``progress_agreement`` gives). Shapes as ``kendall_tau``: (n,) pairs give a float, (m, n)
    pairs an (m,) array. NaN where x or y is constant or n < 2.

    Args:
        x: (n,) or (m, n) values.
        y: Values of the same shape.

    Returns:
        A float for (n,) inputs, an (m,) array for (m, n).

    Raises:
        ValueError: Mismatched shapes or NaN values.
    """
    x2, y2, single = _rows(x, y)
    m, n = x2.shape
    if n < 2:
        rho = np.full(m, np.nan)
        return float(rho[0]) if single else rho
    if n <= _PAIRWISE_MAX_N:
        rx, ry = _pairwise_ranks(x2), _pairwise_ranks(y2)
    else:
        rx, ry = _sorted_ranks(x2), _sorted_ranks(y2)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    denominator = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(denominator > 0, (rx * ry).sum(axis=1) / denominator, np.nan)
    return float(rho[0]) if single else rho


# -- stratified bootstrap --------------------------------------------------------------------
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
    point = float(np.asarray(statistic(*[a[None, :] for a in arrays]))[0])
    rng = np.random.default_rng(seed)
    values = np.empty(reps)
    chunk = max(1, _BOOTSTRAP_CELLS // n)
    for start in range(0, reps, chunk):
        m = min(chunk, reps - start)
        index = np.empty((m, n), dtype=np.int64)
        for positions in members:
            # Each resample keeps the stratum's slots and fills them from the stratum only.
            index[:, positions] = positions[rng.integers(0, len(positions), size=(m, len(positions)))]
        values[start : start + m] = np.asarray(statistic(*[a[index] for a in arrays]), dtype=np.float64)
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return point, float("nan"), float("nan")
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return point, float(low), float(high)
