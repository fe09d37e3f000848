"""Map queries and path-finding on Crafter's semantic map, shared by the hand-written policies.

``info["semantic"]`` covers the whole 64x64 world: each cell holds a material id, or an object
id where a creature, arrow or plant stands (the material below is then hidden). The id order
mirrors ``crafter.Env``: 0 = outside, materials from 1 in ``crafter.constants.materials``
order, then the object classes the env registers with its ``SemanticView``.

Movement rules that shape everything here (crafter/objects.py): a ``move_*`` action always turns
the player that way and only moves if the cell is walkable and empty; ``do`` and ``place_*`` act
on the faced cell. So a policy can turn towards a blocked cell without moving, but can only face
an open cell by walking into the cell before it. The player may walk into lava (and dies):
paths here never enter lava, and turns only ever aim at blocked cells.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from crafter import constants

from workbench.data.policies.base import PolicyInput

Cell = tuple[int, int]
Plan = list[str]

MATERIAL_IDS: dict[str, int] = {name: i + 1 for i, name in enumerate(constants.materials)}
#: The object classes in the order ``crafter.Env`` passes them to its ``SemanticView``.
OBJECT_NAMES = ("player", "cow", "zombie", "skeleton", "arrow", "plant")
OBJECT_IDS: dict[str, int] = {name: len(MATERIAL_IDS) + 1 + i for i, name in enumerate(OBJECT_NAMES)}
IDS: dict[str, int] = {**MATERIAL_IDS, **OBJECT_IDS}
NAMES: dict[int, str] = {i: name for name, i in IDS.items()}

WALKABLE = frozenset(constants.walkable)  # grass, sand, path
#: What a path may dig through with a wood pickaxe (mining it leaves walkable path).
DIGGABLE = frozenset({"stone"})
#: Materials no creature can enter: walls for shelters and plant pens (lava kills, so excluded).
SOLID = frozenset(constants.materials) - WALKABLE - {"lava"}
ENEMIES = frozenset({"zombie", "skeleton"})

DIRECTIONS: tuple[Cell, ...] = ((-1, 0), (1, 0), (0, -1), (0, 1))
MOVES: dict[Cell, str] = {(-1, 0): "move_left", (1, 0): "move_right", (0, -1): "move_up", (0, 1): "move_down"}


def add(cell: Cell, direction: Cell, times: int = 1) -> Cell:
    """The cell ``times`` steps from ``cell`` along ``direction``."""
    return cell[0] + times * direction[0], cell[1] + times * direction[1]


def opposite(direction: Cell) -> Cell:
    """The direction pointing the other way."""
    return -direction[0], -direction[1]


class Grid:
    """The semantic map as names ("grass", "zombie", ...), with None outside the world."""

    def __init__(self, semantic: np.ndarray) -> None:
        self.semantic = semantic
        self._names = [[NAMES.get(v) for v in row] for row in semantic.tolist()]
        self._width, self._height = semantic.shape

    def __getitem__(self, cell: Cell) -> str | None:
        x, y = cell
        if 0 <= x < self._width and 0 <= y < self._height:
            return self._names[x][y]
        return None

    def is_free(self, cell: Cell) -> bool:
        """Walkable and empty: the player would move into it."""
        return self[cell] in WALKABLE

    def find(self, name: str) -> list[Cell]:
        """All cells showing ``name`` (a material or an object)."""
        return [(int(x), int(y)) for x, y in np.argwhere(self.semantic == IDS[name])]

    def around(self, cell: Cell) -> set[str | None]:
        """Names in the 3x3 square around ``cell``: what Crafter's ``make_*`` counts as nearby."""
        return {self[(cell[0] + dx, cell[1] + dy)] for dx in (-1, 0, 1) for dy in (-1, 0, 1)}


def shortest_path(
    grid: Grid,
    start: Cell,
    is_goal: Callable[[Cell], bool],
    *,
    can_dig: bool = False,
    limit: int | None = None,
    avoid: Iterable[Cell] = (),
) -> list[Cell] | None:
    """Cells from ``start`` (excluded) to the nearest cell where ``is_goal`` holds, by BFS.

    Steps go through free walkable cells, and through stone when ``can_dig``. ``limit`` caps
    the path length; None when no goal is reachable. An empty list: ``start`` is a goal.
    """
    if is_goal(start):
        return []
    blocked = set(avoid)
    parents: dict[Cell, Cell] = {start: start}
    frontier = deque([(start, 0)])
    while frontier:
        cell, depth = frontier.popleft()
        if limit is not None and depth >= limit:
            continue
        for direction in DIRECTIONS:
            step = add(cell, direction)
            if step in parents or step in blocked:
                continue
            name = grid[step]
            if name not in WALKABLE and not (can_dig and name in DIGGABLE):
                continue
            parents[step] = cell
            if is_goal(step):
                path = [step]
                while parents[path[-1]] != start:
                    path.append(parents[path[-1]])
                return path[::-1]
            frontier.append((step, depth + 1))
    return None


