"""``loop_table``: each episode's loops with their laps and pay, every episode of a batch at once.

The laps are those of ``loops.loop_laps`` (the definition, one episode at a time), found here
on the stacked columns of a batch of episodes in a few numpy passes per loop: a remake's laps
from its count's rises, a refill's from where the counter leaves its maximum and is next back,
a cycle's by ``loops.cycle_laps`` on the episodes that both gathered and spent. Only the
episodes and loops with laps are then visited one by one (their pay, the row of the table), so
an audit of a million decisions does not build a ``Track`` per episode. A loop of a kind this
module does not know is counted by ``loop_laps`` on each episode's ``Track``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.diagnostics.loops import (
    ASKED_WITHIN,
    CYCLE,
    CYCLE_WINDOW,
    LOOPS,
    REFILL,
    REFILL_WINDOWS,
    REMAKE,
    Loop,
    batch_tracks,
    cycle_laps,
    loop_laps,
)
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, ACTIONS, INVENTORY_ITEMS, INVENTORY_MAX, NIGHT_DAYLIGHT, daylight
from workbench.data.episodes import Corpus
from workbench.data.episodes.columns import DecisionArrays
from workbench.scoring import slot_pay

__all__ = ["LOOP_COLUMNS", "loop_table"]

#: The columns of ``loop_table``.
LOOP_COLUMNS = ["episode", "policy", "loop", "kind", "laps", "allowed", "first", "last", "paid", "share", "flagged"]
N_ITEMS = len(INVENTORY_ITEMS)


def loop_table(
    corpus: Corpus, config: RewardConfig, returns: Sequence[float] | np.ndarray, loops: Sequence[Loop] = LOOPS
) -> pd.DataFrame:
    """Per episode and loop it ran at least once: ``episode``, ``policy``, ``loop``, ``kind``,
    ``laps``, ``allowed``, ``first`` and ``last`` (1-based decisions of its first and last lap),
    ``paid`` (what the rises of the loop's items and counts paid under ``config`` over those
    decisions, after lambda; 0 under consistent), ``share`` (paid / |the episode's return|,
    ``returns`` in corpus order; NaN for a return of 0) and ``flagged``: laps past ``allowed``
    and the loop paid something. Episodes in corpus order, loops in ``loops`` order."""
    pays = slot_pay(config)  # what one unit of each slot's rise pays, after lambda
    slots = [_slots(loop) for loop in loops]
    slot_pays = [pays[loop_slots] for loop_slots in slots]
    policies = corpus.index["policy"].astype(str).tolist() if "policy" in corpus.index.columns else [""] * len(corpus)
    ids = corpus.ids
    rows: list[tuple[Any, ...]] = []
    for offset, arrays in corpus.decision_batches():
        batch = _Batch(arrays)
        laps = np.zeros((arrays.n_episodes, len(loops)), dtype=np.int64)
        first, last = np.zeros_like(laps), np.zeros_like(laps)
        for j, loop in enumerate(loops):
            laps[:, j], first[:, j], last[:, j] = batch.laps(loop)
        for k, j in zip(*np.nonzero(laps)):  # episode-major, loops in order: the table's order
            episode = offset + int(k)
            lo, hi = int(first[k, j]), int(last[k, j])
            paid = float((batch.gains(int(k), lo, hi, slots[j]) @ slot_pays[j]).sum())
            share = paid / abs(returns[episode]) if returns[episode] else np.nan
            flagged = int(laps[k, j]) > loops[j].allowed and paid > 0
            row = (ids[episode], policies[episode], loops[j].name, loops[j].kind, int(laps[k, j]), loops[j].allowed)
            rows.append((*row, lo, hi, paid, share, flagged))
    return pd.DataFrame(rows, columns=LOOP_COLUMNS)


class _Batch:
    """One batch's stacked states, read once for all loops: ``gains`` (the rises of every item
    and count per decision, as ``loop_table`` pays them) and the helpers of each loop kind."""

    def __init__(self, arrays: DecisionArrays) -> None:
        self.arrays = arrays
        self.starts = arrays.row_starts
        # row r's episode; a difference row r (state r+1 - state r) is a decision unless it
        # crosses into the next episode (r the last state of an episode)
        self.episode = np.repeat(np.arange(arrays.n_episodes), arrays.lengths + 1)
        self.decision_row = np.ones(max(arrays.n_rows - 1, 0), dtype=bool)
        self.decision_row[self.starts[1:] - 1] = False
        self._levels: dict[int, np.ndarray] = {}
        self._diffs: dict[int, np.ndarray] = {}
        self._tracks: list[Any] | None = None

    def level(self, slot: int) -> np.ndarray:
        """(R,): one inventory item (slot < 16) or achievement count (16 + its index) per state
        row: a signed copy (stored columns may be unsigned), as ``loops.tracks`` reads it, in the
        narrowest signed integers that hold it and its differences (int16 for the stored uint8
        columns: the passes over a million rows are a quarter of int64's)."""
        if slot not in self._levels:
            column = (
                self.arrays.inventory[:, slot] if slot < N_ITEMS else self.arrays.achievement_counts[:, slot - N_ITEMS]
            )
            signed = {1: np.int16, 2: np.int32}.get(column.dtype.itemsize, np.int64)
            self._levels[slot] = column.astype(signed)
        return self._levels[slot]

    def diffs(self, slot: int) -> np.ndarray:
        """(R - 1,): the slot's change from each state row to the next."""
        if slot not in self._diffs:
            self._diffs[slot] = np.diff(self.level(slot))
        return self._diffs[slot]

    def rises(self, slot: int) -> np.ndarray:
        """(R - 1,): the slot's rise from each state row to the next (0 where it fell or held)."""
        key = -1 - slot  # beside the differences, under their own keys
        if key not in self._diffs:
            self._diffs[key] = np.maximum(self.diffs(slot), 0)
        return self._diffs[key]

    def gains(self, k: int, first: int, last: int, slots: np.ndarray) -> np.ndarray:
        """Episode ``k``'s rises of ``slots`` over decisions ``first .. last`` (1-based): the
        values of ``np.maximum(np.diff(states), 0)[first - 1 : last][:, slots]`` of its own states
        (integers; ``loop_table`` pays them as float64, as it did the int64 rises)."""
        start = int(self.starts[k]) + first - 1
        stop = max(int(self.starts[k]) + last, start)
        columns = [self.rises(slot) for slot in slots.tolist()]
        stacked = np.empty((stop - start, len(columns)), dtype=columns[0].dtype if columns else np.int64)
        for j, column in enumerate(columns):
            stacked[:, j] = column[start:stop]
        return stacked

    def laps(self, loop: Loop) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per episode of the batch: ``loop``'s laps, the first decision of its first lap (the
        smallest lap start) and the last decision of its last lap (0 and 0 without laps)."""
        if loop.kind == REMAKE:
            return self._remakes(loop)
        if loop.kind == CYCLE:
            return self._cycles(loop)
        if loop.kind == REFILL:
            return self._refills(loop)
        return self._per_episode(loop)

    def _rises(self, count: str) -> tuple[np.ndarray, np.ndarray]:
        """(difference rows, rise) of every decision an achievement count rose at, in order."""
        column = self.diffs(N_ITEMS + ACHIEVEMENTS.index(count))
        at = np.flatnonzero((column > 0) & self.decision_row)
        return at, column[at]

    def _remakes(self, loop: Loop) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # loop_laps: ends = every rise (a rise of 2 is two), laps = consecutive pairs of ends:
        # (rises - 1) laps from the decision after the first end to the last end
        at, rise = self._rises(loop.event)
        n = self.arrays.n_episodes
        owner = self.episode[at]
        total = np.bincount(owner, weights=rise, minlength=n).astype(np.int64)
        first, last = _first_and_last(owner, at - self.starts[owner] + 1, n)
        laps = np.maximum(total - 1, 0)
        first += 1  # a lap starts the decision after the previous making
        return laps, np.where(laps > 0, first, 0), np.where(laps > 0, last, 0)

    def _units(self, count: str) -> tuple[np.ndarray, np.ndarray]:
        """(episode, 1-based decision) of every unit a count rose by (a rise of 2 is two), in order."""
        at, rise = self._rises(count)
        owner = self.episode[at]
        return np.repeat(owner, rise), np.repeat(at - self.starts[owner] + 1, rise)

    def _cycles(self, loop: Loop) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # loop_laps of a cycle, on the episodes that both gathered and spent (the others have none)
        spender, spent = self._units(loop.event)
        gatherer, gathered = self._units(loop.gather)
        both = np.intersect1d(spender, gatherer)
        spends = _split(spender, spent.tolist(), both)
        gathers = _split(gatherer, gathered.tolist(), both)
        n = self.arrays.n_episodes
        laps, first, last = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        for k, ends, gathering in zip(both.tolist(), spends, gathers):
            found = cycle_laps(ends, gathering, CYCLE_WINDOW)
            if len(found):
                laps[k], first[k], last[k] = len(found), int(found[:, 0].min()), int(found[-1, 1])
        return laps, first, last

    def _per_episode(self, loop: Loop) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.arrays.n_episodes
        laps, first, last = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        for k in range(n):
            found = loop_laps(self._track(k), loop)
            if len(found):
                laps[k], first[k], last[k] = len(found), int(found[:, 0].min()), int(found[-1, 1])
        return laps, first, last

    def _track(self, k: int) -> Any:
        if self._tracks is None:
            self._tracks = list(batch_tracks(self.arrays))
        return self._tracks[k]

    def _refills(self, loop: Loop) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # loops._refills on every episode at once: a state that left the top (the state before
        # it at the top, same episode) and the next state at the top, if the episode has one
        level = self.level(INVENTORY_ITEMS.index(loop.event))
        top = INVENTORY_MAX[loop.event]
        left = np.flatnonzero(self.decision_row & (level[:-1] == top) & (level[1:] < top)) + 1
        at_top = np.where(level == top, np.arange(len(level)), len(level))
        following = np.minimum.accumulate(at_top[::-1])[::-1]  # the first row at or after r at the top
        done = following[left]
        owner = self.episode[left]
        ok = done < len(level)
        ok[ok] = self.episode[done[ok]] == owner[ok]
        ok &= done - left <= REFILL_WINDOWS[loop.event]
        if loop.asked:
            ok &= self._asked(loop.asked, left, owner)
        if loop.by_day:
            steps = np.concatenate([[0], np.cumsum(np.diff(self.arrays.action_offsets))])
            # actions played before the decision that left the top: rows start+1 .. left-1
            before = steps[left] - steps[self.starts[owner] + 1]
            day = [daylight(int(before[i])) >= NIGHT_DAYLIGHT if ok[i] else False for i in range(len(left))]
            ok &= np.array(day, dtype=bool)
        left, done, owner = left[ok], done[ok], owner[ok]
        n = self.arrays.n_episodes
        laps = np.bincount(owner, minlength=n).astype(np.int64)
        first, _ = _first_and_last(owner, left - self.starts[owner], n)
        _, last = _first_and_last(owner, done - self.starts[owner], n)
        return laps, first, last

    def _asked(self, action: str, left: np.ndarray, owner: np.ndarray) -> np.ndarray:
        """Whether ``action`` was played in the rows ``ASKED_WITHIN`` up to each ``left`` row
        (not before its episode's reset row), as ``loops.tracks`` reads ``played``."""
        hit = np.concatenate([[0], np.cumsum(self.arrays.action_ids == ACTIONS.index(action))])
        offsets = self.arrays.action_offsets
        per_row = np.concatenate([[0], np.cumsum(hit[offsets[1:]] - hit[offsets[:-1]])])
        since = np.maximum(left - ASKED_WITHIN, self.starts[owner])
        return (per_row[left] - per_row[since]) > 0


def _split(owner: np.ndarray, values: list[int], episodes: np.ndarray) -> list[list[int]]:
    """``values`` of each of ``episodes`` (``owner``, sorted, names each value's episode)."""
    lo = np.searchsorted(owner, episodes, side="left").tolist()
    hi = np.searchsorted(owner, episodes, side="right").tolist()
    return [values[a:b] for a, b in zip(lo, hi)]


def _first_and_last(owner: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per episode of ``n``, the first and the last of ``values`` whose ``owner`` (sorted) it is
    (0 and 0 for an episode with none)."""
    first, last = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    if len(owner):
        new = np.flatnonzero(np.concatenate([[True], owner[1:] != owner[:-1]]))
        ends = np.append(new[1:], len(owner)) - 1
        first[owner[new]], last[owner[ends]] = values[new], values[ends]
    return first, last


def _slots(loop: Loop) -> np.ndarray:
    return np.array(
        [INVENTORY_ITEMS.index(i) for i in loop.items]
        + [len(INVENTORY_ITEMS) + ACHIEVEMENTS.index(c) for c in loop.counts],
        dtype=np.int64,
    )
