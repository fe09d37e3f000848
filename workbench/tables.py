"""Crafter facts and the task app's reward tables, loaded from ``workbench/data/*.yaml``.

The numbers users tune live in those YAML files, not in code: this module only reads them
once and exposes them as read-only constants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType
from typing import Any, Mapping

import yaml


def _load(name: str) -> dict[str, Any]:
    text = resources.files("workbench").joinpath("data", name).read_text(encoding="utf-8")
    return yaml.safe_load(text)


_CRAFTER = _load("crafter.yaml")
_RESOURCE = _load("resource_weights.yaml")

#: Achievement groups as the Tuner shows them (collect / make / place / combat and survival).
ACHIEVEMENT_GROUPS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {group: tuple(names) for group, names in _CRAFTER["achievement_groups"].items()}
)
#: The 22 Crafter achievements, sorted (Crafter's own order).
ACHIEVEMENTS: tuple[str, ...] = tuple(sorted(n for names in ACHIEVEMENT_GROUPS.values() for n in names))
#: The 16 entries of Crafter's ``info["inventory"]``, in Crafter's order.
INVENTORY_ITEMS: tuple[str, ...] = tuple(_CRAFTER["inventory_items"])
#: Inventory right after ``reset()``.
INITIAL_INVENTORY: Mapping[str, int] = MappingProxyType(
    {item: int(_CRAFTER["initial_inventory"].get(item, 0)) for item in INVENTORY_ITEMS}
)
#: Crafter's 17 action names; the index is the action id.
ACTIONS: tuple[str, ...] = tuple(_CRAFTER["actions"])
#: Names that are not achievements, mapped to the achievements people mean by them.
ACHIEVEMENT_ALIASES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {alias: tuple(real) for alias, real in _CRAFTER["achievement_aliases"].items()}
)


@dataclass(frozen=True)
class ResourceWeights:
    """Weights of the per_achievement strategy's resource shaping.

    ``inventory[item]`` pays per unit an item rises, ``achievement_counts[name]`` per unit an
    achievement count rises; names missing from a table pay the table's default.
    """

    inventory: Mapping[str, float] = field(default_factory=dict)
    inventory_default: float = 0.05
    achievement_counts: Mapping[str, float] = field(default_factory=dict)
    achievement_count_default: float = 0.05

    def inventory_weight(self, item: str) -> float:
        return self.inventory.get(item, self.inventory_default)

    def achievement_count_weight(self, name: str) -> float:
        return self.achievement_counts.get(name, self.achievement_count_default)

    def overridden(self, **changes: Any) -> "ResourceWeights":
        """A copy with some tables merged over this one (tables merge key by key)."""
        inventory = {**self.inventory, **changes.get("inventory", {})}
        counts = {**self.achievement_counts, **changes.get("achievement_counts", {})}
        return ResourceWeights(
            inventory=MappingProxyType(inventory),
            inventory_default=float(changes.get("inventory_default", self.inventory_default)),
            achievement_counts=MappingProxyType(counts),
            achievement_count_default=float(
                changes.get("achievement_count_default", self.achievement_count_default)
            ),
        )


#: The task app's own tables, exactly.
TASK_APP_RESOURCE_WEIGHTS = ResourceWeights(
    inventory=MappingProxyType({k: float(v) for k, v in _RESOURCE["inventory"].items()}),
    inventory_default=float(_RESOURCE["inventory_default"]),
    achievement_counts=MappingProxyType({k: float(v) for k, v in _RESOURCE["achievement_counts"].items()}),
    achievement_count_default=float(_RESOURCE["achievement_count_default"]),
)
