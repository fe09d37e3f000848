"""Positive-return cycles: a state revisited within an episode after the reward paid something net positive.

Potential-based shaping pays exactly 0 around a loop (at gamma = 1: ``Phi(s) - Phi(s)``), so
any loop in the data that paid more than 0 is proof, on that data, that the reward is not
potential-based over the state: a policy can repeat it for as long as the episode lasts.
Each revisit is compared with the *latest* earlier visit of the same state, so the cycles found
are the shortest ones and every longer loop back to a state is a sum of them.
"""

from __future__ import annotations

import numpy as np

from workbench.errors import AnalysisError

__all__ = ["positive_cycles", "previous_visits", "segment_or"]

#: Below this, a cycle's net pay counts as 0 (float rounding of sums of weights).
TOLERANCE = 1e-9


def previous_visits(states: np.ndarray, episode: np.ndarray) -> np.ndarray:
    """For each row, the latest earlier row of the same episode with the identical state.

    Args:
        states: (R, F) integers, one state per row (features that identify a state).
        episode: (R,) int, each row's episode (rows of one episode contiguous, in time order).

    Returns:
        (R,) int64 row index of the previous visit, -1 for a first visit.

    Raises:
        AnalysisError: mismatched shapes.
    """
    states = np.asarray(states)
    if states.ndim != 2 or len(states) != len(episode):
        raise AnalysisError(f"states must be (R, F) with one row per episode label, got {states.shape}")
    # A hash of each row (wrapping uint64 arithmetic), then candidates checked exactly, so a
    # collision can never invent a revisit.
    rng = np.random.default_rng(12345)
    multipliers: np.ndarray = np.bitwise_or(rng.integers(1, 2**63, size=states.shape[1], dtype=np.uint64), 1)
    key = np.zeros(len(states), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for c in range(states.shape[1]):
            key = key * np.uint64(1_000_003) + states[:, c].astype(np.uint64) * multipliers[c]
    order = np.lexsort((np.arange(len(states)), key, np.asarray(episode)))
    same = (key[order[1:]] == key[order[:-1]]) & (np.asarray(episode)[order[1:]] == np.asarray(episode)[order[:-1]])
    later, earlier = order[1:][same], order[:-1][same]
    exact = (states[later] == states[earlier]).all(axis=1)
    previous = np.full(len(states), -1, dtype=np.int64)
    previous[later[exact]] = earlier[exact]
    return previous


def segment_or(bits: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Bitwise OR of ``bits[start_i:stop_i]`` for each i (0 for an empty range).

    Args:
        bits: (R,) uint64.
        start: (K,) int, range starts.
        stop: (K,) int, range ends (exclusive), >= start.

    Returns:
        (K,) uint64.
    """
    padded = np.concatenate([bits, np.zeros(1, dtype=bits.dtype)])
    if not len(start):
        return np.zeros(0, dtype=bits.dtype)
    pairs = np.column_stack([start, stop]).ravel()
    out = np.bitwise_or.reduceat(padded, pairs)[::2]
    return np.where(stop > start, out, 0).astype(bits.dtype)


def positive_cycles(
    states: np.ndarray, episode: np.ndarray, row_reward: np.ndarray, tolerance: float = TOLERANCE
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The shortest loops back to a state that paid more than ``tolerance`` in total.

    Args:
        states: (R, F) integer state rows (an episode's reset row, then one row per decision).
        episode: (R,) int, each row's episode.
        row_reward: (R,) float, the reward of the decision that led to each row (0 on reset rows).
        tolerance: net pay at or below this is not a positive cycle.

    Returns:
        ``(start, stop, paid)``, each (K,): the row of the earlier visit, the row of the revisit
        and the reward paid by the decisions of rows ``start + 1 .. stop``.
    """
    previous = previous_visits(states, episode)
    stop = np.flatnonzero(previous >= 0)
    start = previous[stop]
    running = np.cumsum(np.asarray(row_reward, dtype=np.float64))
    paid = running[stop] - running[start]
    positive = paid > tolerance
    return start[positive], stop[positive], paid[positive]
