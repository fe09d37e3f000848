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
    """What a policy sees before one decision.

    Attributes:
        image: uint8 (64, 64, 3), the last observation.
        inventory: Crafter's 16 items.
        achievements: Crafter's 22 cumulative counts.
        semantic: (64, 64) int world map of material/object ids (``info["semantic"]``).
        player_pos: The player's position.
        facing: The player's facing direction.
        step: Env steps taken so far in this episode.
        max_actions: The decision may hold 1..max_actions actions.
    """

    image: np.ndarray  # uint8 (64, 64, 3), the last observation
    inventory: Mapping[str, int]  # Crafter's 16 items
    achievements: Mapping[str, int]  # Crafter's 22 cumulative counts
    semantic: np.ndarray  # (64, 64) int world map of material/object ids (info["semantic"])
    player_pos: tuple[int, int]
    facing: tuple[int, int]  # the player's facing direction
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
    by default they are Crafter's cumulative counts (the player's, all zero after reset).

    Args:
        env: The ``crafter.Env``.
        obs: The observation ``reset()`` or ``step()`` returned.
        info: The info ``step()`` returned, or None after ``reset()``.
        step: Env steps taken so far in this episode.
        max_actions: The most actions the decision may hold.
        achievements: Counts overriding Crafter's.

    Returns:
        The policy's input.
    """
    info = info or {}
    player = crafter_player(env)
    if achievements is None:
        achievements = info.get("achievements", player.achievements)
    semantic = info.get("semantic")
    if semantic is None:
        semantic = crafter_semantic(env)
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


# The workbench's only reads of a dependency's private attributes (tests/test_architecture.py
# allows them in these two functions alone): ``crafter.Env.reset()`` returns the image only,
# and crafter has no public accessor for the player or the semantic map before the first
# ``step()`` returns its info; the synth-ai task app reads the same two attributes. crafter is
# pinned exactly (``crafter==1.8.3``, its last release), so they cannot change under us.
def crafter_player(env: Any) -> Any:
    """The ``crafter.objects.Player`` of a ``crafter.Env`` (inventory, achievements, pos, facing, health)."""
    return env._player


def crafter_semantic(env: Any) -> np.ndarray:
    """The ``crafter.Env``'s current semantic map (what ``step()`` reports as ``info["semantic"]``)."""
    return np.asarray(env._sem_view())
