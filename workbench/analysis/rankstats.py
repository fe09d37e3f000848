"""Rank statistics of paired samples and a stratified bootstrap, in numpy, many samples at once.

``kendall_tau`` (tau-b), ``spearman_rho`` and ``discordant_pairs`` take two (n,) arrays, or two
(m, n) arrays of m samples (rows) at once, which is how ``bootstrap_interval`` (from
``analysis.bootstrap``, importable here) evaluates its resamples. Each picks its algorithm by size: every pair compared directly for a few dozen items
(bootstraps of a small corpus); for more, one sort per row, then per-level counts when one
variable has few distinct values (achievements unlocked: at most 23), else a merge sort. The
tests check all paths against each other and against the definition.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.analysis.bootstrap import MAX_REPS, bootstrap_interval, bootstrap_intervals
from workbench.analysis.rankcounts import rho_of_sums, tau_b

__all__ = [
    "MAX_REPS",
    "bootstrap_interval",
    "bootstrap_intervals",
    "discordant_pairs",
    "kendall_tau",
    "rank_codes",
    "spearman_rho",
]

#: Up to this many items per row, rank statistics compare all pairs directly (n^2 cells per
#: row, few numpy calls: fastest for bootstraps of a few dozen episodes); above, they sort.
_PAIRWISE_MAX_N = 48
#: Above this many items, Kendall's tau counts pairs per level of the variable with fewer distinct
#: values (achievements: at most 23) when it has at most this many; else by merge sort.
_MAX_LEVELS = 64
#: Pairwise cells (rows x n x n) held at once.
_PAIRWISE_CELLS = 1 << 21


# -- rank correlations (one pair of samples, or many rows of them at once) -------------------
def rank_codes(values: np.ndarray | Sequence[float]) -> np.ndarray:
    """Order-preserving dense codes of ``values``: 0 for the smallest, equal values equal codes,
    in 16 bits when they fit. Every rank statistic here gives exactly the same result on the codes
    as on the values (they read only order and ties), and numpy sorts 16-bit integers by radix,
    ~15x faster than floats: give a bootstrap of a rank statistic the codes.

    Args:
        values: (n,) values.

    Returns:
        (n,) int16 codes (int64 when there are more than 32,767 distinct values).

    Raises:
        ValueError: ``values`` holds NaN or is not 1-D.
    """
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"rank_codes takes (n,) values, got shape {array.shape}")
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise ValueError("values must not hold NaN (a rank of NaN is undefined)")
    distinct, codes = np.unique(array, return_inverse=True)
    return codes.astype(np.int16 if len(distinct) <= _SMALL_CODES else np.int64).reshape(-1)


#: The most distinct values ``rank_codes`` keeps in 16 bits (their differences fit too).
_SMALL_CODES = np.iinfo(np.int16).max


def _rows(x: np.ndarray | Sequence[float], y: np.ndarray | Sequence[float]) -> tuple[np.ndarray, np.ndarray, bool]:
    """x and y as (m, n) arrays of the same shape (a 1-D pair is one row) and whether they were
    1-D: float64, except 16-bit codes (``rank_codes``), which stay as they are."""
    x, y = np.asarray(x), np.asarray(y)
    if not (x.dtype == y.dtype == np.int16):
        x, y = x.astype(np.float64, copy=False), y.astype(np.float64, copy=False)
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
        return (pairs, *_pairwise_counts(x2.astype(np.float64), y2.astype(np.float64)), single)
    x_codes, x_size = _codes(x2)
    y_codes, y_size = _codes(y2)
    if min(x_size, y_size) <= _MAX_LEVELS:
        if x_size <= y_size:
            tied_x, tied_y, tied_both, discordant = _level_counts(x_codes, x_size, y_codes)
        else:
            tied_y, tied_x, tied_both, discordant = _level_counts(y_codes, y_size, x_codes)
        return pairs, tied_x, tied_y, tied_both, discordant, single
    # Sort each row by (x, y): a pair tied in x then has non-decreasing y, so the strict
    # inversions of y in that order are exactly the discordant pairs.
    order = _order_by(x_codes, x_size, y_codes, y_size)
    discordant = _inversions(np.take_along_axis(y_codes, order, axis=1), y_size)
    ties_x, ties_y = _tied_pairs(x_codes, x_size), _tied_pairs(y_codes, y_size)
    ties_both = _tied_pairs(x_codes * y_size + y_codes, x_size * y_size)
    return pairs, ties_x, ties_y, ties_both, discordant, single


def _order_by(major: np.ndarray, major_size: int, minor: np.ndarray, minor_size: int) -> np.ndarray:
    """Per row, the stable order by (major, minor) codes: ``np.argsort(major * minor_size +
    minor, kind="stable")``. A stable sort's order is unique, so when both fit in 16 bits it is
    found as two stable 16-bit sorts (numpy sorts those by radix, ~2x faster than one of int64):
    by minor, then by major."""
    if max(major_size, minor_size) > _SMALL_CODES:
        return np.argsort(major * minor_size + minor, axis=1, kind="stable")
    by_minor = np.argsort(minor.astype(np.int16), axis=1, kind="stable")
    major_then = np.take_along_axis(major.astype(np.int16), by_minor, axis=1)
    return np.take_along_axis(by_minor, np.argsort(major_then, axis=1, kind="stable"), axis=1)


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
    per row, so thousands of episodes are cheap. (A bootstrap reads its resamples' counts of the
    episodes instead: ``rankcounts.kendall_tau_weighted``, the same floats without a sort each.)

    Args:
        x: (n,) or (m, n) values.
        y: Values of the same shape.

    Returns:
        A float for (n,) inputs, an (m,) array for (m, n).

    Raises:
        ValueError: Mismatched shapes or NaN values.
    """
    *counts, single = _pair_counts(x, y)
    tau = tau_b(*counts)
    return float(tau[0]) if single else tau


