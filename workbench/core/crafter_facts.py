"""Crafter's facts (actions, items, achievements, rules), read from the crafter package itself.

Crafter keeps its game rules as data in ``crafter/data.yaml``; the workbench reads that file
(without importing the game) so every table here is Crafter's own. The workbench's own naming
data (how the Tuner groups achievements, which misspellings mean which achievement) lives in
``workbench/core/achievement_names.yaml``.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.util.yaml_data import load_data


def _crafter_data() -> dict[str, Any]:
    # find_spec locates the package without running crafter/__init__.py (which builds the game).
    spec = importlib.util.find_spec("crafter")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the crafter package is not installed (pip install crafter==1.8.3)")
    path = Path(next(iter(spec.submodule_search_locations))) / "data.yaml"
    data: dict[str, Any] = load_data(path.read_text(encoding="utf-8"))
    return data


def _names() -> dict[str, Any]:
    text = resources.files("workbench").joinpath("core", "achievement_names.yaml").read_text(encoding="utf-8")
    names: dict[str, Any] = load_data(text)
    return names


_DATA = _crafter_data()
_NAMES = _names()

#: Crafter's 17 action names; the index is the action id.
ACTIONS: tuple[str, ...] = tuple(_DATA["actions"])
#: The 16 entries of Crafter's ``info["inventory"]``, in Crafter's order.
INVENTORY_ITEMS: tuple[str, ...] = tuple(_DATA["items"])
#: Inventory right after ``reset()`` (health, food, drink and energy 9, the rest 0).
INITIAL_INVENTORY: Mapping[str, int] = MappingProxyType(
    {item: int(spec["initial"]) for item, spec in _DATA["items"].items()}
)
#: The most of each item the player can hold (9 for every item in Crafter 1.8.3).
INVENTORY_MAX: Mapping[str, int] = MappingProxyType({item: int(spec["max"]) for item, spec in _DATA["items"].items()})
#: The 22 Crafter achievements in Crafter's own (sorted) order.
ACHIEVEMENTS: tuple[str, ...] = tuple(_DATA["achievements"])
#: Crafter's rules as data: what collecting a material gives (``collect``), what placing uses
#: (``place``) and what making uses and gives (``make``), exactly as ``crafter/data.yaml``.
COLLECT_RULES: Mapping[str, Mapping[str, Any]] = MappingProxyType(_DATA["collect"])
PLACE_RULES: Mapping[str, Mapping[str, Any]] = MappingProxyType(_DATA["place"])
MAKE_RULES: Mapping[str, Mapping[str, Any]] = MappingProxyType(_DATA["make"])

#: Achievement groups as the Tuner shows them (collect / make / place / combat and survival).
ACHIEVEMENT_GROUPS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {group: tuple(names) for group, names in _NAMES["achievement_groups"].items()}
)
#: Names that are not achievements, mapped to the achievements people mean by them.
ACHIEVEMENT_ALIASES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {alias: tuple(real) for alias, real in _NAMES["achievement_aliases"].items()}
)

_grouped = sorted(name for names in ACHIEVEMENT_GROUPS.values() for name in names)
if _grouped != sorted(ACHIEVEMENTS):  # the naming data must cover Crafter's achievements exactly
    raise ImportError(f"workbench/core/achievement_names.yaml groups {_grouped}, Crafter has {list(ACHIEVEMENTS)}")


def daylight(step: int) -> float:
    """Crafter's daylight after ``step`` steps (crafter.Env._update_time).

    Args:
        step: Environment steps since the reset.

    Returns:
        The daylight, 0 (dark) to 1.
    """
    progress = (step / 300) % 1 + 0.3
    return 1 - abs(math.cos(math.pi * progress)) ** 3


#: Below this daylight it is night: zombies crowd the dark grass (the scripted player shelters,
#: and a loop counts "by day" only above it).
NIGHT_DAYLIGHT = 0.5
