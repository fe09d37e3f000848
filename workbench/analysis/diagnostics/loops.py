"""Loops an episode repeats for pay: stone mined and placed back, a counter refilled whenever allowed, the same tool made again.

Resource shaping (``per_achievement``) pays every rise of an inventory item or achievement
count (reward.md quirk 3), so any loop Crafter allows can be run for pay. ``LOOPS`` lists them,
each with how a lap is counted from the episode's own arrays (never from its pay):

- **cycle**: gather an item and spend it again at once (``collect_stone`` / ``place_stone``,
  ``collect_sapling`` / ``place_plant``): laps are spendings within ``CYCLE_WINDOW`` decisions
  of a gathering;
- **remake**: place or make the same thing again (``place_table``, ``make_wood_pickaxe``, ...):
  laps are the count's rises beyond its first;
- **refill**: a life counter (drink, food, energy) brought back to its maximum within a few
  decisions of leaving it, again and again: laps are such prompt refills.

Honest players run every loop now and then (a scripted player places a few stones, drinks when
it passes water), so a loop is flagged only past ``Loop.allowed`` laps: twice the most any
honest player ran it on the labelled benchmark's tune split (``benchmarks/bench_detectors.py``
chooses them there and prints them). ``loop_table.loop_table`` gives each episode's loops with
their decisions and pay (every episode of a batch at once); ``loop_flags`` the ``farming-loop``
flags with their evidence and a replay link.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from workbench.analysis.diagnostics.flags import Flag
from workbench.core.crafter_facts import (
    ACHIEVEMENTS,
    ACTIONS,
    INVENTORY_ITEMS,
    INVENTORY_MAX,
    MAKE_RULES,
    NIGHT_DAYLIGHT,
    PLACE_RULES,
    daylight,
)
from workbench.data.episodes import Corpus, Episode
from workbench.data.episodes.columns import DecisionArrays
from workbench.util.links import replay_query

__all__ = ["LOOPS", "LOOP_CODE", "Loop", "batch_tracks", "cycle_laps", "loop_flags", "loop_laps", "tracks"]

#: The flag code of an episode running a loop past what honest players do.
LOOP_CODE = "farming-loop"
CYCLE, REMAKE, REFILL = "cycle", "remake", "refill"
#: Prompt refill windows (decisions from leaving the maximum to being back at it), from Crafter's
#: rules: a sip of water is one ``do`` beside water; a point of food lasts 26 decisions awake
#: (hunger passes 25), so food back at 9 within 30 was eaten at 8, before it could drop again (a
#: few decisions to reach and hit a cow; a player that eats when 2 below full cannot be that
#: quick: v1's 40 caught such an honest player on fresh worlds); a point of energy takes about
#: ten decisions asleep (fatigue runs from 0 to -10).
REFILL_WINDOWS = {"drink": 3, "food": 30, "energy": 20}
#: How many decisions up to a counter leaving its maximum an ``asked`` action counts in.
ASKED_WITHIN = 3
#: A cycle's lap spends what it gathered at once: at most this many decisions later (a hacker
#: mines a stone and places it back, turns and mines it again; an honest player carries stone
#: and saplings to where it builds or plants).
CYCLE_WINDOW = 3


@dataclass(frozen=True)
class Loop:
    """One loop: ``name`` (what the flag says, e.g. "place_stone/collect_stone"), ``kind``
    (cycle, remake or refill), ``event`` (the count whose rises, or the counter whose refills,
    are the laps), ``gather`` (a cycle's gathering count), the inventory ``items`` and
    achievement ``counts`` whose rises a lap brings (what it is paid for), and ``allowed``:
    flag when the laps pass it."""

    name: str
    kind: str
    event: str
    items: tuple[str, ...]
    counts: tuple[str, ...]
    allowed: int
    gather: str = ""
    by_day: bool = False
    asked: str = ""


def _cycle(gather: str, spend: str, item: str, allowed: int) -> Loop:
    return Loop(f"{spend}/{gather}", CYCLE, spend, (item,), (gather, spend), allowed, gather)


def _remake(event: str, uses: dict[str, int], gives: str, allowed: int) -> Loop:
    """Making or placing again: paid for the thing made and for gathering what it uses up."""
    gathered = tuple(f"collect_{item}" for item in uses if f"collect_{item}" in ACHIEVEMENTS)
    items = tuple(name for name in (gives, *uses) if name in INVENTORY_ITEMS)
    return Loop(f"{event} again", REMAKE, event, items, (event, *gathered), allowed)


def _refill(item: str, counts: tuple[str, ...], allowed: int, by_day: bool = False, asked: str = "") -> Loop:
    name = (
        f"{item} refilled" + (" by day" if by_day else "") + (f" ({asked} asked for at full {item})" if asked else "")
    )
    return Loop(name, REFILL, item, (item,), counts, allowed, by_day=by_day, asked=asked)


#: The loops Crafter allows, each with its allowance: twice the laps honest players ran on the
#: tune split of `workbench benchmark make --seed 3 --episodes 16 --max-steps 500`, and at
#: least 2 (``detector_accuracy.choose_allowances``; ``benchmarks/bench_detectors.py`` prints them).
LOOPS: tuple[Loop, ...] = (
    _cycle("collect_stone", "place_stone", "stone", 10),
    _cycle("collect_sapling", "place_plant", "sapling", 4),
    _remake("place_table", PLACE_RULES["table"]["uses"], "", 6),
    _remake("place_furnace", PLACE_RULES["furnace"]["uses"], "", 6),
    *(_remake(f"make_{tool}", recipe["uses"], tool, 2) for tool, recipe in MAKE_RULES.items()),
    _refill("drink", ("collect_drink",), 4, by_day=True),
    _refill("food", ("eat_cow", "eat_plant"), 2),
    _refill("energy", ("wake_up",), 2, by_day=True, asked="sleep"),
)


#: The actions some loop asks about (``Loop.asked``): what a ``Track`` records per decision.
ASKED = tuple(sorted({loop.asked for loop in LOOPS if loop.asked}))


class Track(NamedTuple):
    """What the loops read of one episode: its states (``inventory`` (n+1, 16), ``counts``
    (n+1, 22)), per decision its ``steps`` (actions played) and, per action an ``asked`` loop
    names, whether the decision played it (``played``)."""

    inventory: np.ndarray
    counts: np.ndarray
    steps: np.ndarray
    played: dict[str, np.ndarray]


def track_of(episode: Episode) -> Track:
    """The ``Track`` of one episode in memory."""
    played = {name: np.array([name in actions for actions in episode.actions], dtype=bool) for name in ASKED}
    steps = np.array([len(actions) for actions in episode.actions], dtype=np.int64)
    return Track(episode.inventory, episode.achievement_counts, steps, played)


def tracks(corpus: Corpus) -> Iterator[Track]:
    """Every episode's ``Track`` in corpus order, read from the stacked columns batch by batch
    (an episode in a columnar store is never built)."""
    for _, arrays in corpus.decision_batches():
        yield from batch_tracks(arrays)


def batch_tracks(arrays: DecisionArrays) -> Iterator[Track]:
    """The ``Track`` of every episode of one batch of stacked columns, in order."""
    per_row = np.diff(arrays.action_offsets)  # row r holds the actions of the decision leading to it
    hits = {name: np.concatenate([[0], np.cumsum(arrays.action_ids == ACTIONS.index(name))]) for name in ASKED}
    for first, n in zip(arrays.row_starts.tolist(), arrays.lengths.tolist()):
        rows = slice(first, first + n + 1)
        # decision j's actions are row first + j + 1's (row first is the state after reset), as
        # ``track_of`` reads them from ``episode.actions[j]``
        offsets = arrays.action_offsets[first + 2 : first + n + 2]
        before = arrays.action_offsets[first + 1 : first + n + 1]
        played = {name: (hit[offsets] - hit[before]) > 0 for name, hit in hits.items()}
        # stored columns may be unsigned: signed copies, so that a drop differences below 0
        states = (arrays.inventory[rows].astype(np.int64), arrays.achievement_counts[rows].astype(np.int64))
        yield Track(*states, per_row[first + 1 : first + n + 1], played)


def loop_laps(episode: Episode | Track, loop: Loop) -> np.ndarray:
    """The laps ``episode`` (or its ``Track``) ran of ``loop``: an int array (laps, 2) of each lap's first and last
    decision (1-based), in order. A cycle's lap runs from a gathering to the spending at most ``CYCLE_WINDOW`` after it,
    a remake's from the decision after the previous making, a refill's from the decision the
    counter left its maximum to the one it was back."""
    track = episode if isinstance(episode, Track) else track_of(episode)
    if loop.kind == REFILL:
        return _refills(track, loop)
    counts = track.counts
    column = np.diff(counts[:, ACHIEVEMENTS.index(loop.event)])
    rises = np.flatnonzero(column > 0) + 1
    ends = np.repeat(rises, column[rises - 1])  # a count rising by 2 in one decision is two laps
    if loop.kind == REMAKE:
        return np.stack([ends[:-1] + 1, ends[1:]], axis=1).astype(np.int64)
    gather = np.diff(counts[:, ACHIEVEMENTS.index(loop.gather)])
    gathers = np.repeat(np.flatnonzero(gather > 0) + 1, gather[gather > 0]).tolist()
    return cycle_laps(ends.tolist(), gathers, CYCLE_WINDOW)


def cycle_laps(ends: list[int], gathers: list[int], window: int) -> np.ndarray:
    """A cycle's laps from its spendings ``ends`` and gatherings ``gathers`` (1-based decisions,
    in order, one entry per unit; ``gathers`` is used up): each spending paired with the latest
    unpaired gathering at most ``window`` decisions before it. An int array (laps, 2)."""
    laps: list[tuple[int, int]] = []
    for end in ends:
        while gathers and gathers[0] < end - window:
            gathers.pop(0)
        at = bisect_right(gathers, end) - 1  # the latest gathering at or before the spending (gathers stay sorted)
        if at >= 0:
            laps.append((int(gathers.pop(at)), int(end)))
    return np.array(laps, dtype=np.int64).reshape(-1, 2)


def _refills(track: Track, loop: Loop) -> np.ndarray:
    """A refill loop's laps (see ``loop_laps``): the counter left its maximum and was back within
    its ``REFILL_WINDOWS`` window (by day and asked for, as ``loop`` says)."""
    level = track.inventory[:, INVENTORY_ITEMS.index(loop.event)]
    top = INVENTORY_MAX[loop.event]
    left = np.flatnonzero((level[:-1] == top) & (level[1:] < top)) + 1  # states just below the top
    back = np.flatnonzero(level == top)
    nxt = np.searchsorted(back, left)  # the first state back at the top after leaving it
    ok = nxt < len(back)
    if loop.by_day:
        steps = np.concatenate([[0], np.cumsum(track.steps)])
        ok &= np.array([daylight(int(steps[state - 1])) >= NIGHT_DAYLIGHT for state in left], dtype=bool)
    if loop.asked:
        asked = track.played[loop.asked]
        ok &= np.array([asked[max(state - ASKED_WITHIN, 0) : state].any() for state in left], dtype=bool)
    done, left = back[nxt[ok]], left[ok]
    keep = done - left <= REFILL_WINDOWS[loop.event]
    # state i follows decision i: the lap runs from the decision that left the top to the one back
    return np.stack([left[keep], done[keep]], axis=1).astype(np.int64)


def evidence(row: Any) -> dict[str, Any]:
    """What a flag saw, from one ``loop_table`` row: the loop, its laps, its decisions, its pay
    and where to replay it (``replay``: the episode, the first lap's decision, the link)."""
    return {
        "episode": str(row.episode),
        "loop": str(row.loop),
        "laps": int(row.laps),
        "allowed": int(row.allowed),
        "decisions": [int(row.first), int(row.last)],
        "paid": round(float(row.paid), 6),
        "share": None if np.isnan(row.share) else round(float(row.share), 4),
        "replay": {
            "episode": str(row.episode),
            "decision": int(row.first),
            "link": replay_query(str(row.episode), int(row.first)),
        },
    }


def evidence_text(seen: dict[str, Any]) -> str:
    """One line saying what ``evidence`` holds."""
    share = f" ({seen['share']:.0%} of its return)" if seen.get("share") is not None else ""
    start, stop = seen["decisions"]
    return (
        f"{seen['loop']} x{seen['laps']} over decisions {start}..{stop}, paid {seen['paid']:.3f}{share}; "
        f"replay: {seen['replay']['link']}"
    )


def loop_flags(table: pd.DataFrame) -> list[Flag]:
    """One ``farming-loop`` flag per episode with a flagged loop (its most-lapped one, past its
    allowance), saying what it saw, with ``evidence``."""
    flagged = table[table["flagged"]]
    if flagged.empty:
        return []
    excess = flagged["laps"] - flagged["allowed"]
    top = flagged.assign(excess=excess).sort_values("excess", ascending=False, kind="stable")
    flags = []
    for row in (
        top.drop_duplicates("episode")
        .set_index("episode")
        .reindex(pd.unique(flagged["episode"]))
        .reset_index()
        .itertuples(index=False)
    ):
        seen = evidence(row)
        why = (
            f"ran the loop {row.loop} {row.laps} times over decisions {row.first}..{row.last}, paid {row.paid:.3f} "
            f"(allowed: {row.allowed}, twice the most honest players ran it on the labelled benchmark)"
        )
        flags.append(Flag("farming", LOOP_CODE, str(row.episode), why, seen))
    return flags
