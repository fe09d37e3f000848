"""Loop pay: what a config pays for counts that rise while their item does not, whatever the loop.

Resource shaping (``per_achievement``) pays each rise of an inventory item and of an
achievement count (reward.md quirk 3). A loop pays when a count keeps rising but the item it
counts does not gain ground. Two ways, read off the episode's own inventory and counts, in any
order and at any distance (no list of loops, no lap window):

- **at the cap** (``cap``): a gathering count (``collect_drink``, ``collect_sapling``,
  ``eat_cow``, ``make_wood_pickaxe``, ...) rises at a decision where its item does not: the item
  sits at Crafter's cap of 9, so the count is paid for nothing. Not the counts of what Crafter
  collects by removing a block (``DUG``: wood, stone, coal, iron, diamond; a tree turns into
  grass, a mined block into path): that is also how a player clears its way, and honest players
  raise those counts at the cap on their way (docs/detector-accuracy.md: up to 20 in 50
  decisions on other worlds). Water and grass stay where they are: drinking or picking saplings
  at the cap goes nowhere;
- **spent and regained** (``regained``): a material (wood, stone, coal, iron, diamond, sapling)
  rises back to a level it had already reached in the episode: it was spent (placed, crafted
  with) and gathered again. The regain pays the item's rise and its gathering count's; the
  placements that hand stone and saplings back to the world (``place_stone``, ``place_plant``)
  pay the loop's other half.

Life counters (drink, food, energy) run down by themselves, so refilling them is survival, not a
loop: only their rises at the cap count. ``loop_pay`` gives the per-decision pay of both kinds
(corpus order) and per episode their units and pay; all numpy over the stacked columns, batch by
batch (no Python loop over decisions).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, COLLECT_RULES, INVENTORY_ITEMS, MAKE_RULES
from workbench.data.episodes import Corpus
from workbench.scoring import slot_pay

__all__ = ["CAP_PAIRS", "DUG", "HANDED_BACK", "MATERIALS", "LoopPay", "episode_loop_pay", "loop_pay"]

_SLOT = {item: i for i, item in enumerate(INVENTORY_ITEMS)}
_COUNT = {name: i for i, name in enumerate(ACHIEVEMENTS)}
#: Materials whose collecting removes the block collected from (``leaves`` another material):
#: digging through them raises their counts, at the cap too.
DUG: tuple[str, ...] = tuple(
    item for material, rule in COLLECT_RULES.items() if rule["leaves"] != material for item in rule["receive"]
)
#: (gathering count, the item it gathers): the count rises with the item, unless the item is at
#: its cap; minerals (``DUG``) left out.
CAP_PAIRS: tuple[tuple[str, str], ...] = (
    *((f"collect_{item}", item) for rule in COLLECT_RULES.values() for item in rule["receive"] if item not in DUG),
    ("eat_cow", "food"),
    ("eat_plant", "food"),
    *((f"make_{tool}", tool) for tool in MAKE_RULES),
)
#: Materials that are spent and can be gathered again (life counters run down on their own).
MATERIALS: tuple[str, ...] = tuple(
    item for rule in COLLECT_RULES.values() for item in rule["receive"] if item not in ("drink", "food", "energy")
)
#: Placements that hand an item back to the world to be gathered again: the spending half of a loop.
HANDED_BACK: tuple[str, ...] = ("place_stone", "place_plant")


class LoopPay(NamedTuple):
    """Loop pay under one config.

    Attributes:
        cap: (N,) per decision, pay for gathering counts that rose while their item did not.
        regained: (N,) per decision, pay for materials regained (item and gathering count) and
            for placements handing them back.
        cap_units: (N,) per decision, count rises at the cap.
        regained_units: (N,) per decision, material units regained.
        by_item: (E, len(MATERIALS)) per episode, units regained of each material (for the
            evidence: which item looped).
    """

    cap: np.ndarray
    regained: np.ndarray
    cap_units: np.ndarray
    regained_units: np.ndarray
    by_item: np.ndarray


def loop_pay(corpus: Corpus, pays: np.ndarray) -> LoopPay:
    """Per decision and per episode, the pay of counts rising while their item does not (see the module).

    Args:
        corpus: The episodes.
        pays: (38,) what one unit of each slot's rise pays (16 items, then 22 counts; after
            lambda; zeros for a config that pays no resource shaping).

    Returns:
        The per-decision pay (corpus order) and per-episode units.
    """
    count_cols = np.array([_COUNT[c] for c, _ in CAP_PAIRS])
    item_cols = np.array([_SLOT[i] for _, i in CAP_PAIRS])
    material_cols = np.array([_SLOT[m] for m in MATERIALS])
    gather_cols = np.array([_COUNT[f"collect_{m}"] for m in MATERIALS])
    back_cols = np.array([_COUNT[name] for name in HANDED_BACK])
    n_items = len(INVENTORY_ITEMS)
    count_pay = pays[n_items + count_cols]
    regain_pay = pays[material_cols] + pays[n_items + gather_cols]
    back_pay = pays[n_items + back_cols]
    caps, regains, cap_units, regained_units, per_item = [], [], [], [], []
    for _, arrays in corpus.decision_batches():
        # Work on transitions between consecutive stacked rows (row j to j + 1), selecting columns
        # first (the stored arrays are column-major); the transitions into an episode's reset row
        # are not decisions and are dropped at the end. Differences in the narrowest signed type
        # that holds them (``_signed``): a quarter of int64's memory traffic, the same integers.
        decision = np.ones(len(arrays.inventory) - 1, dtype=bool)
        decision[arrays.row_starts[1:] - 1] = False
        cnt, inv = arrays.achievement_counts, arrays.inventory
        rose = np.diff(cnt[:, count_cols].astype(_signed(cnt.dtype)), axis=0)
        item_rose = np.diff(inv[:, item_cols].astype(_signed(inv.dtype)), axis=0) > 0
        capped = np.where((rose > 0) & ~item_rose, rose, 0)
        # running maximum of each material within its episode: offset each episode above the last
        # (levels are 0..9: 16 tops them; int32 holds 16 x the batch's episodes)
        level = inv[:, material_cols].astype(np.int32)
        offset = np.repeat(np.arange(len(arrays.lengths), dtype=np.int32) * 16, arrays.lengths + 1)[:, None]
        most = np.maximum.accumulate(level + offset, axis=0) - offset
        regained = np.clip(np.minimum(level[1:], most[:-1]) - level[:-1], 0, None)
        regained[~decision] = 0
        back = np.clip(np.diff(cnt[:, back_cols].astype(_signed(cnt.dtype)), axis=0), 0, None)
        # float64 first: numpy's int @ float64 casts to float64 too, then sums in the same order
        # (the same floats), but through a slower mixed-type loop
        caps.append((capped.astype(np.float64) @ count_pay)[decision])
        regains.append((regained.astype(np.float64) @ regain_pay + back.astype(np.float64) @ back_pay)[decision])
        cap_units.append(capped.sum(axis=1, dtype=np.int64)[decision])
        regained_units.append(regained.sum(axis=1, dtype=np.int64)[decision])
        # episode k's transitions run from its reset row to the next episode's (the last one, into
        # the next reset row, is not a decision: 0); a zero row closes the last episode's
        padded = np.vstack([regained, np.zeros((1, len(MATERIALS)), regained.dtype)])
        per_item.append(np.add.reduceat(padded, arrays.row_starts, axis=0).astype(np.int64))
    if not per_item:
        none = np.zeros(0, np.int64)
        return LoopPay(np.zeros(0), np.zeros(0), none, none, np.zeros((0, len(MATERIALS)), np.int64))
    return LoopPay(*(np.concatenate(parts) for parts in (caps, regains, cap_units, regained_units, per_item)))


def _signed(dtype: np.dtype) -> type[np.signedinteger]:
    """The narrowest signed integer type holding the difference of two values of the unsigned
    (or signed) ``dtype``: int16 for 8 bits, int32 for 16, int64 beyond."""
    return np.int16 if dtype.itemsize == 1 else np.int32 if dtype.itemsize == 2 else np.int64


def episode_loop_pay(corpus: Corpus, config: RewardConfig) -> np.ndarray:
    """Per episode (corpus order), what ``config`` paid its loops: at the cap and for materials
    spent and regained (``loop_pay``, all decisions; what ``repeats-outweigh-credits`` weighs).

    Args:
        corpus: The episodes.
        config: The config (what it pays per slot: ``scoring.slot_pay``).

    Returns:
        (E,) float.
    """
    found = loop_pay(corpus, slot_pay(config))
    lengths = corpus.index["decisions"].to_numpy(dtype=np.int64)
    episode = np.repeat(np.arange(len(lengths)), lengths)
    return np.bincount(episode, weights=found.cap + found.regained, minlength=len(lengths))
