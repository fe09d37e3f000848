"""Logged counts and inventory disagreements, taken a whole episode at once, against the per-decision loops they replace.

The references below are the import's earlier code (one numpy row a decision), kept as an
independent computation: both must give the same counts, reasons and decisions on random logs,
consistent ones (the exact rebuild) and broken ones (every refusal) alike.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.reward_rule import logs_rises
from workbench.data.importers.counts import inventory_disagreements, logged_counts

_ACHIEVEMENT = {name: k for k, name in enumerate(ACHIEVEMENTS)}


def _is_rise(delta: Any) -> bool:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)):
        return False
    return math.isfinite(delta) and delta == int(delta) and 0 < delta <= 2**31 - 1


def _reference_logged_counts(
    status: np.ndarray, stepwise: Sequence[Mapping[str, Any] | None], start: np.ndarray | None = None
) -> tuple[np.ndarray | None, str]:
    """The per-decision loop the import ran before it summed the rises in one pass."""
    n = len(stepwise)
    if n == 0 or not all(logs_rises(s) for s in stepwise):
        return None, "not every decision logged a per_achievement info.stepwise"
    counts = np.zeros((n + 1, len(ACHIEVEMENTS)), dtype=np.int64)
    for i, logged in enumerate(stepwise, start=1):
        deltas = logged.get("achievement_count_deltas") or {}  # type: ignore[union-attr]
        if not isinstance(deltas, Mapping):
            return None, f"decision {i}: achievement_count_deltas is not an object"
        before = counts[i - 1] if (i > 1 or start is None) else start
        row = before.copy()
        if i == 1 and start is not None:
            # Not risen above the previous end: 0 if locked, else pinned only by an end of 1.
            row = np.where(status[1], 1, 0)
            ambiguous = status[1] & (start > 1)
        else:
            ambiguous = np.zeros(len(ACHIEVEMENTS), dtype=bool)
        for name, delta in deltas.items():
            if name not in _ACHIEVEMENT or not _is_rise(delta):
                return (
                    None,
                    f"decision {i}: achievement_count_deltas has {name!r}: {delta!r} (a positive rise of a Crafter achievement expected)",
                )
            k = _ACHIEVEMENT[name]
            row[k] = before[k] + int(delta)
            ambiguous[k] = False
        if ambiguous.any():
            names = [ACHIEVEMENTS[k] for k in np.flatnonzero(ambiguous)]
            return None, f"decision {i} follows another episode's end and does not pin the counts of {names}"
        counts[i] = row
    disagree = np.flatnonzero(((counts > 0) != status).any(axis=1))
    if disagree.size:
        return None, f"the logged rises disagree with the observed achievements at state {int(disagree[0])}"
    return counts, "rebuilt exactly from the rises logged in info.stepwise.achievement_count_deltas"


def _reference_disagreements(inventory: np.ndarray, stepwise: Sequence[Mapping[str, Any] | None]) -> list[int]:
    """The per-decision loop the import ran before the changes were taken at once."""
    bad = []
    for i, logged in enumerate(stepwise, start=1):
        if not isinstance(logged, Mapping) or not logs_rises(logged):
            continue
        seen = {
            INVENTORY_ITEMS[k]: int(d) for k, d in enumerate(inventory[i].astype(np.int64) - inventory[i - 1]) if d > 0
        }
        deltas = logged.get("inventory_deltas") or {}
        try:
            logged_rises = {str(k): int(v) for k, v in deltas.items()} if isinstance(deltas, Mapping) else None
        except (TypeError, ValueError, OverflowError):
            logged_rises = None
        if logged_rises != seen:
            bad.append(i)
    return bad


def _consistent(rng: random.Random) -> tuple[np.ndarray, list[Any], np.ndarray | None]:
    """A per_achievement log whose rises agree with the status (sometimes one status flipped)."""
    n = rng.randint(1, 10)
    start = None if rng.random() < 0.5 else np.array([rng.choice([0, 0, 1, 2, 5]) for _ in ACHIEVEMENTS])
    counts = np.zeros((n + 1, len(ACHIEVEMENTS)), dtype=np.int64)
    if start is not None:
        counts[0] = start
    stepwise = []
    for i in range(1, n + 1):
        deltas = {rng.choice(ACHIEVEMENTS): rng.randint(1, 3) for _ in range(rng.randint(0, 2))}
        counts[i] = counts[i - 1]
        for name, rise in deltas.items():
            counts[i, _ACHIEVEMENT[name]] += rise
        stepwise.append({"strategy": "per_achievement", "achievement_count_deltas": deltas})
    status = counts > 0
    if rng.random() < 0.2:
        status[rng.randint(0, n), rng.randint(0, len(ACHIEVEMENTS) - 1)] ^= True
    return status, stepwise, start


def _junk(rng: random.Random) -> dict[str, Any] | None:
    """One decision's log of any shape: other strategies, bad names, odd rises, odd types."""
    if rng.random() < 0.05:
        return None
    logged: dict[str, Any] = {"strategy": rng.choice(["per_achievement", "per_achievement", "consistent", 3])}
    if rng.random() < 0.7:
        deltas = {
            rng.choice([*ACHIEVEMENTS, "bogus"]): rng.choice([1, 2, 1.0, 0, -1, 2.5, True, "1"])
            for _ in range(rng.randint(0, 3))
        }
        logged["achievement_count_deltas"] = deltas if rng.random() < 0.97 else [1]
    if rng.random() < 0.8:
        logged["inventory_deltas"] = {
            rng.choice(INVENTORY_ITEMS): rng.choice([1, 2, 1, 2, "x", 1.5, None]) for _ in range(rng.randint(0, 2))
        }
    return logged


