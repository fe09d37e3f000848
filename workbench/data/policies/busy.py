"""Honest players that drink, eat, mine and build more than the scripted player: the benchmark's false-alarm test.

Each is the scripted player (``scripted.GOALS``: survival, then the tech tree) with one habit
added before its idle goals: ``thirsty`` tops drink and food up whenever 2 below full,
``miner`` keeps 9 stone and some coal and iron dug out, ``builder`` walls the cells around its
first table with stone. They still climb the tech tree; only their habits pay resource shaping
often.
"""

from __future__ import annotations

import numpy as np

from workbench.data.policies.base import Policy
from workbench.data.policies.loop_goals import dig_stock, top_up, wall_base
from workbench.data.policies.scripted import GOALS, Goal, ScriptedPolicy, stock_up

__all__ = ["builder_policy", "miner_policy", "thirsty_policy"]


def _with(habit: Goal, before: Goal) -> tuple[Goal, ...]:
    """``GOALS`` with ``habit`` inserted just before ``before``."""
    at = GOALS.index(before)
    return (*GOALS[:at], habit, *GOALS[at:])


def thirsty_policy(rng: np.random.Generator) -> Policy:
    """The scripted player that tops drink and food up whenever 2 below full (by day)."""
    return ScriptedPolicy(rng, goals=_with(top_up, GOALS[3]))  # right after drink and eat


def miner_policy(rng: np.random.Generator) -> Policy:
    """The scripted player that keeps 9 stone, 5 coal and 2 iron dug out."""
    return ScriptedPolicy(rng, goals=_with(dig_stock, stock_up))


def builder_policy(rng: np.random.Generator) -> Policy:
    """The scripted player that walls the ring around its first table with stone."""
    return ScriptedPolicy(rng, goals=_with(wall_base, stock_up))
