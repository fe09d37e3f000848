"""Achievement counts for observations that carry none (the task app's text).

They are rebuilt exactly from the rises a per_achievement rollout logged, or estimated as lower
bounds from what the observations show, and labelled so (``metadata["counts"]``: ``logged`` or
``estimated``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS, MAKE_RULES, PLACE_RULES
from workbench.core.reward_rule import logs_rises

_ACHIEVEMENT = {name: k for k, name in enumerate(ACHIEVEMENTS)}
_ITEM = {item: k for k, item in enumerate(INVENTORY_ITEMS)}
#: collect_<x> achievements whose rise shows as an inventory rise of one item (Crafter's
#: ``collect`` rules: water gives drink, grass gives sapling; the rest give their own name).
_COLLECTED_ITEM = {
    "collect_coal": "coal",
    "collect_diamond": "diamond",
    "collect_drink": "drink",
    "collect_iron": "iron",
    "collect_sapling": "sapling",
    "collect_stone": "stone",
    "collect_wood": "wood",
}


#: ``MAKE_RULES`` as columns: each tool's inventory item, its make_ achievement, and the items
#: one make uses (a row per tool).
_MADE_ITEMS = np.array([_ITEM[tool] for tool in MAKE_RULES], dtype=np.intp)
_MADE_ACHIEVEMENTS = np.array([_ACHIEVEMENT[f"make_{tool}"] for tool in MAKE_RULES], dtype=np.intp)
_MAKE_USES = np.zeros((len(MAKE_RULES), len(INVENTORY_ITEMS)), dtype=np.int64)
for _row, _rule in enumerate(MAKE_RULES.values()):
    for _item, _amount in _rule["uses"].items():
        _MAKE_USES[_row, _ITEM[_item]] += int(_amount)
#: ``PLACE_RULES`` in order: the action, and (material item, amount, place_ achievement).
_PLACE_ACTIONS = [f"place_{name}" for name in PLACE_RULES]
_PLACES = [
    (_ITEM[item], int(amount), _ACHIEVEMENT[f"place_{name}"])
    for name, rule in PLACE_RULES.items()
    for ((item, amount),) in [tuple(rule["uses"].items())]
]
_COLLECTED_ITEMS = np.array([_ITEM[item] for item in _COLLECTED_ITEM.values()], dtype=np.intp)
_COLLECTED_ACHIEVEMENTS = np.array([_ACHIEVEMENT[name] for name in _COLLECTED_ITEM], dtype=np.intp)


def logged_counts(
    status: np.ndarray, stepwise: Sequence[Mapping[str, Any] | None], start: np.ndarray | None = None
) -> tuple[np.ndarray | None, str]:
    """Counts (n+1, 22) rebuilt from each decision's logged ``achievement_count_deltas``, or
    None with the reason when the log cannot pin them down.

    Crafter's counts start at 0 after reset and only rise, and under per_achievement the task
    app logs every rise of every decision (the key is left out when nothing rose), so the sum of
    the logged rises is the count exactly. ``start`` is the state the first decision was scored
    against when it is not this episode's reset (``on_done = "reset"``, quirk 7): its rises are
    then relative to the previous episode's end, and a count that did not rise above that end is
    known only when the status or a zero end pins it. ``status`` is (n+1, 22) booleans.
    """
    n = len(stepwise)
    if n == 0 or not all(logs_rises(s) for s in stepwise):
        return None, "not every decision logged a per_achievement info.stepwise"
    # Each decision's rises as a row (a few per decision, read in Python), then summed in one
    # numpy pass: a per-decision row copy and ``where`` took ~8 us a decision in numpy calls.
    rises = np.zeros((n, len(ACHIEVEMENTS)), dtype=np.int64)
    first = None  # decision 1's counts when it follows another episode's end
    for i, logged in enumerate(stepwise, start=1):
        deltas = logged.get("achievement_count_deltas") or {}  # type: ignore[union-attr]
        if type(deltas) is not dict and not isinstance(deltas, Mapping):  # dict first: no ABC check
            return None, f"decision {i}: achievement_count_deltas is not an object"
        row = rises[i - 1]
        for name, delta in deltas.items():
            if name not in _ACHIEVEMENT or not _is_rise(delta):
                return (
                    None,
                    f"decision {i}: achievement_count_deltas has {name!r}: {delta!r} (a positive rise of a Crafter achievement expected)",
                )
            row[_ACHIEVEMENT[name]] = int(delta)
        if i == 1 and start is not None:
            # Not risen above the previous end: 0 if locked, else pinned only by an end of 1.
            rose = row > 0
            ambiguous = status[1] & (start > 1) & ~rose
            if ambiguous.any():
                names = [ACHIEVEMENTS[k] for k in np.flatnonzero(ambiguous)]
                return None, f"decision {i} follows another episode's end and does not pin the counts of {names}"
            first = np.where(rose, start + row, np.where(status[1], 1, 0))
    counts = np.zeros((n + 1, len(ACHIEVEMENTS)), dtype=np.int64)
    if first is None:
        counts[1:] = np.cumsum(rises, axis=0)
    else:
        counts[1:] = first + np.cumsum(rises, axis=0) - rises[0]  # decision 1's rises are in ``first``
    disagree = np.flatnonzero(((counts > 0) != status).any(axis=1))
    if disagree.size:
        return None, f"the logged rises disagree with the observed achievements at state {int(disagree[0])}"
    return counts, "rebuilt exactly from the rises logged in info.stepwise.achievement_count_deltas"


def _is_rise(delta: Any) -> bool:
    """A logged count rise: a positive whole number within int32 (not a bool, NaN or inf)."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float)):
        return False
    return math.isfinite(delta) and delta == int(delta) and 0 < delta <= 2**31 - 1


