"""The events of some whole episodes' states: unlocks, resource gains, Crafter's rewards.

``decision_events`` scans each state column of a ``DecisionArrays`` once and returns what no
config changes (a ``DecisionEvents``): per episode (E) its ``starts`` (first decision), ``lengths``, ``env_return``
and (E, 22) status rows (``reset_status``, ``final_status``, ``ever_status``, ``seen_status``);
the unlock events (``unlock_decision``, ``unlock_name``, ``unlock_ordinal``,
``unlock_first``), the resource gains (``gain_decision``, ``gain_slot``, ``gain_delta``) and Crafter's non-zero rewards
(``reward_decision``, ``reward_value``). ``workbench.scoring.prepare`` joins them into a
``PreparedCorpus`` (its docstring says what each means); a columnar corpus computes them while
it opens (``workbench.data.storage``), so the state columns need not stay in memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes.columns import DecisionArrays

N_ACHIEVEMENTS = len(ACHIEVEMENTS)
N_ITEMS = len(INVENTORY_ITEMS)
#: The version of what ``decision_events`` derives from a batch of states. A stored events
#: table records the version that made it and is used only when it is this one: raise it with
#: any change to what the function returns for the same states (a fix, a new event), so that
#: tables made by the older code are read from their decisions again (``workbench corpus events``
#: rewrites them).
EVENTS_VERSION = 1


@dataclass(frozen=True)
class DecisionEvents:
    """What no config changes of some whole episodes' states (``decision_events``), decisions
    numbered across them. Per episode (E): ``starts`` (first decision, int64), ``lengths``,
    ``env_return`` and four (E, 22) bool status rows; per event, sorted by decision:

    Attributes:
        starts: Each episode's first decision.
        lengths: Each episode's number of decisions.
        env_return: Each episode's Crafter return.
        reset_status: Achievement status after reset.
        final_status: Achievement status at the episode's end.
        ever_status: True in some state after reset.
        seen_status: Seen by the rollout (true after reset or unlocked before).
        reward_decision: Decisions where Crafter's reward is not +0.0.
        reward_value: Those rewards.
        unlock_decision: Decisions where an achievement unlocked (by decision, then Crafter's order).
        unlock_name: The achievement's index (int8).
        unlock_ordinal: How many unlocks of that name came before it in its episode (int32).
        unlock_first: Whether it is new to the rollout (first unlock, not true at reset).
        gain_decision: Decisions where an inventory item or achievement count rose.
        gain_slot: The slot: inventory items, then counts (int8).
        gain_delta: By how much (int32, positive).
    """

    starts: np.ndarray
    lengths: np.ndarray
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

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays by field name, in the fields' order.

        Returns:
            A new dict holding the same arrays (not copies).
        """
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @classmethod
    def join(cls, batches: Sequence[DecisionEvents]) -> DecisionEvents:
        """The events of consecutive batches as one (each array concatenated; one batch as it is).

        Args:
            batches: Events of consecutive episodes, numbered across them.

        Returns:
            The joined events.

        Raises:
            ValueError: No batch.
        """
        if not batches:
            raise ValueError("DecisionEvents.join needs at least one batch")
        if len(batches) == 1:
            return batches[0]
        return cls(**{name: np.concatenate([getattr(b, name) for b in batches]) for name in EVENT_FIELDS})


#: The field names of ``DecisionEvents``, in order.
EVENT_FIELDS = tuple(field.name for field in fields(DecisionEvents))


def decision_events(arrays: DecisionArrays, first_decision: int = 0, first_episode: int = 0) -> DecisionEvents:
    """The events of some whole episodes (see the module), decisions numbered from
    ``first_decision`` and episodes from ``first_episode``.

    ``arrays`` stacks the episodes' states (row ``row_starts[k]`` is episode k's reset state),
    so each decision is the transition between two consecutive rows; the transitions from one
    episode's last row to the next one's reset row are dropped. Each state column is scanned
    once, where it rose (``_rises``); everything else is computed from those few events.
    """
    lengths = arrays.lengths
    rows = _Rows(arrays.row_starts, lengths)
    counts = arrays.achievement_counts
    gain_rows, gain_slots, gain_deltas, gain_before = _resource_gains(arrays, rows)
    if arrays.stored_status is None:
        # Status is counts > 0: a name unlocks exactly where its count rises from 0, and those
        # rises are among the gains already found, in the same (decision, name) order.
        from_zero = (gain_slots >= N_ITEMS) & (gain_before == 0)
        unlock_rows, names = gain_rows[from_zero], (gain_slots[from_zero] - N_ITEMS).astype(np.int64)

        def status_at(state_rows: np.ndarray) -> np.ndarray:
            return counts[state_rows] > 0
    else:
        # Unlocks: status truthy now and not before, per name (as the task app finds them),
        # listed by decision, then in the status map's (Crafter's) order.
        unlock_rows, names, _, _ = _rises(arrays.stored_status, rows)
        stored = arrays.stored_status

        def status_at(state_rows: np.ndarray) -> np.ndarray:
            return stored[state_rows]

    unlock_episode = rows.episode_of_decision(unlock_rows)
    ordinal = _group_ordinal(unlock_episode * N_ACHIEVEMENTS + names)
    reset_status, final_status = status_at(rows.starts), status_at(rows.ends)
    # Seen by the rollout = true after reset or unlocked before; an unlock is new to it exactly
    # when it is the name's first unlock this episode and the name was not true at reset.
    first = (ordinal == 0) & ~reset_status[unlock_episode, names]
    seen = reset_status.copy()
    seen[unlock_episode, names] = True
    # True in some state after reset: in the first one, or turned true at a later decision.
    ever_status = status_at(rows.starts + 1)
    ever_status[unlock_episode, names] = True
    reward_rows, reward_values = _nonzero_rewards(arrays.env_reward, rows)
    starts = first_decision + np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return DecisionEvents(
        starts=starts,
        lengths=lengths,
        env_return=arrays.env_return,
        reset_status=reset_status,
        final_status=final_status,
        ever_status=ever_status,
        seen_status=seen,
        reward_decision=reward_rows + first_decision,
        reward_value=reward_values,
        unlock_decision=unlock_rows + first_decision,
        unlock_name=names.astype(np.int8),
        unlock_ordinal=ordinal,
        unlock_first=first,
        gain_decision=gain_rows + first_decision,
        gain_slot=gain_slots,
        gain_delta=gain_deltas,
    )


class _Rows:
    """Where a batch's episodes sit among its state rows, and which decision a transition is."""

    def __init__(self, row_starts: np.ndarray, lengths: np.ndarray) -> None:
        self.starts = row_starts
        self.ends = row_starts + lengths  # last state row of each episode

    def decisions(self, transitions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For transitions (row t to t + 1): which of them are decisions (not one episode's last
        row to the next reset row), and those decisions' batch-local indices (0-based)."""
        episode = np.searchsorted(self.starts, transitions, side="right") - 1
        keep = transitions != self.ends[episode]
        # Episode k's rows start at (its first decision) + k: one reset row per earlier episode.
        return keep, transitions[keep] - episode[keep]

    def episode_of_decision(self, decisions: np.ndarray) -> np.ndarray:
        """Batch-local episode position of batch-local decision indices (int64)."""
        first_decisions = self.starts - np.arange(len(self.starts))
        return np.searchsorted(first_decisions, decisions, side="right").astype(np.int64) - 1


def _rises(states: np.ndarray, rows: _Rows) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where a (rows, columns) state array rose from one row to the next within an episode:
    (decision, column, value before, value after), by decision then column. Scans column by
    column (the arrays are column-major), then orders the few rises found."""
    rose = np.greater(states[1:], states[:-1], order="F")
    flat = np.flatnonzero(rose.T)  # the transpose is row-major: column after column
    column, transition = np.divmod(flat, len(rose))
    keep, decision = rows.decisions(transition)
    column, transition = column[keep], transition[keep]
    order = np.argsort(decision * states.shape[1] + column, kind="stable")
    decision, column, transition = decision[order], column[order], transition[order]
    return decision, column, states[transition, column], states[transition + 1, column]


def _nonzero_rewards(env_reward: np.ndarray, rows: _Rows) -> tuple[np.ndarray, np.ndarray]:
    """Crafter's reward where it is not +0.0 (a -0.0 is kept): batch-local decisions and values."""
    state_rows = np.flatnonzero((env_reward != 0) | np.signbit(env_reward))
    episode = np.searchsorted(rows.starts, state_rows, side="right") - 1
    decision_rows = state_rows != rows.starts[episode]  # a reset row is no decision
    return state_rows[decision_rows] - episode[decision_rows] - 1, env_reward[state_rows[decision_rows]]


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


def _resource_gains(arrays: DecisionArrays, rows: _Rows) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Positive inventory and achievement-count deltas: (decision, slot, delta, value before)
    listed by decision, inventory items before counts, each in Crafter order (the task app's order)."""
    parts = []
    for slot0, states in ((0, arrays.inventory), (N_ITEMS, arrays.achievement_counts)):
        decision, column, before, after = _rises(states, rows)
        parts.append((decision, column + slot0, after.astype(np.int32) - before, before))
    decisions = np.concatenate([p[0] for p in parts])
    order = np.argsort(decisions, kind="stable")  # stable: inventory stays before counts per decision
    return (
        decisions[order],
        np.concatenate([p[1] for p in parts])[order].astype(np.int8),
        np.concatenate([p[2] for p in parts])[order].astype(np.int32),
        np.concatenate([p[3] for p in parts])[order].astype(np.int64),
    )
