"""``rankcounts``: Kendall's tau-b and Spearman's rho of a resample read from its counts of the
items are the same floats as the statistics of the resampled arrays (what ``diagnose``'s
alignment bootstrap now evaluates), and ``bootstrap.Weighted`` gives the same intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.analysis.bootstrap import Weighted, bootstrap_intervals
from workbench.analysis.rankcounts import kendall_tau_weighted, spearman_rho_weighted, weighted_pair_counts
from workbench.analysis.rankstats import bootstrap_interval, kendall_tau, spearman_rho


def test_a_hand_counted_resample():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])
    # Every item once: pairs (a,b) concordant, (a,c) concordant, (b,c) discordant (x up, y down):
    # tau = (2 - 1) / sqrt(3 * 3) = 1/3.
    # Item a twice and b once (resample a, a, b): 3 pairs, (a,a) tied in both, (a,b) twice
    # concordant: tau = (2 - 0) / sqrt((3 - 1) * (3 - 1)) = 1.
    weights = np.array([[1, 1, 1], [2, 1, 0]])
    pairs, tied_x, tied_y, tied_both, discordant = weighted_pair_counts(weights, x, y)
    assert pairs.tolist() == [3, 3] and discordant.tolist() == [1, 0]
    assert tied_x.tolist() == tied_y.tolist() == tied_both.tolist() == [0, 1]
    assert kendall_tau_weighted(weights, x, y).tolist() == pytest.approx([1 / 3, 1.0], abs=1e-15)
    # Spearman of (1, 2, 3) and (1, 3, 2): 1 - 6 * (0 + 1 + 1) / (3 * 8) = 0.5. Of a, a, b: the
    # ranks are (1.5, 1.5, 3) in both, so rho = 1.
    assert spearman_rho_weighted(weights, x, y).tolist() == pytest.approx([0.5, 1.0], abs=1e-15)
    # a resample of one item repeated: no order to agree with
    assert math.isnan(kendall_tau_weighted(np.array([[3, 0, 0]]), x, y)[0])
    assert math.isnan(spearman_rho_weighted(np.array([[0, 0, 3]]), x, y)[0])


@pytest.mark.parametrize("n", [12, 48, 49, 300])  # every pair compared (n <= 48), and the sorting paths
@pytest.mark.parametrize("levels", [(3, 7), (40, 300), (300, 300)])  # per-level counts, then merge sort
def test_counts_give_exactly_the_statistics_of_the_resampled_arrays(n, levels):
    rng = np.random.default_rng(n * 1000 + levels[0])
    x = rng.integers(0, levels[0], n) * 0.5  # ties in both
    y = rng.integers(0, levels[1], n).astype(np.float64) - 10.0
    index = rng.integers(0, n, (25, n))
    index[0] = np.arange(n)  # the data as given
    index[1] = 0  # one item only: NaN
    weights = np.stack([np.bincount(row, minlength=n) for row in index])
    for weighted, plain in ((kendall_tau_weighted, kendall_tau), (spearman_rho_weighted, spearman_rho)):
        expected = plain(x[index], y[index])
        got = weighted(weights, x, y)
        assert np.array_equal(got, expected, equal_nan=True)  # the same floats, not approximately
        assert np.array_equal(weighted(weights, y, x), plain(y[index], x[index]), equal_nan=True)


@pytest.mark.parametrize("repeated", [False, True])  # every item distinct, or many items equal in every array
def test_weighted_bootstraps_equal_plain_ones(repeated):
    rng = np.random.default_rng(11)
    returns, achievements, other = rng.normal(size=400), rng.integers(0, 9, 400), rng.integers(0, 120, 400)
    if repeated:  # 20 distinct episodes, each 20 times (the bootstrap counts each once, weighted)
        returns, achievements, other = (np.repeat(a[:20], 20) for a in (returns, achievements, other))
    strata = rng.integers(0, 3, 400)
    found = bootstrap_intervals(
        {
            "kendall": Weighted(lambda w, r, a, o: kendall_tau_weighted(w, r, a)),
            "spearman": Weighted(lambda w, r, a, o: spearman_rho_weighted(w, r, o)),
            "mean": lambda r, a, o: r.mean(axis=1),  # a plain statistic beside them
        },
        [returns, achievements, other],
        strata,
        reps=300,
        seed=5,
    )
    assert found["kendall"] == bootstrap_interval(kendall_tau, [returns, achievements], strata, reps=300, seed=5)
    assert found["spearman"] == bootstrap_interval(spearman_rho, [returns, other], strata, reps=300, seed=5)
    assert found["mean"] == bootstrap_interval(lambda r: r.mean(axis=1), [returns], strata, reps=300, seed=5)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="shape"):
        kendall_tau_weighted(np.ones((2, 3), np.int64), np.arange(3.0), np.arange(4.0))
    with pytest.raises(ValueError, match="NaN"):
        spearman_rho_weighted(np.ones((1, 2), np.int64), np.array([1.0, float("nan")]), np.arange(2.0))
