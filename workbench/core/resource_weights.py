"""The task app's resource-shaping tables (``workbench/core/resource_weights.yaml``) as a type.

These are the numbers users tune: they live in the YAML file, not in code; this module reads
them once and gives them as read-only ``ResourceWeights``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType
from typing import Any

from workbench.util.yaml_data import load_data

#: Keys of a resource-table override (a workbench extension the task app cannot express).
RESOURCE_OVERRIDE_KEYS = ("inventory", "inventory_default", "achievement_counts", "achievement_count_default")


@dataclass(frozen=True)
class ResourceWeights:
    """Weights of the per_achievement strategy's resource shaping.

    ``inventory[item]`` pays per unit an item rises, ``achievement_counts[name]`` per unit an
    achievement count rises; names missing from a table pay the table's default.

    Attributes:
        inventory: Item -> weight per unit of rise.
        inventory_default: What an unlisted item pays.
        achievement_counts: Achievement -> weight per unit of count rise.
        achievement_count_default: What an unlisted achievement pays.
    """

    inventory: Mapping[str, float] = field(default_factory=dict)
    inventory_default: float = 0.05
    achievement_counts: Mapping[str, float] = field(default_factory=dict)
    achievement_count_default: float = 0.05

    def inventory_weight(self, item: str) -> float:
        """What one unit of rise of ``item`` pays (the table's default for an unlisted item).

        Args:
            item: An inventory item name.

        Returns:
            The weight.
        """
        return self.inventory.get(item, self.inventory_default)

    def achievement_count_weight(self, name: str) -> float:
        """What one unit of rise of ``name``'s count pays (the default for an unlisted name).

        Args:
            name: An achievement name.

        Returns:
            The weight.
        """
        return self.achievement_counts.get(name, self.achievement_count_default)

    def overridden(self, **changes: Any) -> ResourceWeights:
        """A copy with some tables merged over this one (tables merge key by key).

        Args:
            **changes: ``inventory``, ``achievement_counts`` (tables) and the two ``*_default`` numbers.

        Returns:
            The merged weights; this one is unchanged.
        """
        inventory = {**self.inventory, **changes.get("inventory", {})}
        counts = {**self.achievement_counts, **changes.get("achievement_counts", {})}
        return ResourceWeights(
            inventory=MappingProxyType(inventory),
            inventory_default=float(changes.get("inventory_default", self.inventory_default)),
            achievement_counts=MappingProxyType(counts),
            achievement_count_default=float(changes.get("achievement_count_default", self.achievement_count_default)),
        )


def _load() -> dict[str, Any]:
    text = resources.files("workbench").joinpath("core", "resource_weights.yaml").read_text(encoding="utf-8")
    table: dict[str, Any] = load_data(text)
    return table


_TABLE = _load()

#: The task app's own tables, exactly.
TASK_APP_RESOURCE_WEIGHTS = ResourceWeights(
    inventory=MappingProxyType({k: float(v) for k, v in _TABLE["inventory"].items()}),
    inventory_default=float(_TABLE["inventory_default"]),
    achievement_counts=MappingProxyType({k: float(v) for k, v in _TABLE["achievement_counts"].items()}),
    achievement_count_default=float(_TABLE["achievement_count_default"]),
)
