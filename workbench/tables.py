"""Compatibility names: Crafter's facts and the task app's resource tables, now in
``workbench.crafter_facts`` and ``workbench.resource_weights`` (import from there)."""

from workbench.crafter_facts import (
    ACHIEVEMENT_ALIASES,
    ACHIEVEMENT_GROUPS,
    ACHIEVEMENTS,
    ACTIONS,
    INITIAL_INVENTORY,
    INVENTORY_ITEMS,
)
from workbench.resource_weights import TASK_APP_RESOURCE_WEIGHTS, ResourceWeights

__all__ = [
    "ACHIEVEMENT_ALIASES",
    "ACHIEVEMENT_GROUPS",
    "ACHIEVEMENTS",
    "ACTIONS",
    "INITIAL_INVENTORY",
    "INVENTORY_ITEMS",
    "ResourceWeights",
    "TASK_APP_RESOURCE_WEIGHTS",
]
