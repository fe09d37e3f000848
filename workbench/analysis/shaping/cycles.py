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
    # Each row packed exactly into a few int64 words (mixed radix per column), then sorted by
    # (episode, words, row): equal neighbours in that order are visits of one state.
    episode = np.asarray(episode)
    words = _packed(states)
    order = np.lexsort((np.arange(len(states)), *words[::-1], episode))
    same = episode[order[1:]] == episode[order[:-1]]
    for word in words:
        same &= word[order[1:]] == word[order[:-1]]
    later, earlier = order[1:][same], order[:-1][same]
    previous = np.full(len(states), -1, dtype=np.int64)
    previous[later] = earlier
    return previous


def _packed(states: np.ndarray) -> list[np.ndarray]:
    """The rows of ``states`` as int64 words, columns packed in mixed radix (exact, no hashing)."""
    words: list[np.ndarray] = []
    word = np.zeros(len(states), dtype=np.int64)
    capacity = 1
    for c in range(states.shape[1]):
        column = states[:, c].astype(np.int64)
        low = int(column.min(initial=0))
        radix = int(column.max(initial=0)) - low + 1
        if radix == 1:
            continue
        if capacity * radix >= 1 << 62:
            words.append(word)
            word, capacity = np.zeros(len(states), dtype=np.int64), 1
        word = word * radix + (column - low)
        capacity *= radix
    words.append(word)
    return words


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
