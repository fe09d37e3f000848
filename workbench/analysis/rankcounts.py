"""Kendall's tau-b and Spearman's rho of bootstrap resamples from how often each resample holds each item: no sort per resample.

A bootstrap resample of n paired items (x_i, y_i) is, for a statistic that reads only order and
ties, the same as the n items weighted by how many times the resample drew each: ``weights``,
(m, n) counts, each row summing to n (``bootstrap.Weighted`` hands a statistic these). The items
are grouped by their (x, y) pair and sorted once for all rows; then per row the ties are sums over
runs of equal codes, the discordant pairs are the weighted strict inversions of one code in the
order of the other (counted by halving its range: log2(levels) passes over the pairs), and the
average ranks are running sums of the counts. O(m n log(levels)) with no sort per row, against a
sort (or two) and gathers of every resample. Every count is an exact integer and every sum of
centred ranks an exact multiple of 1/4 in float64, so each statistic is the same float
``rankstats.kendall_tau`` / ``spearman_rho`` give on the resampled arrays, bit for bit (tested).
"""

from __future__ import annotations

import numpy as np

__all__ = ["kendall_tau_weighted", "rho_of_sums", "spearman_rho_weighted", "tau_b", "weighted_pair_counts"]

#: The most items the weighted path takes: the sums of products of centred ranks and counts (below
#: n^3 / 4) stay exact multiples of 1/4 in float64, and the pair counts fit in int64.
MAX_ITEMS = 100_000


def tau_b(
    pairs: np.ndarray, tied_x: np.ndarray, tied_y: np.ndarray, tied_both: np.ndarray, discordant: np.ndarray
) -> np.ndarray:
    """Kendall's tau-b from its pair counts: (concordant - discordant) / sqrt((P - ties_x) (P - ties_y)),
    a pair tied in x or y being neither; NaN where x or y is constant.

    Args:
        pairs: (m,) the pairs P = n (n - 1) / 2 of each row.
        tied_x: (m,) pairs tied in x.
        tied_y: (m,) pairs tied in y.
        tied_both: (m,) pairs tied in both.
        discordant: (m,) pairs ordered oppositely.

    Returns:
        (m,) float64.
    """
    concordant = pairs - tied_x - tied_y + tied_both - discordant
    denominator = np.sqrt((pairs - tied_x).astype(np.float64) * (pairs - tied_y))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, (concordant - discordant) / denominator, np.nan)


def rho_of_sums(sum_xx: np.ndarray, sum_yy: np.ndarray, sum_xy: np.ndarray) -> np.ndarray:
    """Spearman's rho (Pearson's r of the average ranks) from the sums of the centred ranks'
    squares and products; NaN where x or y is constant.

    Args:
        sum_xx: (m,) sum of (rank of x - mean)^2.
        sum_yy: (m,) the same of y.
        sum_xy: (m,) sum of the products.

    Returns:
        (m,) float64.
    """
    denominator = np.sqrt(sum_xx * sum_yy)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, sum_xy / denominator, np.nan)


