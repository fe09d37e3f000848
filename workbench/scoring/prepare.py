"""``prepare``: the weight-independent arrays of a corpus (unlock events, resource gains), cached per corpus."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.episodes import Corpus, DecisionArrays
from workbench.errors import CorpusError, EpisodeError

N_ACHIEVEMENTS = len(ACHIEVEMENTS)
N_ITEMS = len(INVENTORY_ITEMS)
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
    Per decision (N): ``episode_of`` (episode position), ``decision`` (1-based within its
    episode), ``env_reward``, ``n_unlocked`` (names turning true), ``n_first`` (names unlocked
    for the first time this episode: the rollout's ``unique_delta``).
    Unlock events (U, by decision then Crafter order, which is the status map's order):
    ``unlock_decision``, ``unlock_name`` (0..21), ``unlock_ordinal`` (earlier unlocks of the same
    name in the episode), ``unlock_first``.
    Resource gains (G, by decision, inventory items then counts, each in Crafter order):
    ``gain_decision``, ``gain_slot`` (0..15 item, 16..37 achievement count: the order in which
    a decision lists its resource components), ``gain_delta`` (> 0).
    Active decisions (A), the only ones that can pay or set the indicator (something unlocked
    or rose): ``active`` (sorted global indices), ``active_episode``, ``active_unlocking``; and
    each unlock's and gain's position among them, ``unlock_active`` and ``gain_active``.
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
    episode_of: np.ndarray
    decision: np.ndarray
    env_reward: np.ndarray
    n_unlocked: np.ndarray
    n_first: np.ndarray
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
        return len(self.episode_of)

    def name_lists(self, status: str) -> list[list[str]]:
        """Per episode, the names true in a per-episode status array (``"final_status"``,
        ``"seen_status"``, ...), sorted as the rollout's summary lists them."""
        if status not in self._names:
            rows, columns = np.nonzero(getattr(self, status))
            names = np.array(ACHIEVEMENTS, dtype=object)[columns]
            bounds = np.cumsum(np.bincount(rows, minlength=self.n_episodes))[:-1]
            self._names[status] = [part.tolist() for part in np.split(names, bounds)]
        return [list(names) for names in self._names[status]]

    def episode_column(self, episode_of: np.ndarray) -> pd.Categorical:
        """Episode ids for rows given by episode position: categorical, so a million rows cost
        a million small ints rather than a million strings."""
        return pd.Categorical.from_codes(episode_of, categories=pd.Index(self.ids, dtype=object))


_PREPARED: weakref.WeakKeyDictionary[Corpus, PreparedCorpus] = weakref.WeakKeyDictionary()


