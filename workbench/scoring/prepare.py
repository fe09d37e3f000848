"""``prepare``: the weight-independent arrays of a corpus (unlock events, resource gains), cached per corpus."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.episodes import Corpus
from workbench.data.episodes.events import DecisionEvents, decision_events
from workbench.errors import CorpusError, EpisodeError

#: Decisions read per batch in ``prepare``: small enough that the temporary state arrays (~8 MB)
#: stay in cache and are reused between batches (measured fastest at 1 << 14 .. 1 << 15).
_BATCH_DECISIONS = 1 << 15


@dataclass(frozen=True, eq=False)
class PreparedCorpus:
    """Everything scoring needs from a corpus that no config changes. Arrays are read-only.

    Decisions are numbered globally (episode after episode, in corpus order).

    Per episode (E): ``ids``, ``starts`` (global index of the first decision), ``lengths``
    (decisions), ``steps`` (env steps, from ``corpus.index``), ``env_return``,
    ``new_achievements_total``, and (E, 22) bool ``reset_status`` / ``final_status`` /
    ``ever_status`` / ``seen_status``: true after reset, at the end, in some state after reset,
    and seen by the rollout (true after reset or unlocked at some decision).
    Per decision (N), built on first use from the events (a million decisions cost nothing
    until a per-decision table asks): ``episode_of`` (episode position), ``decision`` (1-based
    within its episode), ``env_reward``, ``n_unlocked`` (names turning true), ``n_first``
    (names unlocked for the first time this episode: the rollout's ``unique_delta``). Crafter's
    reward is kept where it is not 0.0: ``reward_decision`` (sorted) and ``reward_value``.
    Unlock events (U, by decision then Crafter order, which is the status map's order):
    ``unlock_decision``, ``unlock_name`` (0..21), ``unlock_ordinal`` (earlier unlocks of the same
    name in the episode), ``unlock_first``.
    Resource gains (G, by decision, inventory items then counts, each in Crafter order):
    ``gain_decision``, ``gain_slot`` (0..15 item, 16..37 achievement count: the order in which
    a decision lists its resource components), ``gain_delta`` (> 0).
    Active decisions (A), the only ones that can pay or set the indicator (something unlocked
    or rose): ``active`` (sorted global indices), ``active_episode``, ``active_unlocking``; and
    each unlock's and gain's position among them, ``unlock_active`` and ``gain_active``.

    Attributes:
        ids: Episode ids (E).
        starts: Global index of each episode's first decision (E).
        lengths: Decisions per episode (E).
        steps: Env steps per episode (E).
        env_return: Crafter's return per episode (E).
        reset_status: (E, 22) true after reset.
        final_status: (E, 22) true at the end.
        ever_status: (E, 22) true in some state after reset.
        seen_status: (E, 22) true after reset or unlocked at some decision.
        reward_decision: Decisions where Crafter's reward is not 0.0 (sorted).
        reward_value: Crafter's reward there.
        unlock_decision: Each unlock's decision (U).
        unlock_name: Each unlock's achievement, 0..21 (U).
        unlock_ordinal: Earlier unlocks of the same name in the episode (U).
        unlock_first: Whether it is the name's first unlock this episode (U).
        gain_decision: Each resource gain's decision (G).
        gain_slot: 0..15 inventory item, 16..37 achievement count (G).
        gain_delta: The rise, > 0 (G).
        active: Global indices of active decisions, sorted (A).
        active_episode: Each active decision's episode position (A).
        active_unlocking: Whether it unlocks something (A).
        unlock_active: Each unlock's position among active decisions (U).
        gain_active: Each gain's position among active decisions (G).
        new_achievements_total: Unlocks per episode (E).
        counts_source: Where each episode's counts come from (``COUNT_SOURCES``).
    """

    ids: tuple[str, ...]
    starts: np.ndarray
    lengths: np.ndarray
    steps: np.ndarray
    env_return: np.ndarray
    reset_status: np.ndarray
    final_status: np.ndarray
    ever_status: np.ndarray
    seen_status: np.ndarray
    reward_decision: np.ndarray
    reward_value: np.ndarray
    unlock_decision: np.ndarray
    unlock_name: np.ndarray
    unlock_ordinal: np.ndarray
    unlock_first: np.ndarray
    gain_decision: np.ndarray
    gain_slot: np.ndarray
    gain_delta: np.ndarray
    active: np.ndarray
    active_episode: np.ndarray
    active_unlocking: np.ndarray
    unlock_active: np.ndarray
    gain_active: np.ndarray
    new_achievements_total: np.ndarray
    #: Per episode, where its achievement counts come from (``episodes.COUNT_SOURCES``).
    counts_source: tuple[str, ...] = ()
    _names: dict[str, list[list[str]]] = field(default_factory=dict, repr=False)

    # -- per-decision arrays, built on first use ---------------------------------------------
    @cached_property
    def episode_of(self) -> np.ndarray:
        """(N,) int32: the episode position of each decision."""
        return _read_only(np.repeat(np.arange(self.n_episodes, dtype=np.int32), self.lengths))

    @cached_property
    def decision(self) -> np.ndarray:
        """(N,) int32: each decision's number within its episode (1-based)."""
        local = np.arange(1, self.n_decisions + 1, dtype=np.int64) - np.repeat(self.starts, self.lengths)
        return _read_only(local.astype(np.int32))

    @cached_property
    def env_reward(self) -> np.ndarray:
        """(N,) float64: Crafter's reward per decision (``Episode.env_reward`` stacked)."""
        values = np.zeros(self.n_decisions)
        values[self.reward_decision] = self.reward_value
        return _read_only(values)

    @cached_property
    def n_unlocked(self) -> np.ndarray:
        """(N,) int32: names turning true at each decision."""
        return _read_only(np.bincount(self.unlock_decision, minlength=self.n_decisions).astype(np.int32))

    @cached_property
    def n_first(self) -> np.ndarray:
        """(N,) int32: names unlocked for the first time this episode at each decision."""
        first = self.unlock_decision[self.unlock_first]
        return _read_only(np.bincount(first, minlength=self.n_decisions).astype(np.int32))

    @cached_property
    def unlocking_positions(self) -> np.ndarray:
        """(D,) the positions among the active decisions of those that unlock something."""
        return _read_only(np.flatnonzero(self.active_unlocking))

    @cached_property
    def unlock_group(self) -> np.ndarray:
        """(U,) each unlock's decision as a position in ``unlocking_positions``."""
        return _read_only(np.searchsorted(self.unlocking_positions, self.unlock_active))

    def __repr__(self) -> str:
        return (
            f"<PreparedCorpus: {self.n_episodes} episodes, {self.n_decisions} decisions, "
            f"{len(self.unlock_name)} unlocks, {len(self.gain_slot)} resource gains>"
        )

    @property
    def n_episodes(self) -> int:
        """How many episodes the corpus holds."""
        return len(self.ids)

    @property
    def n_decisions(self) -> int:
        """How many decisions all episodes hold together."""
        return int(self.lengths.sum())

    def _name_lists(self, status: str) -> list[list[str]]:
        """Per episode, the names true in a per-episode status array (``"final_status"``,
        ``"seen_status"``, ...), sorted as the rollout's summary lists them (shared lists)."""
        if status not in self._names:
            rows = getattr(self, status)
            # Episodes share few distinct sets of names: build each set's list once.
            keys = rows.astype(np.int64) @ (np.int64(1) << np.arange(rows.shape[1], dtype=np.int64))
            distinct, inverse = np.unique(keys, return_inverse=True)
            names = [[ACHIEVEMENTS[j] for j in range(rows.shape[1]) if key >> j & 1] for key in distinct.tolist()]
            self._names[status] = [names[i] for i in inverse.tolist()]
        return self._names[status]

    @cached_property
    def episode_columns(self) -> dict[str, Any]:
        """The columns of ``Scores.episodes`` that no config changes, built once per corpus.
        Every ``Scores`` of this corpus shares the name lists: read them, do not edit them."""

        def names(status: str) -> np.ndarray:
            column = np.empty(self.n_episodes, dtype=object)
            column[:] = self._name_lists(status)
            return column

        return {
            "episode": pd.array(list(self.ids), dtype="str"),
            "decisions": self.lengths,
            "steps": self.steps,
            "env_return": self.env_return,
            "new_achievements_total": self.new_achievements_total,
            "unique_achievements_total": self.seen_status.sum(axis=1).astype(np.int64),
            "unique_achievements": names("seen_status"),
            "final_achievements": names("final_status"),
            "counts": pd.array(list(self.counts_source or ("observed",) * self.n_episodes), dtype="str"),
        }

    def episode_column(self, episode_of: np.ndarray) -> pd.Categorical:
        """Episode ids for rows given by episode position: categorical, so a million rows cost
        a million small ints rather than a million strings.

        Args:
            episode_of: An episode position per row.

        Returns:
            The ids, one per row.
        """
        return pd.Categorical.from_codes(episode_of, categories=pd.Index(self.ids, dtype=object))


_PREPARED: weakref.WeakKeyDictionary[Corpus, PreparedCorpus] = weakref.WeakKeyDictionary()


def prepare(corpus: Corpus) -> PreparedCorpus:
    """The weight-independent arrays of ``corpus``, computed once per ``Corpus`` object.

    The cache holds the corpus weakly and assumes its episodes are not modified in place
    (build a new ``Corpus`` after editing episodes).

    Args:
        corpus: The episodes.

    Returns:
        The prepared arrays (the same object for the same ``Corpus``).

    Raises:
        CorpusError: The corpus is empty.
        EpisodeError: An episode has no decision; names it.
    """
    cached = _PREPARED.get(corpus)
    if cached is None:
        cached = _PREPARED[corpus] = _prepare(corpus)
    return cached


def _prepare(corpus: Corpus) -> PreparedCorpus:
    if len(corpus) == 0:
        raise CorpusError("cannot score an empty corpus: it has no episodes")
    steps = corpus.index["steps"].to_numpy(dtype=np.int64)
    empty = corpus.index["decisions"] == 0
    if empty.any():
        episode = corpus.index.loc[empty, "episode"].iloc[0]
        raise EpisodeError(f"episode {episode!r} has no decisions; every scored episode needs at least one")
    # A corpus opened from disk computed its events while reading; otherwise whole state
    # columns, batch by batch (zero-copy slices of a columnar corpus's arrays).
    batches = corpus.stored_events()
    if batches is None:
        batches = []
        first_decision = 0
        for first_episode, arrays in corpus.decision_batches(_BATCH_DECISIONS):
            batches.append(decision_events(arrays, first_decision, first_episode))
            first_decision += arrays.n_decisions
    # one batch (a corpus read from disk) is used as it is: its arrays become read-only below
    joined = DecisionEvents.join(batches).arrays()
    joined.update(_active_decisions(joined, int(corpus.index["decisions"].sum()), len(corpus)))
    for array in joined.values():
        array.flags.writeable = False
    counts_source = tuple(corpus.index["counts"].fillna("observed").astype(str).tolist())
    ids = tuple(corpus.index["episode"].tolist())  # tolist: iterating a str column is 20x slower
    return PreparedCorpus(ids=ids, steps=steps, counts_source=counts_source, **joined)  # type: ignore[arg-type]


def _active_decisions(arrays: dict[str, np.ndarray], n_decisions: int, n_episodes: int) -> dict[str, np.ndarray]:
    """The decisions where something unlocked or rose, and where each event falls among them."""
    unlock_decision, gain_decision = arrays["unlock_decision"], arrays["gain_decision"]
    # Both are sorted. Where every unlock is also a gain (always, when the status is counts > 0)
    # the active decisions are the gains' distinct decisions, numbered by a running count;
    # otherwise they are found in a mask over all decisions.
    first_gain = np.ones(len(gain_decision), dtype=bool)
    first_gain[1:] = gain_decision[1:] != gain_decision[:-1]
    gained = gain_decision[first_gain]
    unlock_active = np.searchsorted(gained, unlock_decision)
    if len(gained) and (unlock_active < len(gained)).all() and (gained[unlock_active] == unlock_decision).all():
        active = gained
        gain_active = np.cumsum(first_gain) - 1
    else:
        happened = np.zeros(n_decisions, dtype=bool)
        happened[unlock_decision] = True
        happened[gain_decision] = True
        active = np.flatnonzero(happened)
        unlock_active = np.searchsorted(active, unlock_decision)
        gain_active = np.searchsorted(active, gain_decision)
    unlocking = np.zeros(len(active), dtype=bool)
    unlocking[unlock_active] = True
    # intp: bincount takes an index array of another type only through a converted copy, per score
    active_episode = np.searchsorted(arrays["starts"], active, side="right") - 1
    unlock_episode = np.searchsorted(arrays["starts"], unlock_decision, side="right") - 1
    return {
        "active": active,
        "active_episode": active_episode,
        "active_unlocking": unlocking,
        "unlock_active": unlock_active,
        "gain_active": gain_active,
        "new_achievements_total": np.bincount(unlock_episode, minlength=n_episodes).astype(np.int64),
    }


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def as_prepared(corpus: Corpus | PreparedCorpus) -> PreparedCorpus:
    """``corpus`` itself when it is prepared already, else ``prepare(corpus)``."""
    return corpus if isinstance(corpus, PreparedCorpus) else prepare(corpus)
