"""Whole-corpus state columns: ``DecisionArrays`` (what scoring reads) and ``ColumnStore`` (their home).

A ``DecisionArrays`` holds the states of some whole episodes stacked row after row: episode k
owns rows ``row_starts[k] .. row_starts[k] + lengths[k]``, its reset state first, then the state
after each decision. Per-row arrays keep the narrowest dtype that holds Crafter's ranges when
they come from a columnar corpus (``STATE_DTYPES``; counts uint8 when every count of the
corpus is below 256, ``count_dtype``) and the episodes' own int32 otherwise.
Decision i of an episode is its row i (1-based); reset rows carry no actions, reward 0 and
``done`` False. The 2-D state arrays are (rows, columns) but stored column by column (each
column contiguous, as Arrow and Parquet hold it): a corpus's columns are read by copying
whole columns, and scoring scans one column at a time. The achievement status is ``achievement_counts > 0``
(Crafter's definition, which ``check_values`` enforces on every stored corpus) unless an
episode in memory carried its own.

A ``ColumnStore`` is the in-memory form of a columnar corpus: one ``DecisionArrays`` of all its
episodes, per-episode extras, and an ``episode(k)`` that builds an ``Episode`` view on demand.
``check_values`` is the one place Crafter's value ranges are enforced (when writing and when
reading a corpus).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.crafter_facts import ACHIEVEMENTS, ACTIONS, INVENTORY_ITEMS
from workbench.episodes.model import Episode, Frames
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

    def decision_done(self) -> np.ndarray:
        """``done`` per decision (N,)."""
        return self.done[self.is_decision]

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


@dataclass(frozen=True)
class EpisodeExtras:
    """What an episode holds besides its state columns (see ``Episode``): its id, ``metadata``,
    ``logged``, ``views``, ``messages`` and a ``frames_loader`` (None without frames)."""

    id: str
    metadata: dict[str, Any]
    logged: dict[str, Any] | None = None
    views: list[str] | None = None
    messages: list[str] | None = None
    frames_loader: Callable[[], Frames] | None = None

    @staticmethod
    def of(episode: Episode) -> EpisodeExtras:
        """An in-memory episode's extras (its frames loader reads without keeping them)."""
        loader = (lambda: episode.load_frames(keep=False)) if episode.has_frames else None
        return EpisodeExtras(episode.id, episode.metadata, episode.logged, episode.views, episode.messages, loader)


class ColumnStore:
    """A columnar corpus in memory: ``arrays`` (all its episodes' rows) and ``episode(k)``, an
    ``Episode`` built on demand from episode k's rows and ``extras(k)`` (an ``EpisodeExtras``).

    A store opened from disk may hold only its episodes' ids and lengths and the ``events``
    (``workbench.episodes.events``, one dict per batch of whole episodes) it computed while
    reading; its ``arrays`` are then read by ``load_arrays`` when first asked for, and kept.

    Built episodes are shared while anyone holds them and the last few are kept, so touching an
    episode's frames twice in a row reads them once, while iterating a million-decision corpus
    never holds all its episodes."""

    _KEEP = 8

    def __init__(
        self,
        arrays: DecisionArrays | None,
        extras: Callable[[int], EpisodeExtras],
        *,
        load_arrays: Callable[[], DecisionArrays] | None = None,
        ids: Sequence[str] | None = None,
        lengths: np.ndarray | None = None,
        events: list[dict[str, np.ndarray]] | None = None,
    ) -> None:
        if arrays is None and (load_arrays is None or ids is None or lengths is None):
            raise ValueError("a ColumnStore needs its arrays, or load_arrays with the episodes' ids and lengths")
        self._arrays = arrays
        self._load_arrays = load_arrays
        self.ids = tuple(arrays.ids if arrays is not None else ids or ())
        self.lengths = np.asarray(arrays.lengths if arrays is not None else lengths, dtype=np.int64)
        self.row_starts = np.concatenate([[0], np.cumsum(self.lengths + 1)[:-1]]).astype(np.int64)
        self.events = events
        self.extras = extras
        self._shared: weakref.WeakValueDictionary[int, Episode] = weakref.WeakValueDictionary()
        self._recent: OrderedDict[int, Episode] = OrderedDict()

    @property
    def arrays(self) -> DecisionArrays:
        """All the store's state rows (read on first use when the store was opened lazily)."""
        if self._arrays is None:
            assert self._load_arrays is not None
            self._arrays = self._load_arrays()
        return self._arrays

    @property
    def has_arrays(self) -> bool:
        """Whether ``arrays`` are in memory already."""
        return self._arrays is not None

    def __len__(self) -> int:
        return len(self.ids)

    def rows_of(self, k: int) -> tuple[int, int]:
        """(first, last + 1) rows of episode k."""
        first = int(self.row_starts[k])
        return first, first + int(self.lengths[k]) + 1

    def episode(self, k: int) -> Episode:
        """Episode k (see the class docstring for how long it is kept)."""
        episode = self._shared.get(k)
        if episode is None:
            extras = self.extras(k)
            episode = Episode(
                id=extras.id,
                metadata=extras.metadata,
                logged=extras.logged,
                views=extras.views,
                messages=extras.messages,
                frames_loader=extras.frames_loader,
                **self.episode_arrays(k),
            )
            self._shared[k] = episode
        self._recent[k] = episode
        self._recent.move_to_end(k)
        while len(self._recent) > self._KEEP:
            self._recent.popitem(last=False)
        return episode

    def episode_arrays(self, k: int) -> dict[str, Any]:
        """Episode k's ``Episode`` fields from the columns: row-major copies of its rows, and its actions."""
        first, last = self.rows_of(k)
        a = self.arrays
        offsets = a.action_offsets[first : last + 1]
        ids = a.action_ids[int(offsets[0]) : int(offsets[-1])].tolist()
        bounds = (offsets - offsets[0]).tolist()
        actions = [[ACTIONS[i] for i in ids[bounds[r] : bounds[r + 1]]] for r in range(1, last - first)]
        counts = a.achievement_counts[first:last]
        status = counts > 0 if a.stored_status is None else a.stored_status[first:last]
        return {
            "inventory": np.ascontiguousarray(a.inventory[first:last]),
            "achievement_counts": np.ascontiguousarray(counts),
            "achievement_status": np.ascontiguousarray(status),
            "player_pos": np.ascontiguousarray(a.player_pos[first:last]),
            "env_reward": a.env_reward[first + 1 : last],
            "done": a.done[first + 1 : last],
            "actions": actions,
        }