def weighted_pair_counts(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per row of ``weights``: (pairs, tied in x, tied in y, tied in both, discordant) of the
    items each weighted by its count, as ``rankstats`` counts them on the resampled arrays.

    Args:
        weights: (m, n) non-negative integer counts, each row summing to the same total.
        x: (n,) the items' values (anything ``np.unique`` orders).
        y: (n,) values.

    Returns:
        Five (m,) int64 arrays.
    """
    weights = _checked(weights, x, y)
    total = int(weights[0].sum()) if len(weights) else 0
    x_codes, y_codes = _dense(x), _dense(y)
    x_size, y_size = int(x_codes.max()) + 1, int(y_codes.max()) + 1
    swap = y_size > x_size  # the inner code is the one with fewer levels: fewer halvings
    outer, inner = (y_codes, x_codes) if swap else (x_codes, y_codes)
    inner_size = min(x_size, y_size)
    keys, item_pair = np.unique(outer * inner_size + inner, return_inverse=True)  # pairs by (outer, inner)
    counts = _grouped(weights, item_pair.reshape(-1))
    pair_outer, pair_inner = keys // inner_size, keys % inner_size
    tied_both = _tied(counts)
    tied_outer = _tied(_grouped(counts, pair_outer))
    tied_inner = _tied(_grouped(counts, pair_inner))
    discordant = _weighted_inversions(counts, pair_inner, inner_size)
    tied_x, tied_y = (tied_inner, tied_outer) if swap else (tied_outer, tied_inner)
    pairs = np.full(len(weights), total * (total - 1) // 2, dtype=np.int64)
    return pairs, tied_x, tied_y, tied_both, discordant


def kendall_tau_weighted(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row's weighted items: ``rankstats.kendall_tau`` of the resample.

    Args:
        weights: (m, n) counts of the items in each resample.
        x: (n,) the items' values.
        y: (n,) values.

    Returns:
        (m,) float64.
    """
    return tau_b(*weighted_pair_counts(weights, x, y))


def spearman_rho_weighted(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row's weighted items: ``rankstats.spearman_rho`` of the resample
    (the same sums, exact: see the module).

    Args:
        weights: (m, n) counts of the items in each resample.
        x: (n,) the items' values.
        y: (n,) values.

    Returns:
        (m,) float64.
    """
    weights = _checked(weights, x, y)
    total = int(weights[0].sum()) if len(weights) else 0
    if total < 2:
        return np.full(len(weights), np.nan)
    # In doubled ranks (integers): 2 (average rank - (n + 1) / 2) = 2 start + t - n for a code
    # with t items after ``start`` smaller ones; each sum is an exact integer, 4x the float sum.
    sums = []
    doubled = []
    for codes in (_dense(x), _dense(y)):
        totals = _grouped(weights, codes)
        twice = np.cumsum(totals, axis=1)
        twice *= 2
        twice -= totals
        twice -= total
        sums.append(np.einsum("ij,ij->i", totals * twice, twice) / 4.0)
        doubled.append(twice if len(codes) == twice.shape[1] and _is_identity(codes) else twice[:, codes])
    sum_xy = np.einsum("ij,ij->i", weights * doubled[0], doubled[1]) / 4.0
    return rho_of_sums(sums[0], sums[1], sum_xy)


def _checked(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``weights`` as (m, n) int64, checked against the (n,) items."""
    weights = np.atleast_2d(np.asarray(weights)).astype(np.int64, copy=False)
    n = weights.shape[1]
    if np.shape(x) != (n,) or np.shape(y) != (n,):
        raise ValueError(
            f"weights (m, n) need x and y of shape (n,); got {weights.shape}, {np.shape(x)}, {np.shape(y)}"
        )
    if not 1 <= n <= MAX_ITEMS:
        raise ValueError(f"the weighted rank statistics take 1 to {MAX_ITEMS} items, got {n}")
    for values in (x, y):
        if np.asarray(values).dtype.kind == "f" and np.isnan(values).any():
            raise ValueError("x and y must not hold NaN (a rank of NaN is undefined)")
    return weights


def _is_identity(codes: np.ndarray) -> bool:
    """Whether ``codes`` are 0, 1, ..., n - 1 in order."""
    return bool((codes == np.arange(len(codes))).all())


def _dense(values: np.ndarray) -> np.ndarray:
    """Dense codes of (n,) values: 0 for the smallest, equal values equal codes."""
    return np.unique(np.asarray(values), return_inverse=True)[1].reshape(-1).astype(np.int64)


def _grouped(weights: np.ndarray, group: np.ndarray) -> np.ndarray:
    """(m, g): per row, the weights of the columns summed by ``group`` (a code per column), one
    column per distinct code, in code order."""
    order = None if (np.diff(group) >= 0).all() else np.argsort(group, kind="stable")
    ordered = group if order is None else group[order]
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
    columns = weights if order is None else weights[:, order]
    if len(starts) == len(ordered):  # every group one column
        return columns
    return np.add.reduceat(columns, starts, axis=1)


def _tied(totals: np.ndarray) -> np.ndarray:
    """Per row, the pairs within each group of ``totals`` (t (t - 1) / 2 summed), int64."""
    return (totals * (totals - 1)).sum(axis=1) // 2


def _weighted_inversions(counts: np.ndarray, levels: np.ndarray, size: int) -> np.ndarray:
    """Per row of ``counts`` (m, k), the pairs of columns i < j with levels[i] > levels[j],
    weighted by the counts: split the levels' range at its middle; every upper column before a
    lower one pairs with it (a running sum of the upper counts, read at each lower column), then
    the same within each half (their orders kept). log2(size) rounds, each over k columns."""
    total = np.zeros(len(counts), dtype=np.int64)
    work = [(counts, levels, 0, size)]
    while work:
        columns, level, low, high = work.pop()
        if high - low < 2 or len(level) < 2:
            continue
        middle = (low + high) // 2
        upper = level >= middle
        up_at, down_at = np.flatnonzero(upper), np.flatnonzero(~upper)
        if not len(up_at) or not len(down_at):
            work.append((columns, level, low, middle) if not len(up_at) else (columns, level, middle, high))
            continue
        up, down = columns[:, up_at], columns[:, down_at]
        before = np.searchsorted(up_at, down_at)  # upper columns ahead of each lower one
        after = before > 0
        if after.any():
            running = np.cumsum(up, axis=1)
            total += np.einsum("ij,ij->i", down[:, after], running[:, before[after] - 1])
        work.append((down, level[down_at], low, middle))
        work.append((up, level[up_at], middle, high))
    return total
