"""Per-name weights and k-limits of a config as arrays in Crafter's order, and which unlocks earn a credit."""

from __future__ import annotations

import numpy as np

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.resource_weights import ResourceWeights
from workbench.core.reward import coerce_k_limits, coerce_weights


def achievement_weights(config: RewardConfig) -> np.ndarray:
    """Credit weight per achievement (Crafter order): ``weights.get(name, 1.0)`` after the task
    app's coercion (a config built in code may hold values ``from_dict`` would have dropped).

    Args:
        config: The config.

    Returns:
        float (22,).
    """
    weights = coerce_weights(dict(config.weights))
    return np.array([weights.get(name, 1.0) for name in ACHIEVEMENTS], dtype=np.float64)


def achievement_limits(config: RewardConfig) -> np.ndarray:
    """k-limit per achievement (Crafter order): ``k_limits.get(name, 1)`` after the task app's
    coercion; <= 0 is unlimited.

    Args:
        config: The config.

    Returns:
        int (22,).
    """
    limits = coerce_k_limits(dict(config.k_limits))
    return np.array([limits.get(name, 1) for name in ACHIEVEMENTS], dtype=np.int64)


def slot_weights(resource: ResourceWeights) -> np.ndarray:
    """Resource weight per slot: the 16 inventory items, then the 22 achievement counts.

    Args:
        resource: The resource tables.

    Returns:
        float (38,).
    """
    return np.array(
        [resource.inventory_weight(item) for item in INVENTORY_ITEMS]
        + [resource.achievement_count_weight(name) for name in ACHIEVEMENTS],
        dtype=np.float64,
    )


def credited_unlocks(ordinal: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Whether each unlock earns a credit. The name's earlier credits (the task app's
    ``prior``) are min(ordinal, limit): every earlier unlock was credited until the limit was
    reached. So ``prior < limit`` is ``ordinal < limit``; a limit <= 0 credits every unlock.
    For a credited unlock min(ordinal, limit) is the ordinal itself: its ``count_prior``.

    Args:
        ordinal: Per unlock, earlier unlocks of the same name in the episode.
        limit: Per unlock, its achievement's k-limit.

    Returns:
        bool, one per unlock.
    """
    return (limit <= 0) | (ordinal < limit)