def walk(grid: Grid, start: Cell, facing: Cell, path: list[Cell]) -> tuple[Plan, Cell]:
    """The actions that follow ``path`` (digging through stone), and the facing at its end."""
    actions: Plan = []
    cell = start
    for step in path:
        direction = (step[0] - cell[0], step[1] - cell[1])
        if grid[step] in DIGGABLE:
            if facing != direction:
                actions.append(MOVES[direction])  # stone blocks, so this only turns
            actions.append("do")
        actions.append(MOVES[direction])
        facing, cell = direction, step
    return actions, facing


def approach(
    grid: Grid,
    pos: Cell,
    facing: Cell,
    is_target: Callable[[Cell], bool],
    action: str,
    *,
    can_dig: bool = False,
    limit: int | None = None,
) -> Plan | None:
    """Walk next to the nearest cell where ``is_target`` holds, face it and do ``action``.

    For targets that block movement (trees, water, stone, creatures, tables): turning towards
    them then does not move the player. None when no target is within reach.
    """
    if is_target(add(pos, facing)):
        return [action]
    path = shortest_path(
        grid, pos, lambda c: any(is_target(add(c, d)) for d in DIRECTIONS), can_dig=can_dig, limit=limit
    )
    if path is None:
        return None
    actions, facing = walk(grid, pos, facing, path)
    stand = path[-1] if path else pos
    if not is_target(add(stand, facing)):
        direction = next(d for d in DIRECTIONS if is_target(add(stand, d)))
        actions.append(MOVES[direction])
    return actions + [action]


def approach_open(
    grid: Grid,
    pos: Cell,
    facing: Cell,
    is_spot: Callable[[Cell], bool],
    action: str,
    *,
    stand_ok: Callable[[Cell], bool] = lambda cell: True,
    can_dig: bool = False,
    limit: int | None = None,
) -> Plan | None:
    """Face an open cell where ``is_spot`` holds (to place on it, or ``do`` on grass), then act.

    An open cell can only be faced by stepping towards it from two cells away, so this walks to
    a cell from which one step along a direction lands on a free cell ``stand`` (with
    ``stand_ok``) that faces the spot. None when there is no such spot within reach.
    """
    if stand_ok(pos) and is_spot(add(pos, facing)):
        return [action]

    def entry(cell: Cell) -> Cell | None:
        for d in DIRECTIONS:
            stand = add(cell, d)
            if grid.is_free(stand) and stand_ok(stand) and is_spot(add(stand, d)):
                return d
        return None

    path = shortest_path(grid, pos, lambda c: entry(c) is not None, can_dig=can_dig, limit=limit)
    if path is None:
        return None
    actions, _ = walk(grid, pos, facing, path)
    direction = entry(path[-1] if path else pos)
    assert direction is not None  # the path ends where entry() found a spot
    return actions + [MOVES[direction], action]


@dataclass
class Situation:
    """One decision's view of the world, with the queries the goals share."""

    obs: PolicyInput
    grid: Grid

    @property
    def pos(self) -> Cell:
        """The player's position (x, y)."""
        return self.obs.player_pos

    @property
    def facing(self) -> Cell:
        """The direction the player faces."""
        return self.obs.facing

    @property
    def inv(self) -> Mapping[str, int]:
        """The player's inventory (item -> amount)."""
        return self.obs.inventory

    @property
    def ahead(self) -> str | None:
        """What the grid holds in the cell the player faces (None where unknown)."""
        return self.grid[add(self.pos, self.facing)]

    @property
    def can_dig(self) -> bool:
        """Whether the player holds a wood pickaxe (so it can mine stone and coal)."""
        return self.inv["wood_pickaxe"] > 0

    def near(self, name: str, distance: int) -> bool:
        """Whether a ``name`` is within ``distance`` (Manhattan) of us."""
        x, y = self.pos
        return any(abs(cx - x) + abs(cy - y) <= distance for cx, cy in self.grid.find(name))

    def named(self, *names: str) -> Callable[[Cell], bool]:
        """A test of whether a cell holds one of ``names``."""
        return lambda cell: self.grid[cell] in names

    def go(
        self,
        is_target: Callable[[Cell], bool],
        action: str,
        limit: int | None = None,
    ) -> Plan | None:
        """Walk (digging if we can) next to a target, face it and act on it."""
        return approach(self.grid, self.pos, self.facing, is_target, action, can_dig=self.can_dig, limit=limit)