def prepare(corpus: Corpus) -> PreparedCorpus:
    """The weight-independent arrays of ``corpus``, computed once per ``Corpus`` object.

    The cache holds the corpus weakly and assumes its episodes are not modified in place
    (build a new ``Corpus`` after editing episodes). Raises ``CorpusError`` for an empty corpus and
    ``EpisodeError`` for an episode without decisions.
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
    batches: list[dict[str, Any]] = []
    first_decision = 0
    # Whole state columns, batch by batch: zero-copy slices of a columnar corpus's arrays.
    for first_episode, arrays in corpus.decision_batches(_BATCH_DECISIONS):
        batches.append(_prepare_batch(arrays, first_decision, first_episode))
        first_decision += arrays.n_decisions
    joined = {key: np.concatenate([b[key] for b in batches]) for key in batches[0] if key != "ids"}
    joined.update(_active_decisions(joined))
    for array in joined.values():
        array.flags.writeable = False
    counts_source = tuple(corpus.index["counts"].fillna("observed").astype(str))
    ids = tuple(i for b in batches for i in b["ids"])
    return PreparedCorpus(ids=ids, steps=steps, counts_source=counts_source, **joined)  # type: ignore[arg-type]


def _prepare_batch(arrays: DecisionArrays, first_decision: int, first_episode: int) -> dict[str, Any]:
    """The prepared arrays of some whole episodes, their decisions numbered from ``first_decision``.

    ``arrays`` stacks the episodes' states (row ``row_starts[k]`` is episode k's reset state),
    so each decision is the transition between two consecutive rows; the transitions from one
    episode's last row to the next one's reset row are dropped.
    """
    lengths = arrays.lengths
    n, e = int(lengths.sum()), len(lengths)
    row_starts = arrays.row_starts
    row_ends = row_starts + lengths  # last state row of each episode
    decision_of = np.arange(n + e - 1, dtype=np.int64)  # transition row -> local decision, -1 across episodes
    decision_of -= np.repeat(np.arange(e), lengths + 1)[:-1]
    decision_of[row_ends[:-1]] = -1
    local_episode = np.repeat(np.arange(e, dtype=np.int64), lengths)
    status = arrays.achievement_status

    # Unlocks: status truthy now and not before, per name (as the task app finds them), listed by
    # decision, then in the status map's (Crafter's) order.
    rows, names, _ = _transitions(status[1:] & ~status[:-1], decision_of)
    ordinal = _group_ordinal(local_episode[rows] * N_ACHIEVEMENTS + names)
    reset_status, final_status = status[row_starts], status[row_ends]
    # Seen by the rollout = true after reset or unlocked before; an unlock is new to it exactly
    # when it is the name's first unlock this episode and the name was not true at reset.
    first = (ordinal == 0) & ~reset_status[local_episode[rows], names]
    seen = reset_status.copy()
    seen[local_episode[rows], names] = True
    # Rows after reset, per episode: reduceat over [start + 1, next start) and the reset rows between.
    segments = np.empty(2 * e - 1, dtype=np.int64)
    segments[0::2], segments[1::2] = row_starts + 1, row_starts[1:]
    ever_status = np.logical_or.reduceat(status, segments, axis=0)[0::2]

    gain_rows, gain_slots, gain_deltas = _resource_gains(arrays, decision_of)
    starts = first_decision + np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return {
        "ids": list(arrays.ids),
        "starts": starts,
        "lengths": lengths,
        "env_return": arrays.env_return,
        "reset_status": reset_status,
        "final_status": final_status,
        "ever_status": ever_status,
        "seen_status": seen,
        "episode_of": (local_episode + first_episode).astype(np.int32),
        "decision": (np.arange(n, dtype=np.int64) - np.repeat(starts - first_decision, lengths) + 1).astype(np.int32),
        "env_reward": arrays.decision_env_reward(),
        "n_unlocked": np.bincount(rows, minlength=n).astype(np.int32),
        "n_first": np.bincount(rows[first], minlength=n).astype(np.int32),
        "unlock_decision": rows + first_decision,
        "unlock_name": names.astype(np.int8),
        "unlock_ordinal": ordinal,
        "unlock_first": first,
        "gain_decision": gain_rows + first_decision,
        "gain_slot": gain_slots,
        "gain_delta": gain_deltas,
    }


def _active_decisions(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The decisions where something unlocked or rose, and where each event falls among them."""
    happened = np.zeros(len(arrays["episode_of"]), dtype=bool)
    happened[arrays["unlock_decision"]] = True
    happened[arrays["gain_decision"]] = True
    active = np.flatnonzero(happened)
    return {
        "active": active,
        "active_episode": arrays["episode_of"][active],
        "active_unlocking": arrays["n_unlocked"][active] > 0,
        "unlock_active": np.searchsorted(active, arrays["unlock_decision"]),
        "gain_active": np.searchsorted(active, arrays["gain_decision"]),
        "new_achievements_total": np.bincount(
            arrays["episode_of"], weights=arrays["n_unlocked"], minlength=len(arrays["lengths"])
        ).astype(np.int64),
    }


def _transitions(mask: np.ndarray, decision_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(decision, column, flat index) of the true cells of a (transitions, columns) mask,
    row-major (by decision, then column), dropping transitions between episodes. A flat scan is
    several times faster than a 2-D ``nonzero``."""
    flat = np.flatnonzero(mask)
    transition, column = np.divmod(flat, mask.shape[1])
    decision = decision_of[transition]
    keep = decision >= 0
    return decision[keep], column[keep], flat[keep]


def _group_ordinal(keys: np.ndarray) -> np.ndarray:
    """For each element, how many earlier elements carry the same key (a vectorised cumcount)."""
    order = np.argsort(keys, kind="stable")
    ranked = keys[order]
    position = np.arange(len(keys))
    new_group = np.ones(len(keys), dtype=bool)
    new_group[1:] = ranked[1:] != ranked[:-1]
    group_start = np.maximum.accumulate(np.where(new_group, position, 0))
    ordinal = np.empty(len(keys), dtype=np.int32)
    ordinal[order] = position - group_start
    return ordinal


def _resource_gains(arrays: DecisionArrays, decision_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positive inventory and achievement-count deltas: (decision, slot, delta) listed by
    decision, inventory items before counts, each in Crafter order (the task app's order)."""
    parts = []
    for slot0, attribute in ((0, "inventory"), (N_ITEMS, "achievement_counts")):
        states = getattr(arrays, attribute)  # narrow unsigned dtypes on a columnar corpus
        rows, columns, flat = _transitions(states[1:] > states[:-1], decision_of)
        # Deltas only where something rose (a small fraction of the cells).
        deltas = states[1:].ravel()[flat].astype(np.int32) - states[:-1].ravel()[flat]
        parts.append((rows, columns + slot0, deltas))
    rows = np.concatenate([p[0] for p in parts])
    order = np.argsort(rows, kind="stable")  # stable: inventory stays before counts per decision
    return (
        rows[order],
        np.concatenate([p[1] for p in parts])[order].astype(np.int8),
        np.concatenate([p[2] for p in parts])[order].astype(np.int32),
    )


def as_prepared(corpus: Corpus | PreparedCorpus) -> PreparedCorpus:
    """``corpus`` itself when it is prepared already, else ``prepare(corpus)``."""
    return corpus if isinstance(corpus, PreparedCorpus) else prepare(corpus)
