"""Shelters to sleep in: tiny enemy-free regions, two-cell dead ends, the way in and the seal.

A zombie or an arrow that reaches a sleeping player costs health, so the hand-written policies
sleep walled in: ``enclosed`` says whether the player's region is already safe, ``find_shelter``
finds the nearest dead end to sleep in (or to dig), and ``shelter_plan`` gives the actions that
walk (or dig) into it and seal its entrance with a stone. Map queries and paths are
``workbench.data.policies.navigation``'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.data.policies.navigation import (
    DIGGABLE,
    DIRECTIONS,
    ENEMIES,
    MOVES,
    SOLID,
    WALKABLE,
    Cell,
    Grid,
    Plan,
    add,
    opposite,
    shortest_path,
    walk,
)


def enclosed(grid: Grid, pos: Cell, max_cells: int = 4, walls: frozenset[str] = SOLID) -> bool:
    """Whether the open region around ``pos`` is tiny and enemy-free: safe to sleep in.

    Creatures walk on walkable cells only, and zombies spawn at least 6 cells from the player,
    so a region of a few cells walled by solid material cannot be entered or spawned in.
    (Arrows fly over water: leave water out of ``walls`` when skeletons are about.)
    """
    region = {pos}
    frontier = [pos]
    while frontier:
        cell = frontier.pop()
        for d in DIRECTIONS:
            step = add(cell, d)
            name = grid[step]
            if step in region or name is None or name in walls or name == "lava":
                continue
            if name in ENEMIES or len(region) >= max_cells:
                return False
            region.add(step)
            frontier.append(step)
    return True


@dataclass(frozen=True)
class Shelter:
    """A two-cell dead end to sleep in, entered from ``entrance`` along ``direction``.

    The player walks (or digs) in to ``back``, steps back into ``inner``, which leaves it
    facing the entrance, and seals the entrance with a stone.
    """

    entrance: Cell
    direction: Cell

    @property
    def inner(self) -> Cell:
        """The cell one step in from the entrance, where the player sleeps."""
        return add(self.entrance, self.direction)

    @property
    def back(self) -> Cell:
        """The cell two steps in from the entrance: the shelter's back wall side."""
        return add(self.entrance, self.direction, 2)


def is_shelter(
    grid: Grid,
    shelter: Shelter,
    can_dig: bool,
    has_stone: bool,
    walls: frozenset[str] = SOLID,
) -> bool:
    """Walls all round, room to walk or dig in, and a stone for the entrance."""
    d = shelter.direction
    side = (d[1], d[0])
    rooms = (shelter.inner, shelter.back)
    for room in rooms:
        name = grid[room]
        if not (name in WALKABLE or name == "player" or (can_dig and name in DIGGABLE)):
            return False
        if grid[add(room, side)] not in walls or grid[add(room, opposite(side))] not in walls:
            return False
    if grid[add(shelter.back, d)] not in walls:
        return False
    return has_stone or (can_dig and any(grid[room] in DIGGABLE for room in rooms))


def find_shelter(
    grid: Grid,
    pos: Cell,
    *,
    can_dig: bool,
    has_stone: bool,
    limit: int | None = None,
    next_to: str | None = None,
    walls: frozenset[str] = SOLID,
) -> Shelter | None:
    """The nearest reachable shelter (see ``Shelter``), or None.

    ``next_to``: only shelters with this material in a wall (water: drink without going out).
    """

    def wanted(shelter: Shelter) -> bool:
        if not is_shelter(grid, shelter, can_dig, has_stone, walls):
            return False
        return next_to is None or any(
            grid[add(room, d)] == next_to for room in (shelter.inner, shelter.back) for d in DIRECTIONS
        )

    for d in DIRECTIONS:  # already inside one?
        for depth in (1, 2):
            here = Shelter(add(pos, opposite(d), depth), d)
            if wanted(here):
                return here
    found: list[Shelter] = []

    def is_entrance(cell: Cell) -> bool:
        for d in DIRECTIONS:
            if wanted(Shelter(cell, d)):
                found.append(Shelter(cell, d))
                return True
        return False

    path = shortest_path(grid, pos, is_entrance, can_dig=can_dig, limit=limit)
    return found[-1] if path is not None else None


def shelter_plan(
    grid: Grid,
    pos: Cell,
    facing: Cell,
    shelter: Shelter,
    *,
    can_dig: bool,
) -> Plan | None:
    """The next actions of getting into ``shelter`` and sealing it.

    None if it can't be reached, or if we are in it and it is sealed already.
    """
    d, out = shelter.direction, opposite(shelter.direction)
    if pos == shelter.back:
        return [MOVES[out]]  # steps back into the inner cell, which turns us to the entrance
    if pos == shelter.inner:
        if facing != out:
            return _dig_or_move(grid, shelter.back, d, facing)
        entrance = grid[shelter.entrance]
        if entrance in SOLID:
            return None
        return ["place_stone" if entrance in WALKABLE else "do"]  # "do" hits a creature there
    if pos == shelter.entrance:
        return _dig_or_move(grid, shelter.inner, d, facing)
    path = shortest_path(
        grid, pos, lambda c: c == shelter.entrance, can_dig=can_dig, avoid=(shelter.inner, shelter.back)
    )
    if path is None:
        return None
    actions, facing = walk(grid, pos, facing, path)
    return actions + _dig_or_move(grid, shelter.inner, d, facing)


def _dig_or_move(grid: Grid, target: Cell, direction: Cell, facing: Cell) -> Plan:
    """Step into the neighbouring ``target``, mining it first if it is stone."""
    if grid[target] in DIGGABLE:
        turn = [] if facing == direction else [MOVES[direction]]
        return turn + ["do", MOVES[direction]]
    return [MOVES[direction]]
