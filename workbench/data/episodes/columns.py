"""Whole-corpus state columns: ``DecisionArrays`` (what scoring reads) and the checks of their values.

A ``DecisionArrays`` holds the states of some whole episodes stacked row after row: episode k
owns rows ``row_starts[k] .. row_starts[k] + lengths[k]``, its reset state first, then the state
after each decision. Per-row arrays keep the narrowest dtype that holds Crafter's ranges when
they come from a columnar corpus (``STATE_DTYPES``; counts uint8 when every count of the
corpus is below 256, ``count_dtype``) and the episodes' own int32 otherwise.
Decision i of an episode is its row i (1-based); reset rows carry no actions, reward 0 and
``done`` False. The 2-D state arrays are (rows, columns) but stored column by column (each
column contiguous, as Arrow and Parquet hold it): a corpus's columns are read by copying whole
columns, and scoring scans one column at a time. The achievement status is
``achievement_counts > 0`` (Crafter's definition, which ``check_values`` enforces on every
stored corpus) unless an episode in memory carried its own.

``check_values`` is the one place Crafter's value ranges are enforced (when writing and when
reading a corpus); ``workbench.data.episodes.store`` keeps a columnar corpus's arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.core.crafter_facts import ACHIEVEMENTS, ACTIONS, INVENTORY_ITEMS
from workbench.data.episodes.model import Episode
from workbench.errors import EpisodeValueError

#: Crafter's inventory is 0..9 for every item (health, food, drink, energy included).
INVENTORY_MAX = 9
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
    it halves their largest array), else ``STATE_DTYPES``'s uint16 (None = not known)."""
    return np.dtype(np.uint8 if largest is not None and largest <= np.iinfo(np.uint8).max else np.uint16)


#: Rows checked at a time by ``check_values``: its temporaries stay small and in cache.
_CHECK_ROWS = 1 << 16
#: The 2-D state fields of a ``DecisionArrays`` (kept column by column).
STATE_FIELDS = ("inventory", "achievement_counts", "player_pos", "stored_status")


def column_major(array: np.ndarray) -> np.ndarray:
    """``array`` itself when each of its columns is contiguous, else a column-major copy."""
    if array.ndim != 2 or array.shape[0] <= 1 or array.strides[0] == array.itemsize:
        return array
    return np.asfortranarray(array)


@dataclass(frozen=True, eq=False)
class DecisionArrays:
    """The stacked state rows of whole episodes (see the module docstring).

    ``ids``, ``lengths`` (decisions, int64) and ``env_return`` (float64, exactly
    ``Episode.env_return``) per episode; per row (R = sum of lengths + 1): ``inventory`` (R, 16),
    ``achievement_counts`` (R, 22) and ``player_pos`` (R, 2), column-major; ``env_reward``
    (R,) float64 and ``done`` (R,) bool; actions as ``action_ids`` (uint8, Crafter ids, all
    steps flat) with ``action_offsets`` (R + 1,): row r's actions are
    ``action_ids[action_offsets[r]:action_offsets[r + 1]]``. ``stored_status`` (R, 22) bool is
    given only where it is not ``achievement_counts > 0``; read ``achievement_status``.
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
        """Crafter's reward per decision (N,), episode after episode: ``Episode.env_reward`` stacked."""
        return self.env_reward[self.is_decision]

    def steps(self) -> np.ndarray:
        """Environment steps per episode (int64)."""
        ends = self.action_offsets[self.row_starts + self.lengths + 1]
        return (ends - self.action_offsets[self.row_starts]).astype(np.int64)

    def rows(self, start: int, stop: int) -> DecisionArrays:
        """Episodes ``start .. stop - 1`` of these arrays (zero-copy slices of the row arrays)."""
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
        """The same arrays under other episode ids (a renamed copy of the id tuple only)."""
        return DecisionArrays(**{**self.__dict__, "ids": tuple(ids)})

    @staticmethod
    def concat(parts: Sequence[DecisionArrays]) -> DecisionArrays:
        """One ``DecisionArrays`` of several, in order (copies; dtypes promote as numpy does)."""
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
        """Stack in-memory episodes (their own dtypes, int32), under ``ids`` when given."""
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