def estimated_counts(status: np.ndarray, inventory: np.ndarray, actions: Sequence[Sequence[str]]) -> np.ndarray:
    """Lower-bound counts (n+1, 22) from what observations without counts show.

    Per decision, from Crafter's own rules: a tool's inventory rise is that many ``make_*``; a
    ``place_*`` action whose material fell is a placement (at most one per such action); an
    item's rise plus what those makes and placements used is at least that many ``collect_*``;
    and an achievement that is unlocked has a count of at least 1. Eating, combat and waking
    leave no countable trace beyond the unlock. Repeats inside one decision that leave no net
    change (collect a stone, place it) are invisible, so every count is at least the truth's
    lower bound, never more. ``status`` is (n+1, 22) booleans, ``inventory`` (n+1, 16).
    """
    # The rules applied to every decision at once, each a few numpy operations over all the
    # decisions and items of its kind (one per tool or item took ~14 us a decision on 12-decision
    # sessions: numpy's per-call cost, not the arithmetic).
    n = len(actions)
    rise = _rises(inventory[1:].astype(np.int64) - inventory[:-1], actions)
    # counts[i] = max(counts[i-1] + rise[i], status[i]) from counts[0] = 0: the rises summed, plus
    # 1 from the first state unlocked while nothing had risen yet (after it, the sum stays one up).
    counts = np.zeros((n + 1, len(ACHIEVEMENTS)), dtype=np.int64)
    counts[1:] = np.cumsum(rise, axis=0)
    unlocked_unrisen = status.astype(bool) & (counts == 0)
    unlocked_unrisen[0] = False
    return counts + np.maximum.accumulate(unlocked_unrisen, axis=0)


def estimated_counts_each(
    status: np.ndarray, inventory: np.ndarray, actions: Sequence[Sequence[str]], lengths: Sequence[int]
) -> list[np.ndarray]:
    """``estimated_counts`` of several episodes at once: their arrays stacked, one episode after
    the other (``lengths``: each one's decisions), so a task of ~64 sessions costs the numpy
    calls of one (per 12-decision session they were most of its ~100 us).

    Args:
        status: The episodes' (n_k + 1, 22) achievement flags, stacked.
        inventory: Their (n_k + 1, 16) inventories, stacked.
        actions: Their decisions' actions, one episode after the other.
        lengths: Each episode's decisions n_k (each at least 1).

    Returns:
        Each episode's (n_k + 1, 22) counts, exactly ``estimated_counts``' of its own arrays.
    """
    sizes = np.asarray(lengths, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes + 1)[:-1]])  # each episode's first state row
    # decision rows: every state row but each episode's last (the state after its last decision)
    decision = np.ones(len(inventory), dtype=bool)
    decision[starts + sizes] = False
    before = inventory[decision].astype(np.int64)
    after = inventory[np.roll(decision, 1)].astype(np.int64)  # the state row after each decision row
    rise = _rises(after - before, actions)
    # each episode's counts start at 0: the rises summed over its own decisions
    summed = np.zeros((len(rise) + 1, len(ACHIEVEMENTS)), dtype=np.int64)
    summed[1:] = np.cumsum(rise, axis=0)
    first_decision = np.concatenate([[0], np.cumsum(sizes)[:-1]])  # each episode's first row of ``rise``
    state_decision = np.repeat(first_decision - starts, sizes + 1) + np.arange(len(inventory))
    counts = summed[state_decision] - np.repeat(summed[first_decision], sizes + 1, axis=0)
    unlocked_unrisen = status.astype(bool) & (counts == 0)
    unlocked_unrisen[starts] = False
    seen = np.cumsum(unlocked_unrisen, axis=0, dtype=np.int64)  # per episode: any so far, from its start
    seen_before = np.repeat(seen[starts], sizes + 1, axis=0)  # its first row is False: none before it
    every = counts + (seen - seen_before > 0)
    return np.split(every, starts[1:])


