"""A columnar corpus in memory: ``ColumnStore`` (its episodes' arrays, or how to read them) and ``EpisodeExtras``.

A ``ColumnStore`` is the in-memory form of a columnar corpus: one ``DecisionArrays`` of all its
episodes (held, or read when first asked for), per-episode extras, the events it computed while
opening, and an ``episode(k)`` that builds an ``Episode`` view on demand.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.crafter_facts import ACTIONS
from workbench.data.episodes.columns import DecisionArrays
from workbench.data.episodes.events import DecisionEvents
from workbench.data.episodes.model import Episode, Frames


@dataclass(frozen=True)
class EpisodeExtras:
    """What an episode holds besides its state columns (the same fields of ``Episode``).

    Attributes:
        id: The episode's id.
        metadata: Source, policy, seed and the like.
        logged: An imported rollout's log (its step_rewards ``config`` and ``stepwise``), or None.
        views: The text map view of each state, or None.
        messages: What the model said for each decision, or None.
        frames_loader: Reads the episode's frames; None for an episode without frames.
        calls: Each decision's tool calls as JSON text, or None.
    """

    id: str
    metadata: dict[str, Any]
    logged: dict[str, Any] | None = None
    views: list[str] | None = None
    messages: list[str] | None = None
    frames_loader: Callable[[], Frames] | None = None
    calls: list[str] | None = None

    @staticmethod
    def of(episode: Episode) -> EpisodeExtras:
        """An in-memory episode's extras (its frames loader reads without keeping them).

        Args:
            episode: The episode (its fields are shared, not copied).

        Returns:
            The episode's id, metadata, log, texts and a frames loader (None without frames).
        """
        loader = (lambda: episode.load_frames(keep=False)) if episode.has_frames else None
        return EpisodeExtras(
            episode.id, episode.metadata, episode.logged, episode.views, episode.messages, loader, episode.calls
        )


class ColumnStore:
    """A columnar corpus in memory: ``arrays`` (all its episodes' rows) and ``episode(k)``, an
    ``Episode`` built on demand from episode k's rows and ``extras(k)`` (an ``EpisodeExtras``).

    A store opened from disk may hold only its episodes' ids and lengths and the ``events``
    (``workbench.data.episodes.events``, one ``DecisionEvents`` per batch of whole episodes) it computed while
    reading; its ``arrays`` are then read by ``load_arrays`` when first asked for, and kept.

    Built episodes are shared while anyone holds them and the last few are kept, so touching an
    episode's frames twice in a row reads them once, while iterating a million-decision corpus
    never holds all its episodes.

    Args:
        arrays: All the episodes' rows, or None to read them later with ``load_arrays``.
        extras: Episode k's extras, by position.
        metadata: Episode k's metadata alone, by position (by default ``extras(k).metadata``;
            a store opened from disk reads it without the episode's texts).
        load_arrays: Reads ``arrays`` when first asked for (required when ``arrays`` is None).
        ids: The episodes' ids (required when ``arrays`` is None; else taken from it).
        lengths: (E,) each episode's decisions (required when ``arrays`` is None).
        events: One ``DecisionEvents`` per batch of whole episodes, computed while opening,
            or None.

    Raises:
        ValueError: Neither ``arrays`` nor ``load_arrays`` with ``ids`` and ``lengths``.
    """

    _KEEP = 8

    def __init__(
        self,
        arrays: DecisionArrays | None,
        extras: Callable[[int], EpisodeExtras],
        *,
        metadata: Callable[[int], dict[str, Any]] | None = None,
        load_arrays: Callable[[], DecisionArrays] | None = None,
        ids: Sequence[str] | None = None,
        lengths: np.ndarray | None = None,
        events: list[DecisionEvents] | None = None,
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
        self.metadata = metadata if metadata is not None else lambda k: extras(k).metadata
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
        """The rows of episode k in ``arrays``.

        Args:
            k: The episode's position (0-based).

        Returns:
            (first, last + 1): its reset row and one past its last decision's row.
        """
        first = int(self.row_starts[k])
        return first, first + int(self.lengths[k]) + 1

    def episode(self, k: int) -> Episode:
        """Episode k (see the class docstring for how long it is kept).

        Args:
            k: The episode's position (0-based).

        Returns:
            The episode built from its rows and extras (the same object while anyone holds it).
        """
        episode = self._shared.get(k)
        if episode is None:
            extras = self.extras(k)
            episode = Episode(
                id=extras.id,
                metadata=extras.metadata,
                logged=extras.logged,
                views=extras.views,
                messages=extras.messages,
                calls=extras.calls,
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
        """Episode k's ``Episode`` fields from the columns: row-major copies of its rows, and its actions.

        Args:
            k: The episode's position (0-based).

        Returns:
            ``inventory``, ``achievement_counts``, ``achievement_status``, ``player_pos`` (copies,
            n + 1 rows), ``env_reward`` and ``done`` (views, n rows) and ``actions`` (n lists of
            Crafter action names), n the episode's decisions.
        """
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
