"""Honest explorers of several skill levels: the scripted player, taking a random action now and then."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.data.policies.base import Policy, PolicyInput
from workbench.data.policies.random_policy import ACTIONS
from workbench.data.policies.scripted import ScriptedPolicy

__all__ = ["Explorer"]


@dataclass(frozen=True)
class Explorer:
    """A factory: the scripted player, but each decision is one random action with probability
    ``randomness`` (0: the scripted player; 1: the random policy)."""

    randomness: float

    def __call__(self, rng: np.random.Generator) -> Policy:
        """The explorer for one episode."""
        scripted = ScriptedPolicy(rng)

        def act(obs: PolicyInput) -> Sequence[str]:
            if rng.random() < self.randomness:
                return [ACTIONS[int(rng.integers(len(ACTIONS)))]]
            return scripted(obs)

        return act