def test_logged_counts_equal_the_per_decision_loop():
    rng = random.Random(44)
    exact = 0
    for _ in range(3000):
        status, stepwise, start = _consistent(rng)
        counts, reason = logged_counts(status, stepwise, start)
        expected, expected_reason = _reference_logged_counts(status, stepwise, start)
        assert reason == expected_reason
        assert (counts is None) == (expected is None)
        if counts is not None:
            assert counts.dtype == np.int64 and np.array_equal(counts, expected)
            exact += 1
    assert exact > 1000  # the exact rebuild is exercised, not only the refusals


def test_refusals_and_disagreements_equal_the_per_decision_loops():
    rng = random.Random(7)
    for _ in range(3000):
        n = rng.randint(1, 8)
        stepwise = [_junk(rng) for _ in range(n)]
        status = np.array([[rng.random() < 0.3 for _ in ACHIEVEMENTS] for _ in range(n + 1)])
        start = None if rng.random() < 0.5 else np.array([rng.choice([0, 1, 2]) for _ in ACHIEVEMENTS])
        counts, reason = logged_counts(status, stepwise, start)
        expected, expected_reason = _reference_logged_counts(status, stepwise, start)
        assert reason == expected_reason
        assert (counts is None) == (expected is None)
        inventory = np.array([[rng.randint(0, 4) for _ in INVENTORY_ITEMS] for _ in range(n + 1)], dtype=np.int64)
        assert inventory_disagreements(inventory, stepwise) == _reference_disagreements(inventory, stepwise)


def test_one_decision_after_another_episodes_end_by_hand():
    """Decision 1 follows an end where collect_wood was 3 and place_table 1; it logs one
    collect_wood rise of 2. collect_wood: 3 + 2 = 5; place_table (unlocked, ended at 1, did not
    rise): pinned at 1; decision 2 logs place_table +1: 2."""
    wood, table = _ACHIEVEMENT["collect_wood"], _ACHIEVEMENT["place_table"]
    start = np.zeros(len(ACHIEVEMENTS), dtype=np.int64)
    start[wood], start[table] = 3, 1
    status = np.zeros((3, len(ACHIEVEMENTS)), dtype=bool)
    status[1:, [wood, table]] = True  # state 0: this episode's reset, nothing unlocked
    stepwise = [
        {"strategy": "per_achievement", "achievement_count_deltas": {"collect_wood": 2}},
        {"strategy": "per_achievement", "achievement_count_deltas": {"place_table": 1}},
    ]
    counts, _ = logged_counts(status, stepwise, start)
    assert counts is not None
    assert counts[1, wood] == 5 and counts[1, table] == 1
    assert counts[2, wood] == 5 and counts[2, table] == 2
