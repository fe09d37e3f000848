"""A hand-written Crafter player: survival first, then the tech tree, read off the semantic map.

Every call walks the priority list ``GOALS``; the first goal with something to do returns a
whole plan (walk there, turn, act) and the caller keeps up to ``max_actions`` of it. The next
call plans again from the new state, so the policy plays the same with ``max_actions=1``.
What to craft and what it needs comes from Crafter's own tables (``crafter.constants``); the
order of goals and the thresholds below are this player's choices.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from crafter import constants

from workbench.core.crafter_facts import NIGHT_DAYLIGHT, daylight
from workbench.data.policies.base import Policy, PolicyInput
from workbench.data.policies.navigation import (
    DIRECTIONS,
    ENEMIES,
    MOVES,
    SOLID,
    Cell,
    Grid,
    Plan,
    Situation,
    add,
    approach_open,
    shortest_path,
    walk,
)
from workbench.data.policies.shelter import Shelter, enclosed, find_shelter, is_shelter, shelter_plan
from workbench.data.policies.skills import collect, obtain, place, use_stations

#: Drink or eat below these levels, then keep going while still facing water / a cow. In the
#: EVENING_LEAD steps before the night we top up, to last the night in the shelter; at night
#: or hurt we only go out when nearly empty (health regenerates while food and drink are > 0).
LOW_LEVELS = {
    "day": {"drink": 5, "food": 6},
    "evening": {"drink": 8, "food": 7},
    "resting": {"drink": 2, "food": 2},
}
EVENING_LEAD = 80
#: Go to bed below this energy. Zombies spawn on grass more the darker it gets, so from
#: DUSK_LEAD steps before daylight drops under NIGHT_DAYLIGHT until it is back above, we stay
#: in a shelter.
ENERGY_LOW = 3
DUSK_LEAD = 20
#: With no shelter in reach, sleep where we stand at this energy: at 0 health drains.
ENERGY_CRITICAL = 1
#: Below this health, hide in a shelter until healed back to HEALTH_RESTED.
HEALTH_LOW = 5
HEALTH_RESTED = 8
#: Steps between searches for a shelter after one failed (a full-map search is slow).
SHELTER_RETRY = 20
#: A shelter with a water wall this close (path length) beats a nearer one without; but
#: arrows fly over water, so water is no wall with a skeleton within ARROW_RANGE (Manhattan).
WATER_SHELTER_RANGE = 25
ARROW_RANGE = 12
#: Tools in the order they are worth making; each brings its materials and stations along.
#: Iron tools are a separate goal, after the first furnace: iron may be out of reach.
BASIC_TOOLS = ("wood_pickaxe", "wood_sword", "stone_pickaxe", "stone_sword")
IRON_TOOLS = ("iron_pickaxe", "iron_sword")
#: Kept in stock once the tools are made: stone seals shelters and plant pens.
STOCK = {"wood": 4, "stone": 6, "coal": 1}
#: Saplings to keep growing: each gives 4 food per ripening; we eat about 12 per 300 steps.
PLANTS_WANTED = 4
#: A plant ripens after 300 updates, and Crafter only updates objects within GROW_RADIUS
#: (Manhattan) of the player; we count those steps ourselves, as the map hides ripeness.
RIPE_GROWTH = 310
GROW_RADIUS = 18
HARVEST_RETRY = 30  # steps to wait after a bite that found the plant unripe
PLANT_FOOD = 4  # food from a ripe plant (crafter/objects.py)
PLANT_RANGE = 12  # stay this close to the plants when idle, or they stop growing
#: Creatures worth a detour for their achievement (path lengths), and the health to risk it.
COW_RANGE = 20
ZOMBIE_RANGE = 8
SKELETON_RANGE = 25
HUNT_HEALTH = 6

MAXIMUM = {name: info["max"] for name, info in constants.items.items()}
# A goal takes the player (ScriptedPolicy or a subclass such as the farmer: Any, as Callable is
# contravariant in its arguments) and the situation, and returns a plan or None.
Goal = Callable[[Any, Situation], "Plan | None"]


def safe_walls(s: Situation) -> frozenset[str]:
    """What walls a shelter: not water when a skeleton could shoot across it."""
    return SOLID - {"water"} if s.near("skeleton", ARROW_RANGE) else SOLID


def is_night(step: int) -> bool:
    """Night for this player: dark now or within DUSK_LEAD steps (time to reach a shelter)."""
    return min(daylight(step), daylight(step + DUSK_LEAD)) < NIGHT_DAYLIGHT


class ScriptedPolicy:
    """The player's memory between decisions: shelter, plants, what it was resting for.

    ``goals`` replaces the priority list (the farmer reuses this player that way).
    """

    def __init__(self, rng: np.random.Generator, goals: Sequence[Goal] | None = None) -> None:
        self.rng = rng
        self.goals = tuple(goals) if goals else GOALS
        self.resting = False
        self.shelter: Shelter | None = None
        self.shelter_search_after = 0
        self.plants: dict[Cell, int] = {}  # plant cell -> steps it has grown (our estimate)
        self.biting: Cell | None = None  # the plant our last decision bit into
        self.plants_eaten = 0
        self.last_step = 0

    def __call__(self, obs: PolicyInput) -> Sequence[str]:
        s = Situation(obs, Grid(obs.semantic))
        self._track_plants(s)
        for goal in self.goals:
            plan = goal(self, s)
            if plan:
                return plan[: obs.max_actions]
        return ["noop"]

    def low_level(self, step: int, need: str) -> int:
        """The level of ``need`` (drink, food) below which we go and fill it."""
        if self.resting or is_night(step):
            return LOW_LEVELS["resting"][need]
        return LOW_LEVELS["evening" if is_night(step + EVENING_LEAD) else "day"][need]

    def ripe_plants(self) -> list[Cell]:
        """The planted saplings this player expects to be ripe by now."""
        return [cell for cell, grown in self.plants.items() if grown >= RIPE_GROWTH]

    def growing_plants(self) -> list[Cell]:
        """The planted saplings this player expects to be still growing."""
        return [cell for cell, grown in self.plants.items() if grown < RIPE_GROWTH]

    def bite(self, s: Situation, plan: Plan | None) -> Plan | None:
        """Note a bite into a plant: if it was unripe after all, come back a little later."""
        if plan == ["do"] and s.ahead == "plant":
            self.biting = add(s.pos, s.facing)
            self.plants[self.biting] = RIPE_GROWTH - HARVEST_RETRY
        return plan

    def head_for_shelter(self, s: Situation) -> Plan | None:
        """The next steps into the nearest shelter (one with a water wall if near) and sealing it.

        None when no shelter is in reach; the search is then repeated only every SHELTER_RETRY
        steps, as it covers the whole map.
        """
        walls, has_stone = safe_walls(s), s.inv["stone"] > 0
        if self.shelter and not is_shelter(s.grid, self.shelter, s.can_dig, has_stone, walls):
            self.shelter = None
        if self.shelter is None and s.obs.step >= self.shelter_search_after:
            search = functools.partial(find_shelter, s.grid, s.pos, can_dig=s.can_dig, has_stone=has_stone, walls=walls)
            self.shelter = search(next_to="water", limit=WATER_SHELTER_RANGE) or search()
            self.shelter_search_after = s.obs.step + SHELTER_RETRY
        if self.shelter is None:
            return None
        return shelter_plan(s.grid, s.pos, s.facing, self.shelter, can_dig=s.can_dig)

    def _track_plants(self, s: Situation) -> None:
        """Follow the plants on the map and count their growth; eating one resets it."""
        if s.obs.achievements["eat_plant"] > self.plants_eaten and self.biting in self.plants:
            self.plants[self.biting] = 0
        self.plants_eaten = s.obs.achievements["eat_plant"]
        elapsed, self.last_step = s.obs.step - self.last_step, s.obs.step
        x, y = s.pos
        self.plants = {
            (px, py): self.plants.get((px, py), 0) + (elapsed if abs(px - x) + abs(py - y) < GROW_RADIUS else 0)
            for px, py in s.grid.find("plant")
        }


# The goals, in priority order at the bottom (GOALS). Each returns a plan or None.


def defend(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Hit a zombie or skeleton next to us: running rarely works, they follow or shoot.

    (Skeletons further off are not chased: they back away into their tunnels.)
    """
    return s.go(s.named(*ENEMIES), "do", limit=0)