def check_values(arrays: DecisionArrays, where: str = "") -> None:
    """Enforce Crafter's ranges on every row; ``EpisodeValueError`` naming the episode, decision
    and column of the first violation (``where``, e.g. a file, prefixes the message).

    Checked: inventory within 0..9; counts within 0..65,535 and non-decreasing within an episode;
    a stored status true exactly where the count is positive (``check_status``); positions -1
    (unknown) or more; Crafter's reward finite (no NaN or infinity); action ids Crafter's. Runs
    in row blocks, so the temporaries stay small on a 10M-decision corpus."""
    row_starts = arrays.row_starts

    def fail(row: int, column: str, value: object, why: str) -> None:
        raise _value_error(arrays, where, row, column, value, why)

    is_reset = np.zeros(arrays.n_rows, dtype=bool)
    is_reset[row_starts] = True
    limits = (
        ("inventory", INVENTORY_ITEMS, 0, INVENTORY_MAX),
        ("achievement_counts", ACHIEVEMENTS, 0, COUNT_MAX),
        ("player_pos", ("x", "y"), -1, None),
    )
    counts_all = arrays.achievement_counts
    for first in range(0, arrays.n_rows, _CHECK_ROWS):
        last = min(first + _CHECK_ROWS, arrays.n_rows)
        for name, columns, low, high in limits:
            block = getattr(arrays, name)[first:last]
            # Reductions first (cheap); the violating cell is located only when there is one.
            info = np.iinfo(block.dtype) if block.dtype.kind in "iu" else None
            below = info is None or info.min < low
            above = high is not None and (info is None or info.max > high)
            if (below and block.min() < low) or (above and block.max() > high):
                bad = (block < low) | (block > high) if high is not None else block < low
                row, column = np.argwhere(bad)[0]
                limit = f"is below {low}" if high is None else f"is outside Crafter's {low}..{high}"
                fail(first + int(row), _column_name(name, columns[column]), block[row, column].item(), limit)
        if arrays.stored_status is not None:  # a derived status agrees with the counts by definition
            check_status(arrays, arrays.stored_status[first:last], first, where)
        # Counts never fall within an episode: each row against the one before, resets skipped.
        start = max(first, 1)
        falling = counts_all[start:last] < counts_all[start - 1 : last - 1]
        if falling.any():
            falling[is_reset[start:last]] = False
            if falling.any():
                row, column = np.argwhere(falling)[0]
                at = start + int(row)
                fail(
                    at,
                    _column_name("achievement_counts", ACHIEVEMENTS[column]),
                    counts_all[at, column].item(),
                    f"is below the previous decision's {counts_all[at - 1, column].item()} "
                    "(counts never decrease within an episode)",
                )
        reward = arrays.env_reward[first:last]
        if not np.isfinite(reward.sum()):  # NaN or infinity anywhere makes the sum non-finite
            finite = np.isfinite(reward)
            if not finite.all():
                row = int(np.flatnonzero(~finite)[0])
                fail(first + row, "env_reward", float(reward[row]), "is not a finite number")
    if len(arrays.action_ids) and int(arrays.action_ids.max()) >= len(ACTIONS):
        step = int(np.flatnonzero(arrays.action_ids >= len(ACTIONS))[0])
        row = int(np.searchsorted(arrays.action_offsets, step, side="right")) - 1
        fail(row, "actions", int(arrays.action_ids[step]), f"is not a Crafter action id (0..{len(ACTIONS) - 1})")


def check_status(arrays: DecisionArrays, status: np.ndarray, first_row: int, where: str = "") -> None:
    """``EpisodeValueError`` at the first cell of ``status`` (rows ``first_row ..`` of ``arrays``)
    that is not ``achievement_counts > 0``: Crafter's status is true exactly when the count is positive."""
    counts = arrays.achievement_counts[first_row : first_row + len(status)]
    inconsistent = status != (counts > 0)
    if inconsistent.any():
        row, column = np.argwhere(inconsistent)[0]
        raise _value_error(
            arrays,
            where,
            first_row + int(row),
            _column_name("achievement_status", ACHIEVEMENTS[column]),
            bool(status[row, column]),
            f"disagrees with the count {counts[row, column].item()} (status is true exactly when the count is positive)",
        )


def _value_error(
    arrays: DecisionArrays, where: str, row: int, column: str, value: object, why: str
) -> EpisodeValueError:
    """The error for one bad cell: episode, decision and column named, ``where`` first."""
    row_starts = arrays.row_starts
    k = int(np.searchsorted(row_starts, row, side="right")) - 1
    prefix = f"{where}: " if where else ""
    return EpisodeValueError(
        f"{prefix}episode {arrays.ids[k]!r}: decision {row - int(row_starts[k])}, column {column!r}: {value!r} {why}"
    )


def _column_name(array: str, column: str) -> str:
    """The decisions-table column of one cell (``inventory_wood``, ``count_collect_wood`` ...)."""
    prefix = {
        "inventory": "inventory_",
        "achievement_counts": "count_",
        "achievement_status": "status_",
        "player_pos": "pos_",
    }[array]
    return prefix + column


def narrow(arrays: DecisionArrays) -> DecisionArrays:
    """The arrays in ``STATE_DTYPES`` (after ``check_values``, so nothing is cut)."""
    cast = {
        name: getattr(arrays, name).astype(dtype, copy=False)
        for name, dtype in STATE_DTYPES.items()
        if name != "achievement_status"
    }
    return DecisionArrays(**{**arrays.__dict__, **cast})
