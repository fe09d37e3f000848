"""A config's per-name weights and k-limits as arrays in Crafter's order (the rule's arithmetic, ``core.reward_rule``)."""

from __future__ import annotations

import numpy as np

from workbench.core import reward_rule
from workbench.core.config import RewardConfig
from workbench.core.reward_rule import credited_unlocks, slot_weights

__all__ = ["achievement_limits", "achievement_weights", "credited_unlocks", "slot_weights"]


def achievement_weights(config: RewardConfig) -> np.ndarray:
    """Credit weight per achievement (Crafter order): ``weights.get(name, 1.0)`` after the task
    app's coercion (a config built in code may hold values ``from_dict`` would have dropped),
    whatever the config's rule (``config.rule.credit_weights`` is zeros for a rule without credits).

    Args:
        config: The config.

    Returns:
        float (22,).
    """
    return reward_rule.achievement_weights(config.weights)


def achievement_limits(config: RewardConfig) -> np.ndarray:
    """k-limit per achievement (Crafter order): ``k_limits.get(name, 1)`` after the task app's
    coercion; <= 0 is unlimited.

    Args:
        config: The config.

    Returns:
        int (22,).
    """
    return config.rule.credit_limits(config.k_limits)