def _sorted_ranks(values: np.ndarray) -> np.ndarray:
    """Per row, 1-based ranks with ties given their average rank (as ``pandas.Series.rank``),
    from one sort of each row: a tie group spanning sorted positions [start, end] ranks
    (start + end) / 2 + 1."""
    m, n = values.shape
    if values.dtype == np.int16 and values.min() >= 0 and int(values.max()) < 4 * n:
        return _counted_ranks(values)
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    start = _group_starts(ordered)
    last = n - 1 - _group_starts(ordered[:, ::-1])[:, ::-1]
    ranks = np.empty((m, n))
    np.put_along_axis(ranks, order, (start + last) / 2.0 + 1.0, axis=1)
    return ranks


def _counted_ranks(codes: np.ndarray) -> np.ndarray:
    """``_sorted_ranks`` of small non-negative integer codes without a sort: per row, how many
    values are below each code (start) and equal to it (last = start + count - 1), counted."""
    m, n = codes.shape
    size = int(codes.max()) + 1
    counts = np.bincount(_row_keys(codes.astype(np.int64), size).ravel(), minlength=m * size).reshape(m, size)
    start = np.cumsum(counts, axis=1) - counts
    average = (start + (start + counts - 1)) / 2.0 + 1.0
    return np.take_along_axis(average, codes.astype(np.intp), axis=1)


def _group_starts(ordered: np.ndarray) -> np.ndarray:
    """Per row of sorted values, the position where each value's run of equal values starts."""
    n = ordered.shape[1]
    new = np.ones(ordered.shape, dtype=bool)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    return np.maximum.accumulate(np.where(new, np.arange(n), 0), axis=1)


def _codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Per row, integer codes with the values' order and ties, and a bound on them: 16-bit
    ``rank_codes`` as they are (pair counts need order, not dense codes: no sort per row), other
    values by ``_row_codes``."""
    if values.dtype == np.int16 and values.min() >= 0:
        return values.astype(np.int64), int(values.max()) + 1
    return _row_codes(values)


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
    an element's discordant partners are the elements before it (before its run of equal
    ``other``) with a higher level, read from running per-level counts. O(m n (log n + n_levels))."""
    m, n = levels.shape
    order = _order_by(other, int(other.max()) + 1 if other.size else 1, levels, n_levels)
    level = np.take_along_axis(levels, order, axis=1)
    value = np.take_along_axis(other, order, axis=1)
    position = np.arange(n)
    start = _group_starts(value)
    tied_other = (position - start).sum(axis=1)  # each element pairs with the earlier ones of its run
    tied_both = (position - _group_starts(value * n_levels + level)).sum(axis=1)
    counts = np.bincount((np.arange(m)[:, None] * n_levels + levels).ravel(), minlength=m * n_levels)
    tied_levels = (counts * (counts - 1) // 2).reshape(m, n_levels).sum(axis=1)
    discordant = np.zeros(m, dtype=np.int64)
    # Within a run of equal ``other`` the levels ascend, so an element's earlier elements of a
    # higher level all lie before its run: the discordant pairs are the level sequence's strict
    # inversions. Per level, each element of it counts the earlier elements above it (in the
    # narrowest integers that hold the levels and the counts: these passes are the sort's cost).
    small = level.astype(np.int8)  # levels below _MAX_LEVELS
    running = np.int16 if n <= np.iinfo(np.int16).max else np.int64
    for value_level in range(n_levels - 1):
        above = np.cumsum(small > value_level, axis=1, dtype=running)
        discordant += np.where(small == value_level, above, 0).sum(axis=1, dtype=np.int64)
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
        rx, ry = _pairwise_ranks(x2.astype(np.float64)), _pairwise_ranks(y2.astype(np.float64))
    else:
        rx, ry = _sorted_ranks(x2), _sorted_ranks(y2)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    rho = rho_of_sums((rx * rx).sum(axis=1), (ry * ry).sum(axis=1), (rx * ry).sum(axis=1))
    return float(rho[0]) if single else rho
