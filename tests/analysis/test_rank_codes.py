"""``rank_codes``: rank statistics and their bootstraps give exactly the same numbers on the
16-bit codes as on the values (what ``diagnose``'s alignment intervals now resample)."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.analysis.bootstrap import bootstrap_intervals
from workbench.analysis.rankstats import bootstrap_interval, kendall_tau, rank_codes, spearman_rho


def test_codes_keep_order_and_ties():
    values = np.array([2.5, -1.0, 2.5, 7.0, -1.0, 0.0])
    # by hand: -1.0 -> 0, 0.0 -> 1, 2.5 -> 2, 7.0 -> 3
    assert rank_codes(values).tolist() == [2, 0, 2, 3, 0, 1]
    assert rank_codes(values).dtype == np.int16
    assert rank_codes(np.arange(40_000.0)).dtype == np.int64  # too many distinct values for 16 bits
    with pytest.raises(ValueError, match="NaN"):
        rank_codes([1.0, float("nan")])


@pytest.mark.parametrize("n", [30, 400])  # every pair compared (n <= 48), and the sorting paths
@pytest.mark.parametrize("levels", [5, 100_000])  # few distinct achievements, or near-continuous
def test_bootstraps_on_codes_equal_bootstraps_on_values(n, levels):
    rng = np.random.default_rng(7)
    returns = np.round(rng.normal(size=n), 1)  # ties among returns too
    progress = rng.integers(0, levels, size=n).astype(np.float64)
    strata = rng.integers(0, 3, size=n)
    for statistic in (kendall_tau, spearman_rho):
        on_values = bootstrap_interval(statistic, [returns, progress], strata, reps=300, seed=1)
        on_codes = bootstrap_interval(statistic, [rank_codes(returns), rank_codes(progress)], strata, reps=300, seed=1)
        assert on_codes == on_values  # exactly: the statistics read only order and ties
        assert statistic(rank_codes(returns), rank_codes(progress)) == statistic(returns, progress)


def test_intervals_from_shared_resamples_equal_one_bootstrap_each():
    rng = np.random.default_rng(3)
    returns, a, b = rng.normal(size=200), rng.integers(0, 6, 200), rng.normal(size=200)
    strata = rng.integers(0, 4, 200)
    statistics = {
        "a/kendall": lambda r, x, y: kendall_tau(r, x),
        "b/spearman": lambda r, x, y: spearman_rho(r, y),
        "mean": lambda r, x, y: r.mean(axis=1),
    }
    found = bootstrap_intervals(statistics, [returns, a, b], strata, reps=500, seed=4, confidence=0.9)
    assert found["a/kendall"] == bootstrap_interval(kendall_tau, [returns, a], strata, reps=500, seed=4, confidence=0.9)
    assert found["b/spearman"] == bootstrap_interval(
        spearman_rho, [returns, b], strata, reps=500, seed=4, confidence=0.9
    )
    mean = bootstrap_interval(lambda r: r.mean(axis=1), [returns], strata, reps=500, seed=4, confidence=0.9)
    assert found["mean"] == mean
