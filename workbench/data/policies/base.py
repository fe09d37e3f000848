"""The policy interface: what a policy sees before a decision and what it returns.

A policy factory is called once per episode with that episode's random generator and returns
the policy, a callable from ``PolicyInput`` to 1..``max_actions`` Crafter action names. Policies
may keep state between calls (they live for one episode).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


@dataclass(frozen=True)
class PolicyInput:
    """What a policy sees before one decision."""

    image: np.ndarray  # uint8 (64, 64, 3), the last observation
    inventory: Mapping[str, int]  # Crafter's 16 items
    achievements: Mapping[str, int]  # Crafter's 22 cumulative counts
    semantic: np.ndarray  # (64, 64) int world map of material/object ids (info["semantic"])
    player_pos: tuple[int, int]
    facing: tuple[int, int]  # env._player.facing
    step: int  # env steps taken so far in this episode
    max_actions: int  # the decision may hold 1..max_actions actions


class Policy(Protocol):
    """Chooses the next actions from what the environment exposes."""

    def __call__(self, obs: PolicyInput) -> Sequence[str]:
        """Crafter action names, 1..``obs.max_actions`` of them."""
        ...


#: Called once per episode with that episode's rng.
PolicyFactory = Callable[[np.random.Generator], Policy]


def policy_input_from(
    env: Any,
    obs: np.ndarray,
    info: Mapping[str, Any] | None,
    step: int,
    max_actions: int,
    achievements: Mapping[str, int] | None = None,
) -> PolicyInput:
    """Build the ``PolicyInput`` for a ``crafter.Env`` after ``reset()`` or ``step()``.

    ``info`` is the dict ``step()`` returned, or None after ``reset()`` (which returns no info);
    whatever it lacks is read from the env's player and semantic view, exactly as ``step()``
    would have reported it. ``achievements`` overrides the counts (e.g. a recorder's own);
    by default they are Crafter's cumulative counts (``env._player.achievements``, all zero
    after reset).
    """
    info = info or {}
    player = env._player
    if achievements is None:
        achievements = info.get("achievements", player.achievements)
    semantic = info.get("semantic")
    if semantic is None:
        semantic = env._sem_view()
    pos = info.get("player_pos", player.pos)
    return PolicyInput(
        image=obs,
        inventory=dict(info.get("inventory", player.inventory)),
        achievements=dict(achievements),
        semantic=semantic,
        player_pos=(int(pos[0]), int(pos[1])),
        facing=(int(player.facing[0]), int(player.facing[1])),
        step=int(step),
        max_actions=int(max_actions),
    )
