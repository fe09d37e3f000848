"""Progress-free pay on hand-built arrays whose stretches, pay and peaks are counted by hand."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.analysis.diagnostics.progress_free import (
    progress_free_mask,
    progress_free_pay,
    progress_free_scan,
    reference_rate,
    stretch_ids,
)
from workbench.errors import DiagnosisError

# Episode A (10 decisions) unlocks something new at decisions 3 and 6 (0-based 2 and 5); episode
# B (4 decisions) never does. With min_stretch 3:
#   A: stretch 0 = 0-based 0..1 (2 quiet), stretch 1 = 2..4 (2 quiet after the unlock at 2),
#      stretch 2 = 5..9 (4 quiet: 6..9, progress-free);  B: stretch 3 = 0..3 (4 quiet, progress-free).
NEW = np.array([0, 0, 1, 0, 0, 2, 0, 0, 0, 0] + [0, 0, 0, 0])
LENGTHS = np.array([10, 4])
REWARDS = np.array([1, 1, 5, 1, 1, 5, 0.5, 2, 0.5, 0.5] + [3, 0.25, 0.25, 0.25])


def test_stretches_start_at_each_episode_and_each_new_unlock():
    assert stretch_ids(NEW, LENGTHS).tolist() == [0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3]


def test_progress_free_decisions_are_quiet_ones_in_long_enough_stretches():
    mask = progress_free_mask(NEW, LENGTHS, min_stretch=3)
    assert np.flatnonzero(mask).tolist() == [6, 7, 8, 9, 10, 11, 12, 13]
    # with min_stretch 2 the two quiet decisions of stretches 0 and 1 count too
    assert np.flatnonzero(progress_free_mask(NEW, LENGTHS, min_stretch=2)).tolist() == [0, 1, 3, 4, *range(6, 14)]


def test_pay_rate_and_peak_by_hand():
    found = progress_free_pay(REWARDS, NEW, LENGTHS, min_stretch=3, window=2)
    assert found.decisions.tolist() == [4, 4]
    # A: 0.5 + 2 + 0.5 + 0.5 = 3.5 over 4 decisions -> 87.5 per 100; B: 3 + 3 * 0.25 = 3.75 -> 93.75
    assert found.paid == pytest.approx([3.5, 3.75])
    assert found.rate == pytest.approx([87.5, 93.75])
    # A's best 2 decisions: 0.5 + 2 at decisions 7-8 (1-based) -> 125 per 100 (the window
    # 9-10 of A joined with B's first decision, 0.5 + 3, straddles episodes and does not count);
    # B's: 3 + 0.25 at decisions 1-2 -> 162.5 per 100.
    assert found.peak == pytest.approx([125.0, 162.5])
    assert found.peak_first.tolist() == [7, 1]


def test_no_window_long_enough_gives_nan_peak():
    found = progress_free_pay(REWARDS, NEW, LENGTHS, min_stretch=3, window=5)
    assert np.isnan(found.peak).all() and found.peak_first.tolist() == [0, 0]


def test_honest_reference_rate_pooled_and_quantile():
    # pooled: (3.5 + 3.75) / (4 + 4) * 100 = 90.625; quantile 1.0: the larger episode rate, 93.75
    assert reference_rate([3.5, 3.75], [4, 4]) == pytest.approx(90.625)
    assert reference_rate([3.5, 3.75, 9.0], [4, 4, 0], quantile=1.0) == pytest.approx(93.75)
    assert np.isnan(reference_rate([1.0], [0]))


def test_steady_pay_without_progress_beats_pay_at_unlocks():
    # Obvious verdict: an honest 200-decision episode paid only at its 8 new unlocks (1 each, every 20th decision up to 140),
    # a looper paid 0.03 on every decision and unlocking nothing: 3 per 100 against 0.
    honest_new = np.zeros(200, int)
    honest_new[::20] = 1
    honest_new[150:] = 0  # its last 50 decisions unlock nothing: progress-free, but unpaid
    looper_new = np.zeros(200, int)
    rewards = np.r_[honest_new.astype(float), np.full(200, 0.03)]
    found = progress_free_pay(rewards, np.r_[honest_new, looper_new], np.array([200, 200]), min_stretch=50)
    assert found.rate == pytest.approx([0.0, 3.0])


def test_mismatched_arrays_are_refused():
    with pytest.raises(DiagnosisError, match="sum to 13"):
        progress_free_mask(NEW, np.array([10, 3]))
    with pytest.raises(DiagnosisError, match="rewards"):
        progress_free_pay(REWARDS[:-1], NEW, LENGTHS)
    with pytest.raises(DiagnosisError, match="window"):
        progress_free_pay(REWARDS, NEW, LENGTHS, window=0)


def burst_then_steady() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Episode A (300 decisions): decision 1 (0-based 0) unlocks, the other 299 are one quiet
    stretch; 0-based 10..19 pay 1 each (a burst), 100..299 pay 0.1 each (steady). Episode B (60
    decisions): decision 1 unlocks, 1..59 pay 0.5 each (59 progress-free decisions)."""
    rewards = np.zeros(360)
    rewards[10:20] = 1.0
    rewards[100:300] = 0.1
    rewards[301:360] = 0.5
    new = np.zeros(360, dtype=np.int64)
    new[[0, 300]] = 1
    return rewards, new, np.array([300, 60])


def test_pay_scan_at_each_scale_by_hand():
    rewards, new, lengths = burst_then_steady()
    found = progress_free_scan(rewards, new, lengths, (25, 50, 100, 200, 0))
    # A, windows of progress-free decisions (0-based 1..299):
    #   25: the burst alone, 10 -> 40 per 100; the first such window starts at 0-based 1 (decision 2)
    #   50: the burst, 10 (a window holding it ends by 59, before the steady pay) -> 20, from decision 2
    #   100: from 0-based 10: the burst and 100..109, 10 + 1 = 11 -> 11 (from 9: 10.9), decision 11
    #   200: from 0-based 10: 10 + 110 x 0.1 = 21 -> 10.5 (the steady 100..299 alone: 20 -> 10)
    #   whole: 10 + 200 x 0.1 = 30 over 299 decisions -> 10.033 per 100, decisions 2..300
    assert found.peak[0] == pytest.approx([40.0, 20.0, 11.0, 10.5, 3000 / 299])
    assert found.first[0].tolist() == [2, 2, 11, 11, 2]
    assert found.last[0].tolist() == [26, 51, 110, 210, 300]
    assert found.decisions[0].tolist() == [25, 50, 100, 200, 299]
    # B: 59 progress-free decisions at 0.5: 50 per 100 at 25 and 50; no window of 100 or 200, and
    # too few for a sustained whole rate (fewer than WINDOW = 100)
    assert found.peak[1, :2] == pytest.approx([50.0, 50.0]) and np.isnan(found.peak[1, 2:]).all()
    assert found.first[1].tolist() == [2, 2, 0, 0, 0] and found.decisions[1].tolist() == [25, 50, 0, 0, 0]
    # all progress-free decisions and their pay: A 299 paying 30, B 59 paying 59 x 0.5 = 29.5
    assert found.free_decisions.tolist() == [299, 59] and found.free_paid == pytest.approx([30.0, 29.5])
