"""Farming: how much of an episode's return came from repeating resource events rather than progress.

Resource shaping (``per_achievement``) pays every rise of an inventory item or achievement count,
uncapped (reward.md quirk 3). An episode that repeats the same rise (mining stone, drinking)
collects that pay again and again; a policy that loops two events that undo each other's
inventory change (mine a stone, place it) can do so forever. This module counts both.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from workbench.analysis.diagnostics.components import ComponentTotals, EpisodeFacts
from workbench.analysis.diagnostics.flags import Flag
from workbench.core.components import RESOURCE_KINDS
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.scoring import Scores

__all__ = ["CYCLES", "Cycle", "cycles", "farming_episodes", "farming_events"]


class Cycle(NamedTuple):
    """A loop Crafter allows: ``gather`` raises ``item`` by one and ``spend`` uses it up again,
    so one lap leaves the inventory as it was and can be repeated as long as the world lasts."""

    name: str
    gather: str  # achievement whose count rises when the item is gathered
    spend: str  # achievement whose count rises when the item is used up
    item: str


#: The loops of Crafter's resource shaping (crafter.md): mine stone / place it, pick a sapling /
#: plant it. A lap pays the item's rise and both counts' rises; the inventory loss pays nothing.
CYCLES: tuple[Cycle, ...] = (
    Cycle("stone", "collect_stone", "place_stone", "stone"),
    Cycle("sapling", "collect_sapling", "place_plant", "sapling"),
)


def farming_events(totals: ComponentTotals, facts: EpisodeFacts) -> pd.DataFrame:
    """Per episode and resource event (``kind`` inventory or achievement_count, ``name``):
    ``times_paid``, ``units``, ``paid``, ``first_paid``, ``repeat_paid`` and ``repeat_share``
    (repeat_paid / |episode return|: the share of the return the repeats beyond the first
    brought), with the episode's group (``facts.by``) and ``counts`` source; ``estimated`` is
    true on achievement_count rows of episodes whose counts are estimated (their count shaping
    is an estimate). Episodes in corpus order, most-repeated pay first within one."""
    rows = np.flatnonzero(totals.kind_is(*RESOURCE_KINDS))
    episode = totals.episode[rows]
    repeat = totals.repeat_paid[rows]
    order = np.lexsort((-repeat, episode))
    rows, episode, repeat = rows[order], episode[order], repeat[order]
    kind = totals.kinds[totals.kind[rows]]
    return pd.DataFrame(
        {
            "episode": facts.ids[episode],
            facts.by: facts.group[episode],
            "kind": kind,
            "name": totals.names[totals.name[rows]],
            "times_paid": totals.times_paid[rows],
            "units": totals.units[rows],
            "paid": totals.paid[rows],
            "first_paid": totals.first_paid[rows],
            "repeat_paid": repeat,
            "repeat_share": repeat / facts.scale[episode],
            "counts": facts.counts[episode],
            "estimated": (kind == "achievement_count") & facts.estimated[episode],
        }
    )


def farming_episodes(
    totals: ComponentTotals, facts: EpisodeFacts, events: pd.DataFrame, loop_paid: np.ndarray | None = None
) -> tuple[pd.DataFrame, list[Flag]]:
    """Per episode: ``return``, ``credits`` (achievement credits and the indicator, after lambda),
    ``resource`` (resource shaping after lambda), ``first_time`` and ``repeats`` (resource pay at
    each event's first rise and beyond it), ``repeat_share`` (repeats / |return|), ``counts`` and
    ``count_shaping_estimated``; ``flagged`` when repeats outweigh the credits (in magnitude).
    With ``loop_paid`` (per episode, corpus order: ``loop_signs`` pay at the cap and for what
    was spent and regained) the repeats that count are those: an honest player's repeats are
    mostly drinking, eating and restocking on its way up the tech tree, which pay without a loop
    (``loop_paid`` column; ``flagged`` when it outweighs the credits).
    Returns the table and one flag per flagged episode, naming the events that paid most."""
    n = len(facts.ids)
    resource = totals.kind_is(*RESOURCE_KINDS)

    def per_episode(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.bincount(totals.episode[mask], weights=values[mask], minlength=n)

    credits = per_episode(totals.paid, ~resource)
    repeats = per_episode(totals.repeat_paid, resource)
    table = pd.DataFrame(
        {
            "episode": facts.ids,
            facts.by: facts.group,
            "counts": facts.counts,
            "return": facts.returns,
            "credits": credits,
            "resource": per_episode(totals.paid, resource),
            "first_time": per_episode(totals.first_paid, resource),
            "repeats": repeats,
            "repeat_share": repeats / facts.scale,
            "count_shaping_estimated": facts.estimated,
            "flagged": np.abs(repeats if loop_paid is None else loop_paid) > np.abs(credits),
        }
    )
    if loop_paid is not None:
        table["loop_paid"] = loop_paid
    return table, _farming_flags(table, events)


def _farming_flags(table: pd.DataFrame, events: pd.DataFrame) -> list[Flag]:
    """One flag per flagged episode, naming the three events whose repeats paid most."""
    flagged = np.flatnonzero(table["flagged"].to_numpy())
    if not len(flagged):
        return []
    event_episode = events["episode"].to_numpy()
    # Events are grouped by episode: where each episode's run starts and ends.
    starts = np.flatnonzero(np.r_[True, event_episode[1:] != event_episode[:-1]]) if len(events) else np.zeros(0, int)
    runs = dict(zip(event_episode[starts], zip(starts, np.r_[starts[1:], len(events)])))
    columns = {c: events[c].to_numpy() for c in ("kind", "name", "times_paid", "repeat_paid")}
    rows = {
        c: table[c].to_numpy()
        for c in ("episode", "return", "credits", "repeats", "repeat_share", "count_shaping_estimated")
    }
    looped = table["loop_paid"].to_numpy() if "loop_paid" in table.columns else None
    flags = []
    for i in flagged:
        episode = rows["episode"][i]
        first, end = runs.get(episode, (0, 0))
        top = range(first, min(first + 3, end))  # events are sorted by repeat pay within an episode
        parts = [
            f"{'the ' + columns['name'][j] + ' count' if columns['kind'][j] == 'achievement_count' else columns['name'][j]}"
            f" rose {columns['times_paid'][j]} times ({columns['repeat_paid'][j]:.2f} beyond the first)"
            for j in top
        ]
        share = rows["repeat_share"][i]
        share_text = f"{share:.0%} of its return {rows['return'][i]:.3f}" if not np.isnan(share) else "its return is 0"
        why = (
            f"repeated resource events paid {rows['repeats'][i]:.3f} ({share_text}), "
            + (
                f"of which loops (counts at the cap, materials regained) {looped[i]:.3f}, "
                if looped is not None
                else ""
            )
            + f"more than its achievement credits ({rows['credits'][i]:.3f}): {'; '.join(parts)}"
        )
        if rows["count_shaping_estimated"][i]:
            why += " (achievement counts are estimated for this episode, so its count shaping is an estimate)"
        flags.append(Flag("farming", "repeats-outweigh-credits", str(episode), why))
    return flags


def cycles(scores: Scores, config: RewardConfig, facts: EpisodeFacts) -> pd.DataFrame:
    """Per episode and ``CYCLES`` entry: ``gathered`` and ``spent`` (how often the gather and
    spend counts rose), ``laps`` (completed gather-then-spend loops: the smaller of the two),
    ``pay_per_lap`` (what one lap pays under ``config`` after lambda when gathering and spending
    are separate decisions: the item's inventory weight plus both count weights; 0 under
    consistent), ``lap_paid`` (laps x pay_per_lap) and ``share_of_return`` (lap_paid / |return|).
    ``estimated``: the episode's counts, and so its laps, are estimates."""
    prepared = scores.prepared
    n_slots = len(INVENTORY_ITEMS) + len(ACHIEVEMENTS)
    episode_of_gain = prepared.episode_of[prepared.gain_decision].astype(np.int64)
    # Rises per (episode, slot): slots are the 16 items then the 22 achievement counts.
    rises = np.bincount(
        episode_of_gain * n_slots + prepared.gain_slot,
        weights=prepared.gain_delta,
        minlength=prepared.n_episodes * n_slots,
    ).reshape(prepared.n_episodes, n_slots)
    lam = config.effective_lambda
    resource = config.resource_weights
    pays_resources = config.rule.pays_resources
    n, k = prepared.n_episodes, len(CYCLES)
    # Rows episode by episode, each episode's cycles in CYCLES order.
    gathered = np.stack([rises[:, len(INVENTORY_ITEMS) + ACHIEVEMENTS.index(c.gather)] for c in CYCLES], axis=1)
    spent = np.stack([rises[:, len(INVENTORY_ITEMS) + ACHIEVEMENTS.index(c.spend)] for c in CYCLES], axis=1)
    pay = np.array(
        [
            lam
            * (
                resource.inventory_weight(c.item)
                + resource.achievement_count_weight(c.gather)
                + resource.achievement_count_weight(c.spend)
            )
            if pays_resources
            else 0.0
            for c in CYCLES
        ]
    )
    laps = np.minimum(gathered, spent).astype(np.int64)
    lap_paid = laps * pay[None, :]
    return pd.DataFrame(
        {
            "episode": np.repeat(facts.ids, k),
            facts.by: np.repeat(facts.group, k),
            "cycle": np.tile(np.array([f"{c.name}: {c.gather} / {c.spend}" for c in CYCLES], dtype=object), n),
            "gathered": gathered.astype(np.int64).ravel(),
            "spent": spent.astype(np.int64).ravel(),
            "laps": laps.ravel(),
            "pay_per_lap": np.tile(pay, n),
            "lap_paid": lap_paid.ravel(),
            "share_of_return": (lap_paid / facts.scale[:, None]).ravel(),
            "estimated": np.repeat(facts.estimated, k),
        }
    )
