"""Whole-corpus state columns: ``DecisionArrays`` (what scoring reads) and their narrow dtypes.

``DecisionArrays`` stacks whole episodes' states row after row, each column contiguous (as Arrow
and Parquet hold it): a corpus's columns are read by copying whole columns, and scoring scans one
column at a time. ``workbench.data.episodes.checks`` enforces Crafter's value ranges on them (when
writing and when reading a corpus); ``workbench.data.episodes.store`` keeps a columnar corpus's arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.core.crafter_facts import ACTIONS
from workbench.data.episodes.model import Episode

#: Narrow dtypes of the state columns: inventory 0..9, counts rise at most once per step
#: (uint16 holds 65,535, past Crafter's 10,000-step default length), positions in a 64x64 world
#: (int16 leaves room for larger areas; -1 = unknown).
STATE_DTYPES = {
    "inventory": np.uint8,
    "achievement_counts": np.uint16,
    "achievement_status": np.bool_,
    "player_pos": np.int16,
}
COUNT_MAX = int(np.iinfo(np.uint16).max)


def count_dtype(largest: int | None) -> np.dtype:
    """The dtype counts take in memory: uint8 when every count is below 256 (most corpora:
    it halves their largest array), else ``STATE_DTYPES``'s uint16.

    Args:
        largest: The largest achievement count of the corpus (None: not known).

    Returns:
        ``uint8`` when ``largest`` is known and at most 255, else ``uint16``.
    """
    return np.dtype(np.uint8 if largest is not None and largest <= np.iinfo(np.uint8).max else np.uint16)


#: The 2-D state fields of a ``DecisionArrays`` (kept column by column).
STATE_FIELDS = ("inventory", "achievement_counts", "player_pos", "stored_status")


def column_major(array: np.ndarray) -> np.ndarray:
    """``array`` itself when each of its columns is contiguous, else a column-major copy."""
    if array.ndim != 2 or array.shape[0] <= 1 or array.strides[0] == array.itemsize:
        return array
    return np.asfortranarray(array)


@dataclass(frozen=True, eq=False)
class DecisionArrays:
    """The stacked state rows of whole episodes: episode k owns rows ``row_starts[k] ..
    row_starts[k] + lengths[k]``, its reset state first (no actions, reward 0, ``done`` False),
    then the state after each decision (decision i is its row i). E episodes, R rows, S steps.
    The 2-D arrays are column-major, in ``STATE_DTYPES`` from a columnar corpus (counts uint8
    when every count is below 256: ``count_dtype``) and the episodes' own int32 otherwise.

    Attributes:
        ids: (E,) the episode ids, in row order.
        lengths: (E,) int64, each episode's decisions.
        env_return: (E,) float64, each episode's return, exactly ``Episode.env_return``.
        inventory: (R, 16) the inventory at each row (``INVENTORY_ITEMS`` order).
        achievement_counts: (R, 22) the achievement counts (``ACHIEVEMENTS`` order).
        player_pos: (R, 2) the player's (x, y); -1 where unknown.
        env_reward: (R,) float64, Crafter's reward of each row's decision (0 on reset rows).
        done: (R,) bool, whether Crafter ended the episode at that row (False on reset rows).
        action_ids: (S,) uint8, the Crafter action ids of every step, flat.
        action_offsets: (R + 1,) int64, row r's actions are
            ``action_ids[action_offsets[r]:action_offsets[r + 1]]``.
        stored_status: (R, 22) bool, given only where it is not ``achievement_counts > 0``
            (None otherwise); read ``achievement_status``.
    """

    ids: tuple[str, ...]
    lengths: np.ndarray
    env_return: np.ndarray
    inventory: np.ndarray
    achievement_counts: np.ndarray
    player_pos: np.ndarray
    env_reward: np.ndarray
    done: np.ndarray
    action_ids: np.ndarray
    action_offsets: np.ndarray
    stored_status: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in STATE_FIELDS:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, column_major(value))

    @property
    def achievement_status(self) -> np.ndarray:
        """(R, 22) bool: the stored status, else ``achievement_counts > 0`` (computed on each call)."""
        if self.stored_status is not None:
            return self.stored_status
        return np.greater(self.achievement_counts, 0, order="F")

    @property
    def n_episodes(self) -> int:
        """How many episodes the arrays hold."""
        return len(self.ids)

    @property
    def n_decisions(self) -> int:
        """How many decisions the arrays hold (rows minus one reset row per episode)."""
        return int(self.lengths.sum())

    @property
    def n_rows(self) -> int:
        """How many state rows the arrays hold (each episode's reset state plus one per decision)."""
        return len(self.inventory)

    @property
    def row_starts(self) -> np.ndarray:
        """Row of each episode's reset state (int64)."""
        return np.concatenate([[0], np.cumsum(self.lengths + 1)[:-1]]).astype(np.int64)

    @property
    def is_decision(self) -> np.ndarray:
        """(R,) bool: true for rows that are decisions (false for reset rows)."""
        mask = np.ones(self.n_rows, dtype=bool)
        mask[self.row_starts] = False
        return mask

    def decision_env_reward(self) -> np.ndarray:
        """Crafter's reward per decision, episode after episode: ``Episode.env_reward`` stacked.

        Returns:
            (N,) float64, N the decisions (reset rows left out).
        """
        return self.env_reward[self.is_decision]

    def steps(self) -> np.ndarray:
        """Environment steps per episode (a decision plays one or more).

        Returns:
            (E,) int64, each episode's actions played.
        """
        ends = self.action_offsets[self.row_starts + self.lengths + 1]
        return (ends - self.action_offsets[self.row_starts]).astype(np.int64)

    def rows(self, start: int, stop: int) -> DecisionArrays:
        """Episodes ``start .. stop - 1`` of these arrays (zero-copy slices of the row arrays).

        Args:
            start: The first episode (0-based).
            stop: One past the last episode.

        Returns:
            The episodes' arrays; ``action_offsets`` rebased to 0 (a copy only then).
        """
        row_starts = self.row_starts
        first = int(row_starts[start]) if start < self.n_episodes else self.n_rows
        last = int(row_starts[stop]) if stop < self.n_episodes else self.n_rows
        offsets = self.action_offsets[first : last + 1]
        return DecisionArrays(
            ids=self.ids[start:stop],
            lengths=self.lengths[start:stop],
            env_return=self.env_return[start:stop],
            inventory=self.inventory[first:last],
            achievement_counts=self.achievement_counts[first:last],
            stored_status=None if self.stored_status is None else self.stored_status[first:last],
            player_pos=self.player_pos[first:last],
            env_reward=self.env_reward[first:last],
            done=self.done[first:last],
            action_ids=self.action_ids[int(offsets[0]) : int(offsets[-1])],
            action_offsets=offsets if offsets[0] == 0 else offsets - offsets[0],
        )

    def with_ids(self, ids: Sequence[str]) -> DecisionArrays:
        """The same arrays under other episode ids (a renamed copy of the id tuple only).

        Args:
            ids: One new id per episode, in order.

        Returns:
            The arrays (shared, not copied) under ``ids``.
        """
        return DecisionArrays(**{**self.__dict__, "ids": tuple(ids)})

    @staticmethod
    def concat(parts: Sequence[DecisionArrays]) -> DecisionArrays:
        """One ``DecisionArrays`` of several, in order (copies; dtypes promote as numpy does).

        Args:
            parts: The arrays to join (one part is returned as it is).

        Returns:
            Their episodes one after another, 2-D arrays column-major; a ``stored_status``
            when any part has one.

        Raises:
            ValueError: ``parts`` is empty.
        """
        if len(parts) == 1:
            return parts[0]
        if not parts:
            raise ValueError("DecisionArrays.concat needs at least one part")
        offsets = [parts[0].action_offsets[:1]]
        base = 0
        for part in parts:
            offsets.append(part.action_offsets[1:] + base)
            base += int(part.action_offsets[-1])
        flat = {
            name: np.concatenate([getattr(p, name) for p in parts])
            for name in ("lengths", "env_return", "env_reward", "done", "action_ids")
        }
        # 2-D arrays joined through their transposes, so the result stays column-major.
        state = {
            name: np.concatenate([getattr(p, name).T for p in parts], axis=1).T
            for name in ("inventory", "achievement_counts", "player_pos")
        }
        stored = any(p.stored_status is not None for p in parts)
        status = np.concatenate([p.achievement_status.T for p in parts], axis=1).T if stored else None
        return DecisionArrays(
            ids=tuple(i for p in parts for i in p.ids),
            action_offsets=np.concatenate(offsets).astype(np.int64),
            stored_status=status,
            **flat,
            **state,
        )

    @staticmethod
    def from_episodes(episodes: Sequence[Episode], ids: Sequence[str] | None = None) -> DecisionArrays:
        """Stack in-memory episodes (their own dtypes, int32), under ``ids`` when given.

        Args:
            episodes: The episodes, in order.
            ids: One id per episode (None: the episodes' own ids).

        Returns:
            Their stacked rows, each episode's ``achievement_status`` as ``stored_status``.

        Raises:
            ValueError: ``episodes`` is empty.
        """
        if not episodes:
            raise ValueError("DecisionArrays.from_episodes needs at least one episode")
        lengths = np.array([e.n_decisions for e in episodes], dtype=np.int64)
        steps_per_row = [np.concatenate([[0], [len(d) for d in e.actions]]) for e in episodes]
        action_offsets = np.concatenate([[0], np.cumsum(np.concatenate(steps_per_row))]).astype(np.int64)
        action_index = {name: i for i, name in enumerate(ACTIONS)}
        action_ids = np.fromiter(
            (action_index[a] for e in episodes for d in e.actions for a in d),
            dtype=np.uint8,
            count=int(action_offsets[-1]),
        )
        zero = np.zeros(1)
        return DecisionArrays(
            ids=tuple(ids) if ids is not None else tuple(e.id for e in episodes),
            lengths=lengths,
            env_return=np.array([e.env_return for e in episodes], dtype=np.float64),
            inventory=_stack([e.inventory for e in episodes]),
            achievement_counts=_stack([e.achievement_counts for e in episodes]),
            stored_status=_stack([e.achievement_status for e in episodes]),
            player_pos=_stack([e.player_pos for e in episodes]),
            env_reward=np.concatenate([np.concatenate([zero, e.env_reward]) for e in episodes]),
            done=np.concatenate([np.concatenate([[False], e.done]) for e in episodes]),
            action_ids=action_ids,
            action_offsets=action_offsets,
        )


def _stack(arrays: Sequence[np.ndarray | None]) -> np.ndarray:
    """Row blocks stacked into one column-major array (an ``Episode``'s optional arrays are
    always set once it is built)."""
    return np.concatenate([np.asarray(a).T for a in arrays], axis=1).T


def narrow(arrays: DecisionArrays) -> DecisionArrays:
    """The arrays in ``STATE_DTYPES`` (after ``check_values``, so nothing is cut).

    Args:
        arrays: Checked arrays, in any integer dtypes.

    Returns:
        The same rows, state arrays cast to ``STATE_DTYPES`` (no copy where they already are).
    """
    cast = {
        name: getattr(arrays, name).astype(dtype, copy=False)
        for name, dtype in STATE_DTYPES.items()
        if name != "achievement_status"
    }
    return DecisionArrays(**{**arrays.__dict__, **cast})
