"""A reward hacker for the synth-ai task app's "per_achievement" resource shaping.

That shaping pays every rise of an inventory item and of an achievement count, uncapped and
regardless of k-limits. So instead of climbing the tech tree, this policy repeats the cheapest
paying events for the whole episode:

- it mines a stone wall of its shelter and puts the stone back: collect_stone .10 and stone
  .15, then place_stone .05, every two steps, out of the zombies' reach;
- it drinks from a water wall of the shelter whenever drink is below full (collect_drink .06 +
  drink .07), and drinks on every trip out to water;
- in the first DAY_SAPLING_STEPS of each day it picks saplings from grass (10% a try:
  collect_sapling .06 + sapling .08) and plants each one at once (place_plant .05).

It survives with the scripted player's goals (fight back, drink, eat cows and ripe plants) and
only makes a table, a wood pickaxe and a wood sword: it unlocks what staying alive and farming
unlock on the way, but none of the tech tree beyond, while the counts run into the hundreds.
(In Crafter 1.8.3 a chopped tree turns into grass, so trees can't be farmed.)
"""

from __future__ import annotations

import numpy as np
from crafter import constants

from workbench.core.crafter_facts import daylight
from workbench.data.policies.base import Policy
from workbench.data.policies.navigation import (
    DIRECTIONS,
    MOVES,
    Cell,
    Plan,
    Situation,
    add,
    approach_open,
)
from workbench.data.policies.scripted import ScriptedPolicy, defend, drink, eat, make_first, safe_walls
from workbench.data.policies.shelter import enclosed

#: Steps at the start of each 300-step Crafter day spent outdoors picking and planting saplings.
DAY_LENGTH = 300
DAY_SAPLING_STEPS = 100
#: Sleep at home below ENERGY_LOW; anywhere below ENERGY_CRITICAL (at 0 health drains).
ENERGY_LOW = 3
ENERGY_CRITICAL = 1
#: Zombies crowd the dark grass: below this daylight stay home whatever the schedule says.
NIGHT_DAYLIGHT = 0.5

#: All the tech the farm needs: a pickaxe for the stone, a sword to fight off zombies.
FARM_TOOLS = ("wood_pickaxe", "wood_sword")
MAX_DRINK = constants.items["drink"]["max"]


class FarmerPolicy(ScriptedPolicy):
    """The scripted player's memory, plus the wall cell the farmer has just mined."""

    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__(rng, goals=FARMER_GOALS)
        self.mined: Cell | None = None


def put_back(farmer: FarmerPolicy, s: Situation) -> Plan | None:
    """Close the wall we just mined: the second half of the stone loop."""
    ahead = add(s.pos, s.facing)
    if ahead != farmer.mined or not s.inv["stone"]:
        return None
    farmer.mined = None
    return ["place_stone"] if s.grid[ahead] in constants.place["stone"]["where"] else None


def farm_tools(farmer: FarmerPolicy, s: Situation) -> Plan | None:
    """Goal: make the farm's tools (``FARM_TOOLS``) in order, gathering what each needs first."""
    return make_first(s, FARM_TOOLS)


def saplings(farmer: FarmerPolicy, s: Situation) -> Plan | None:
    """Mornings: pick a sapling from the grass ahead (10% a try), then plant it nearby."""
    if s.obs.step % DAY_LENGTH >= DAY_SAPLING_STEPS or daylight(s.obs.step) < NIGHT_DAYLIGHT:
        return None
    if not s.inv["sapling"]:
        return approach_open(s.grid, s.pos, s.facing, s.named("grass"), "do", can_dig=s.can_dig)

    def spaced(cell: Cell) -> bool:  # plants block the way: never let them box us in
        return s.grid[cell] == "grass" and "plant" not in s.grid.around(cell)

    return approach_open(s.grid, s.pos, s.facing, spaced, "place_plant", can_dig=s.can_dig)


def go_home(farmer: FarmerPolicy, s: Situation) -> Plan | None:
    """Walk (or dig) into a two-cell shelter, preferably with a water wall, and seal it."""
    if enclosed(s.grid, s.pos, walls=safe_walls(s)):
        return None
    return farmer.head_for_shelter(s)


def farm(farmer: FarmerPolicy, s: Situation) -> Plan | None:
    """The loop itself: sleep if tired, drink from a water wall, else mine a stone wall.

    Works at home (walls all round) and, with no home in reach, next to any stone.
    """
    at_home = enclosed(s.grid, s.pos, walls=safe_walls(s))
    if s.inv["energy"] < (ENERGY_LOW if at_home else ENERGY_CRITICAL):
        return ["sleep"]
    if s.inv["drink"] < MAX_DRINK:
        plan = s.go(s.named("water"), "do", limit=0)
        if plan:
            return plan
    plan = s.go(s.named("stone"), "do")
    if plan == ["do"]:
        farmer.mined = add(s.pos, s.facing)
        return ["do", "place_stone"]
    return plan


def wander(farmer: FarmerPolicy, s: Situation) -> Plan | None:
    """Goal of last resort: a step in a random free direction (None when boxed in)."""
    moves = [MOVES[d] for d in DIRECTIONS if s.grid.is_free(add(s.pos, d))]
    return [moves[farmer.rng.integers(len(moves))]] if moves else None


FARMER_GOALS = (defend, drink, eat, put_back, farm_tools, saplings, go_home, farm, wander)


def farmer_policy(rng: np.random.Generator) -> Policy:
    """The reward-hacking farmer (see the module docstring)."""
    return FarmerPolicy(rng)
