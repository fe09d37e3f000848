"""Positive-return cycles: a state revisited within an episode after the reward paid something net positive.

Potential-based shaping pays exactly 0 around a loop (at gamma = 1: ``Phi(s) - Phi(s)``), so
any loop in the data that paid more than 0 is proof, on that data, that the reward is not
potential-based over the state: a policy can repeat it for as long as the episode lasts.
Each revisit is compared with the *latest* earlier visit of the same state, so the cycles found
are the shortest ones and every longer loop back to a state is a sum of them.

Cycles overlap: in a loop through states A and B, every return to A closes a cycle and so does
every return to B, and each lap's decisions lie in two of them. What a set of cycles paid is
therefore ``paid_once``: each decision inside at least one of them counted once (summing the
cycles' own totals counted the stone loop's laps about twice: 14.55 for 50 laps paying 7.35).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from workbench.errors import AnalysisError

__all__ = [
    "inside_cycles",
    "packed_words",
    "paid_once",
    "positive_cycles",
    "previous_visits",
    "row_groups",
    "segment_or",
]

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
    episode = np.asarray(episode)
    n = len(states)
    # Most decisions leave the state as it was: a row equal to the row before revisits it. Only
    # the first row of each run of equal rows (a head) is sorted; a head's previous visit is the
    # last row of the latest earlier run of its state.
    repeat = np.zeros(n, dtype=bool)
    repeat[1:] = episode[1:] == episode[:-1]
    for c in range(states.shape[1]):
        repeat[1:] &= states[1:, c] == states[:-1, c]
    previous = np.where(repeat, np.arange(n, dtype=np.int64) - 1, -1)
    heads = np.flatnonzero(~repeat)
    earlier = _previous_heads(packed_words(states[heads].T), episode[heads])
    tails = np.append(heads[1:], n) - 1
    found = earlier >= 0
    previous[heads[found]] = tails[earlier[found]]
    return previous


def _previous_heads(words: list[np.ndarray], episode: np.ndarray) -> np.ndarray:
    """Per row, the latest earlier row of its episode with the same words (-1: none).

    Rows sorted by (episode, words, row): equal neighbours in that order are visits of one state."""
    order = np.lexsort((np.arange(len(episode)), *words[::-1], episode))
    same = episode[order[1:]] == episode[order[:-1]]
    for word in words:
        same &= word[order[1:]] == word[order[:-1]]
    previous = np.full(len(episode), -1, dtype=np.int64)
    previous[order[1:][same]] = order[:-1][same]
    return previous


def packed_words(columns: Iterable[np.ndarray]) -> list[np.ndarray]:
    """Rows of integer columns as a few int64 words, packed in mixed radix per column (exact:
    two rows have equal words exactly when they are equal in every column).

    Args:
        columns: the (R,) integer columns, at least one.

    Returns:
        The words, each (R,) int64.
    """
    words: list[np.ndarray] = []
    word: np.ndarray | None = None
    capacity = 1
    for raw in columns:
        column = np.asarray(raw).astype(np.int64)
        if word is None:
            word = np.zeros(len(column), dtype=np.int64)
        low = int(column.min(initial=0))
        radix = int(column.max(initial=0)) - low + 1
        if radix == 1:
            continue
        if capacity * radix >= 1 << 62:
            words.append(word)
            word, capacity = np.zeros(len(column), dtype=np.int64), 1
        word = word * radix + (column - low)
        capacity *= radix
    if word is None:
        raise AnalysisError("packed_words needs at least one column")
    words.append(word)
    return words


def row_groups(words: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The groups of equal rows of packed ``words`` (``packed_words``).

    Args:
        words: the rows' words, each (R,) int64.

    Returns:
        ``(first, inverse)``: (G,) the first row (in sorted order) of each group and (R,) each
        row's group.
    """
    order = np.lexsort(words[::-1])
    new = np.zeros(len(order), dtype=bool)
    new[:1] = True
    for word in words:
        new[1:] |= word[order[1:]] != word[order[:-1]]
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


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


def inside_cycles(start: np.ndarray, stop: np.ndarray, n_rows: int) -> np.ndarray:
    """Which rows lie inside at least one cycle: rows ``start + 1 .. stop`` of each.

    Args:
        start: (K,) int, each cycle's earlier visit (``positive_cycles``).
        stop: (K,) int, its revisit.
        n_rows: the rows in all.

    Returns:
        (n_rows,) bool.
    """
    # +1 where a cycle's rows begin, -1 after its last (counted, not np.add.at: ~10x faster)
    opened = np.bincount(np.asarray(start, dtype=np.int64) + 1, minlength=n_rows + 1)[:n_rows]
    closed = np.bincount(np.asarray(stop, dtype=np.int64) + 1, minlength=n_rows + 1)[:n_rows]
    return np.cumsum(opened - closed) > 0


def paid_once(row_reward: np.ndarray, start: np.ndarray, stop: np.ndarray) -> float:
    """What the decisions inside a set of cycles paid, each decision counted once however many
    (overlapping) cycles hold it.

    Args:
        row_reward: (R,) float, the reward of the decision that led to each row.
        start: (K,) int, each cycle's earlier visit.
        stop: (K,) int, its revisit.

    Returns:
        The sum of ``row_reward`` over the rows ``inside_cycles``.
    """
    row_reward = np.asarray(row_reward, dtype=np.float64)
    return float(row_reward[inside_cycles(start, stop, len(row_reward))].sum())
