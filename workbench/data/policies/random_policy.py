"""The uniform random policy: Crafter's usual lower baseline."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from crafter import constants

from workbench.data.policies.base import Policy, PolicyInput

ACTIONS: tuple[str, ...] = tuple(constants.actions)


def random_policy(rng: np.random.Generator) -> Policy:
    """A policy drawing each of its ``max_actions`` actions uniformly from the 17 actions."""

    def act(obs: PolicyInput) -> Sequence[str]:
        return [ACTIONS[i] for i in rng.integers(len(ACTIONS), size=obs.max_actions)]

    return act