def drink(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Drink when thirsty, and whenever water is right next to us (as from a shelter)."""
    if s.inv["drink"] >= MAXIMUM["drink"]:
        return None
    if s.inv["drink"] < agent.low_level(s.obs.step, "drink"):
        return s.go(s.named("water"), "do")
    return s.go(s.named("water"), "do", limit=0)


def eat(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Eat when hungry: a cow, or a plant that should be ripe; finish a cow we started on."""
    if s.inv["food"] >= MAXIMUM["food"]:
        return None
    if s.inv["food"] < agent.low_level(s.obs.step, "food") or s.ahead == "cow":
        ripe = agent.ripe_plants()
        return agent.bite(s, s.go(lambda c: s.grid[c] == "cow" or c in ripe, "do"))
    return None


def rest(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Spend nights, tiredness and bad health walled in, where zombies and arrows can't reach.

    Sleeping lasts until energy is full (Crafter ignores actions meanwhile) and unlocks
    wake_up; it also heals twice as fast as waiting awake.
    """
    energy, health = s.inv["energy"], s.inv["health"]
    night = is_night(s.obs.step)
    if agent.resting:
        agent.resting = night or energy < MAXIMUM["energy"] or health < HEALTH_RESTED
    else:
        agent.resting = night or energy < ENERGY_LOW or health < HEALTH_LOW
    if not agent.resting:
        agent.shelter = None
        return None
    if enclosed(s.grid, s.pos, walls=safe_walls(s)):
        return ["sleep" if energy < MAXIMUM["energy"] else "noop"]
    plan = agent.head_for_shelter(s)
    if plan:
        return plan
    return ["sleep"] if energy <= ENERGY_CRITICAL else None


def make_first(s: Situation, tools: Sequence[str]) -> Plan | None:
    """Work towards the first of ``tools`` we lack and can get."""
    for tool in tools:
        if s.inv[tool] == 0:
            plan = obtain(s, tool)
            if plan:
                return plan
    return None


def basic_tools(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Goal: make ``BASIC_TOOLS`` in order, gathering what each needs first."""
    return make_first(s, BASIC_TOOLS)


def iron_tools(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Goal: make ``IRON_TOOLS`` in order, gathering what each needs first."""
    return make_first(s, IRON_TOOLS)


def first_stone(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Place one stone for place_stone as soon as we have one (shelters need it later)."""
    if s.obs.achievements["place_stone"] or not s.inv["stone"]:
        return None
    return place(s, "stone")


def first_furnace(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """A furnace next to a table, even when no iron is in reach to make use of it."""
    if s.obs.achievements["place_furnace"] or not s.can_dig:
        return None
    return use_stations(s, ("table", "furnace"), "noop", spare={})


def plant(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Grow saplings: pick them from grass (10% per try), plant them in a nook if one is near."""
    if len(agent.plants) >= PLANTS_WANTED:
        return None
    if not s.inv["sapling"]:
        return collect(s, "grass")

    def nook(cell: Cell) -> bool:
        walls = sum(s.grid[add(cell, d)] in SOLID for d in DIRECTIONS)
        return s.grid[cell] == "grass" and walls >= 2

    return approach_open(s.grid, s.pos, s.facing, nook, "place_plant", limit=PLANT_RANGE) or approach_open(
        s.grid, s.pos, s.facing, s.named("grass"), "place_plant"
    )


def fence_plants(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Wall our plants in with stone: a cow or zombie next to a plant destroys it."""
    if not s.inv["stone"]:
        return None
    gaps = {add(cell, d) for cell in agent.growing_plants() for d in DIRECTIONS}
    gaps = {cell for cell in gaps if s.grid.is_free(cell)}
    if not gaps:
        return None
    return approach_open(s.grid, s.pos, s.facing, lambda c: c in gaps, "place_stone", limit=PLANT_RANGE)


def harvest(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Eat a ripe plant when its food fits (or for eat_plant); ripe plants keep till then."""
    ripe = agent.ripe_plants()
    hungry = s.inv["food"] <= MAXIMUM["food"] - PLANT_FOOD
    if not ripe or (s.obs.achievements["eat_plant"] and not hungry):
        return None
    return agent.bite(s, s.go(lambda c: c in ripe, "do"))


def first_cow(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Goal: eat a cow within ``COW_RANGE`` once (eat_cow), then never again."""
    if s.obs.achievements["eat_cow"]:
        return None
    return s.go(s.named("cow"), "do", limit=COW_RANGE)


def hunt(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Go after a zombie nearby, or a skeleton in the tunnels, until one of each is defeated."""
    if s.inv["health"] < HUNT_HEALTH:
        return None
    if not s.obs.achievements["defeat_zombie"]:
        plan = s.go(s.named("zombie"), "do", limit=ZOMBIE_RANGE)
        if plan:
            return plan
    if not s.obs.achievements["defeat_skeleton"] and s.inv["stone_sword"]:
        return s.go(s.named("skeleton"), "do", limit=SKELETON_RANGE)
    return None


def diamond(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Goal: obtain one diamond (with everything mining it needs), then stop."""
    return None if s.inv["diamond"] else obtain(s, "diamond")


def stock_up(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Goal: hold at least ``STOCK`` of each item, gathering the first one short."""
    for item, amount in STOCK.items():
        if s.inv[item] < amount:
            plan = obtain(s, item)
            if plan:
                return plan
    return None


def stay_near_plants(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Idle close to our plants: Crafter only grows objects near the player."""
    if not agent.plants:
        return None
    cells = set(agent.plants)
    close = shortest_path(
        s.grid, s.pos, lambda c: any(abs(c[0] - p[0]) + abs(c[1] - p[1]) <= PLANT_RANGE // 2 for p in cells)
    )
    return walk(s.grid, s.pos, s.facing, close)[0] if close else None


def wander(agent: ScriptedPolicy, s: Situation) -> Plan | None:
    """Nothing to do: a random step, after which the map (and a goal) may have changed."""
    moves = [MOVES[d] for d in DIRECTIONS if s.grid.is_free(add(s.pos, d))]
    return [moves[agent.rng.integers(len(moves))]] if moves else None


GOALS: tuple[Goal, ...] = (
    defend,
    drink,
    eat,
    rest,
    basic_tools,
    first_stone,
    first_furnace,
    iron_tools,
    plant,
    fence_plants,
    harvest,
    first_cow,
    hunt,
    diamond,
    stock_up,
    stay_near_plants,
    wander,
)


def scripted_policy(rng: np.random.Generator) -> Policy:
    """A competent scripted player (see the module docstring); ``rng`` breaks idle ties."""
    return ScriptedPolicy(rng)
