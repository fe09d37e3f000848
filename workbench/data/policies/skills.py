"""How the scripted player gets things: plans to obtain an item.

Plans are recursive over Crafter's own recipes (``make``), collect rules and placements
(``crafter.constants``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from crafter import constants

from workbench.data.policies.navigation import Cell, Plan, Situation, approach_open, shortest_path, walk

#: Walking further than this back to a table costs more than placing a new one.
STATION_RANGE = 12
#: Item -> the material a ``do`` collects it from, e.g. wood -> tree.
SOURCE = {item: material for material, info in constants.collect.items() for item in info["receive"]}


def obtain(s: Situation, item: str) -> Plan | None:
    """The next actions towards one more ``item``; None if it is out of reach."""
    if item in constants.make:
        return craft(s, item)
    if item in SOURCE:
        return collect(s, SOURCE[item])
    return None


def craft(s: Situation, tool: str) -> Plan | None:
    """A plan to make ``tool`` (obtaining a missing ingredient first, building its stations if none is near), or None."""
    recipe = constants.make[tool]
    for item, amount in recipe["uses"].items():
        if s.inv[item] < amount:
            return obtain(s, item)
    return use_stations(s, recipe["nearby"], f"make_{tool}", spare=recipe["uses"])


def collect(s: Situation, material: str) -> Plan | None:
    """A plan to collect ``material`` (obtaining the tool it requires first), or None when none is reachable."""
    for tool, amount in constants.collect[material]["require"].items():
        if s.inv[tool] < amount:
            return obtain(s, tool)
    if material == "grass":  # saplings: grass is open, so it must be faced from two cells away
        return approach_open(s.grid, s.pos, s.facing, s.named("grass"), "do")
    return s.go(s.named(material), "do")


def near_table(s: Situation) -> Callable[[Cell], bool]:
    """A test of whether a cell has a table within reach (its 3x3 square)."""
    return lambda cell: "table" in s.grid.around(cell)


def use_stations(
    s: Situation,
    stations: Sequence[str],
    action: str,
    spare: Mapping[str, int],
) -> Plan | None:
    """Stand where all ``stations`` are within reach (the 3x3 square) and act; build if none.

    ``spare``: materials the action itself needs, so building a station must not use them.
    """
    path = shortest_path(
        s.grid, s.pos, lambda c: set(stations) <= s.grid.around(c), can_dig=s.can_dig, limit=STATION_RANGE
    )
    if path is not None:
        return walk(s.grid, s.pos, s.facing, path)[0] + [action]
    table = shortest_path(s.grid, s.pos, near_table(s), can_dig=s.can_dig, limit=STATION_RANGE)
    if table is None:
        return place(s, "table", spare)
    return place(s, "furnace", spare, stand_ok=near_table(s))


def place(
    s: Situation,
    name: str,
    spare: Mapping[str, int] | None = None,
    stand_ok: Callable[[Cell], bool] = lambda cell: True,
) -> Plan | None:
    """Place ``name`` on the nearest cell that takes it, gathering its materials first."""
    rule = constants.place[name]
    for item, amount in rule["uses"].items():
        if s.inv[item] < amount + (spare or {}).get(item, 0):
            return obtain(s, item)
    return approach_open(
        s.grid, s.pos, s.facing, s.named(*rule["where"]), f"place_{name}", stand_ok=stand_ok, limit=STATION_RANGE
    )
