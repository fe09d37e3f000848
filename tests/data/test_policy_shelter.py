"""Shelters (``workbench.data.policies.shelter``, split from ``navigation``) on hand-drawn maps:
each expected answer is read off the drawing with Crafter's movement rules."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.data.policies.navigation import IDS, Grid
from workbench.data.policies.shelter import Shelter, enclosed, find_shelter, is_shelter, shelter_plan

LEGEND = {"s": "stone", "g": "grass", "w": "water", "z": "zombie", "p": "player", "t": "tree"}
UP, DOWN = (0, -1), (0, 1)


def grid(*rows: str) -> Grid:
    """A Grid from rows of map letters (``LEGEND``); a row is a y, a letter's column its x."""
    semantic = np.array([[IDS[LEGEND[letter]] for letter in row] for row in rows], dtype=np.uint8).T
    return Grid(semantic)


# A dead end opening downwards: entrance (1, 3), inner (1, 2), back (1, 1), walled all round.
DEAD_END = ("sss", "sgs", "sgs", "ggg", "gpg")
SHELTER = Shelter(entrance=(1, 3), direction=UP)


def test_a_shelter_is_two_cells_in_from_its_entrance():
    assert (SHELTER.inner, SHELTER.back) == ((1, 2), (1, 1))


def test_enclosed_is_a_tiny_region_without_enemies():
    assert enclosed(grid("ssss", "spgs", "ssss"), (1, 1))  # two open cells, walled
    assert not enclosed(grid("sssss", "spgzs", "sssss"), (1, 1))  # a zombie in the region
    assert not enclosed(grid("ggggg", "ggggg", "ggpgg", "ggggg"), (2, 2))  # open grass: more than 4 cells


def test_is_shelter_needs_walls_room_and_a_seal():
    assert is_shelter(grid(*DEAD_END), SHELTER, can_dig=False, has_stone=True)
    assert not is_shelter(grid(*DEAD_END), SHELTER, can_dig=False, has_stone=False)  # nothing to seal it with
    assert not is_shelter(grid("sss", "sgs", "ggs", "ggg", "gpg"), SHELTER, can_dig=False, has_stone=True)  # open side
    assert not is_shelter(grid("sgs", "sgs", "sgs", "ggg", "gpg"), SHELTER, can_dig=False, has_stone=True)  # open back
    dug = ("sss", "sss", "sgs", "ggg", "gpg")  # the back is stone: a shelter to dig
    assert not is_shelter(grid(*dug), SHELTER, can_dig=False, has_stone=True)
    assert is_shelter(grid(*dug), SHELTER, can_dig=True, has_stone=False)  # the dug stone seals it


def test_find_shelter_finds_the_dead_end_and_honours_next_to():
    assert find_shelter(grid(*DEAD_END), (1, 4), can_dig=False, has_stone=True) == SHELTER
    assert find_shelter(grid(*DEAD_END), (1, 4), can_dig=False, has_stone=True, next_to="water") is None
    by_water = ("sss", "sgw", "sgs", "ggg", "gpg")  # water walls the back cell
    assert find_shelter(grid(*by_water), (1, 4), can_dig=False, has_stone=True, next_to="water") == SHELTER
    assert find_shelter(grid("ggg", "gpg", "ggg"), (1, 1), can_dig=False, has_stone=True) is None


@pytest.mark.parametrize(
    ("rows", "pos", "facing", "plan"),
    [
        (DEAD_END, (1, 4), DOWN, ["move_up", "move_up"]),  # to the entrance, then in
        (DEAD_END, (1, 3), UP, ["move_up"]),  # at the entrance: step in
        (("sss", "sgs", "sps", "ggg"), (1, 2), UP, ["move_up"]),  # inner, not facing out: on to the back
        (("sss", "sps", "sgs", "ggg"), (1, 1), UP, ["move_down"]),  # back: step out, which faces the entrance
        (("sss", "sgs", "sps", "ggg"), (1, 2), DOWN, ["place_stone"]),  # facing the open entrance: seal it
        (("sss", "sgs", "sps", "gzg"), (1, 2), DOWN, ["do"]),  # a creature in the entrance: hit it
        (("sss", "sgs", "sps", "gsg"), (1, 2), DOWN, None),  # sealed already
        (("sss", "sss", "sps", "ggg"), (1, 2), UP, ["do", "move_up"]),  # back is stone, faced: mine, step in
        (("sss", "sss", "sps", "ggg"), (1, 2), (-1, 0), ["move_up", "do", "move_up"]),  # turn first
    ],
)
def test_shelter_plan_walks_in_and_seals(rows, pos, facing, plan):
    assert shelter_plan(grid(*rows), pos, facing, SHELTER, can_dig=True) == plan