def _rises(change: np.ndarray, actions: Sequence[Sequence[str]]) -> np.ndarray:
    """Each decision's count rises (n, 22) from its inventory change (n, 16) and its actions:
    ``estimated_counts``' rules, row by row (so any rows, of one episode or of several)."""
    n = len(actions)
    rise = np.zeros((n, len(ACHIEVEMENTS)), dtype=np.int64)
    made = np.maximum(0, change[:, _MADE_ITEMS])  # (n, tools): a tool's rise is that many makes
    rise[:, _MADE_ACHIEVEMENTS] = made
    used = made @ _MAKE_USES  # (n, 16): what the makes used (exact: integer arithmetic)
    tries = np.array([[decision.count(a) for a in _PLACE_ACTIONS] for decision in actions], dtype=np.int64)
    for k, (item, amount, achievement) in enumerate(_PLACES):  # in order: a later rule sees the
        fell = np.maximum(0, -change[:, item] + used[:, item])  # earlier ones' use (beyond makes)
        placed = np.minimum(tries.reshape(n, len(_PLACES))[:, k], fell // amount)
        rise[:, achievement] = placed
        used[:, item] += placed * amount
    rise[:, _COLLECTED_ACHIEVEMENTS] = np.maximum(0, change[:, _COLLECTED_ITEMS] + used[:, _COLLECTED_ITEMS])
    return rise


def inventory_disagreements(inventory: np.ndarray, stepwise: Sequence[Mapping[str, Any] | None]) -> list[int]:
    """Decisions (1-based) whose logged ``inventory_deltas`` differ from the rises the
    observations show; only decisions with a per_achievement log are checked."""
    bad: list[int] = []
    checked = [i for i, logged in enumerate(stepwise, start=1) if logs_rises(logged)]  # a Mapping, then
    if not checked:
        return bad
    change = (inventory[1:].astype(np.int64) - inventory[:-1]).tolist()  # every decision's at once
    for i in checked:
        logged = stepwise[i - 1]
        seen = {INVENTORY_ITEMS[k]: d for k, d in enumerate(change[i - 1]) if d > 0}
        deltas = logged.get("inventory_deltas") or {}  # type: ignore[union-attr]
        try:
            is_object = type(deltas) is dict or isinstance(deltas, Mapping)
            logged_rises = {str(k): int(v) for k, v in deltas.items()} if is_object else None
        except (TypeError, ValueError, OverflowError):
            logged_rises = None
        if logged_rises != seen:
            bad.append(i)
    return bad


#: What estimated counts mean for re-scoring, as the import report, ``corpus info`` and the app say it.
ESTIMATED_MEANING = (
    "their achievement counts are lower bounds (text observations show unlocks, not repeats): "
    "re-scoring under per_achievement under-pays their achievement-count resource shaping; "
    "consistent, the achievement credits and the inventory shaping are exact; "
    "`workbench score` / `compare` give each per_achievement return as an interval"
)


def estimated_counts_line(ids: Sequence[str], counts: Sequence[Any]) -> str | None:
    """One line saying which episodes (of ``ids``, with ``counts`` sources) have estimated
    counts and what that means, or None when every count is exact."""
    estimated = [i for i, source in zip(ids, counts) if source == "estimated"]
    if not estimated:
        return None
    named = ", ".join(map(str, estimated[:3])) + (", ..." if len(estimated) > 3 else "")
    return f"{len(estimated)} of {len(ids)} episode(s) have estimated counts ({named}): {ESTIMATED_MEANING}"
