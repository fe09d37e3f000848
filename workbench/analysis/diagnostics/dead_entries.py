"""Dead entries: config entries (and entries of the resource tables) that cannot change any return.

Config-only facts come from ``workbench.core.lint`` (unknown names, k-limits that cannot act, tables a
strategy ignores); this module adds what needs the corpus (weights of achievements nobody here
unlocked, which cannot be judged on this corpus) and the entries of the task app's resource
tables that name something Crafter never produces, so they never pay.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.diagnostics.flags import Flag
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENT_ALIASES, ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.lint import lint
from workbench.scoring import Scores

__all__ = ["DEAD_COLUMNS", "LINT_CODES", "NOT_CRAFTER_ITEMS", "dead_entries"]

#: Columns of the dead-entries table.
DEAD_COLUMNS = ("key", "value", "code", "judged", "why")
#: Lint findings that mean "this entry cannot change any return".
LINT_CODES = ("unknown-achievement", "k-limit-above-one", "k-limit-unlimited", "ignored-by-consistent")
#: Names in the task app's inventory table that are not Crafter inventory items, and why Crafter
#: never raises them (Crafter 1.8.3's data.yaml: its 16 items, what "collect" and "place" do).
NOT_CRAFTER_ITEMS: Mapping[str, str] = {
    "plant": "a placed sapling becomes a plant object in the world, never an inventory item (eating it is eat_plant)",
    "meat": "eating a cow raises food directly (eat_cow); Crafter has no meat item",
    "water": "drinking water raises drink (collect_drink); Crafter has no water item",
    "furnace": "a furnace is placed into the world (place_furnace), never carried",
    "table": "a table is placed into the world (place_table), never carried",
    "bow": "Crafter has no bow (only skeletons shoot arrows)",
}


def dead_entries(config: RewardConfig, scores: Scores) -> tuple[pd.DataFrame, list[Flag]]:
    """Every entry that cannot change a return, with why.

    Rows (``DEAD_COLUMNS``): ``key`` (dotted, as lint names it; ``resource_weights.inventory.plant``
    for a resource-table entry), ``value`` (as text), ``code``, ``judged`` (``config``: true on any corpus;
    ``corpus``: true on this one; ``cannot judge here``: this corpus cannot tell) and ``why``.
    A k-limit is dead because an achievement unlocks once per Crafter episode; if this corpus
    does unlock a name twice in one episode (imported data), that name's k-limit is kept out.
    Returns the table and one flag per row.
    """
    rows: list[dict[str, Any]] = []
    repeated = _repeated_unlocks(scores)
    for finding in lint(config):
        if finding.code not in LINT_CODES:
            continue
        name = finding.key.partition(".")[2]
        if finding.code.startswith("k-limit") and repeated.get(name, 0):
            continue  # this corpus unlocks it twice in an episode: the limit can act here
        value = _value(config, finding.key)
        why = finding.message + (f" ({finding.suggestion})" if finding.suggestion else "")
        rows.append({"key": finding.key, "value": value, "code": finding.code, "judged": "config", "why": why})
    if config.rule.pays_credits:  # weights and k-limits are read
        rows += _explicit_default_limits(config, repeated)
        rows += _unjudged_weights(config, scores)
    rows += _resource_tables(config, scores, config.rule.pays_resources)
    for row in rows:  # one type per column (a table's value is a mapping): written as text
        row["value"] = _text(row["value"])
    table = pd.DataFrame(rows, columns=list(DEAD_COLUMNS))
    flags = [Flag("dead entries", row["code"], row["key"], row["why"]) for row in rows]
    return table, flags


def _repeated_unlocks(scores: Scores) -> dict[str, int]:
    """Per achievement, unlocks that were not the name's first in their episode (none in Crafter)."""
    prepared = scores.prepared
    again = np.bincount(prepared.unlock_name[prepared.unlock_ordinal > 0].astype(np.int64), minlength=len(ACHIEVEMENTS))
    return {ACHIEVEMENTS[i]: int(again[i]) for i in np.flatnonzero(again)}


def _value(config: RewardConfig, key: str) -> Any:
    table, _, name = key.partition(".")
    values = getattr(config, table, None)
    if isinstance(values, Mapping):
        return values.get(name) if name else dict(values)
    return values


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {_text(v)}" for k, v in value.items())
    return str(value)


def _explicit_default_limits(config: RewardConfig, repeated: dict[str, int]) -> list[dict[str, Any]]:
    """k_limits of exactly 1 (lint does not warn: it is the default, so the entry changes nothing)."""
    return [
        {
            "key": f"k_limits.{name}",
            "value": limit,
            "code": "k-limit-default",
            "judged": "config",
            "why": "k_limit 1 is the default: removing the entry changes nothing",
        }
        for name, limit in config.k_limits.items()
        if name in ACHIEVEMENTS and limit == 1 and not repeated.get(name, 0)
    ]


def _unjudged_weights(config: RewardConfig, scores: Scores) -> list[dict[str, Any]]:
    """Weights of real achievements that no episode of the corpus unlocked."""
    unlocked = {ACHIEVEMENTS[i] for i in np.unique(scores.prepared.unlock_name).tolist()}
    return [
        {
            "key": f"weights.{name}",
            "value": weight,
            "code": "weight-not-unlocked",
            "judged": "cannot judge here",
            "why": f"no episode in this corpus unlocks {name}, so its weight changes no return here; "
            "it may on other episodes (judge it on a corpus that reaches it)",
        }
        for name, weight in config.weights.items()
        if name in ACHIEVEMENTS and name not in unlocked
    ]


def _resource_tables(config: RewardConfig, scores: Scores, pays_resources: bool) -> list[dict[str, Any]]:
    """Resource-table entries (the task app's and the config's overrides) that cannot pay:
    names Crafter never produces; overrides of real items nobody in the corpus raised; all of
    them under consistent, which pays no resource shaping."""
    rows: list[dict[str, Any]] = []
    tables = config.resource_weights
    overrides = config.resource_overrides
    rose = _rose(scores)
    for table, names, crafter_names in (
        ("inventory", tables.inventory, INVENTORY_ITEMS),
        ("achievement_counts", tables.achievement_counts, ACHIEVEMENTS),
    ):
        overridden = overrides.get(table, {}) or {}
        for name, weight in names.items():
            key = f"resource_weights.{table}.{name}"
            whose = "this config's override" if name in overridden else "the task app's table"
            if name not in crafter_names:
                rows.append(
                    {
                        "key": key,
                        "value": weight,
                        "code": "never-produced",
                        "judged": "config",
                        "why": f"{whose} pays {weight:g} per rise of {name!r}, which Crafter never "
                        f"produces: {_never_produced(table, name)}",
                    }
                )
            elif name in overridden and not pays_resources:
                rows.append(
                    {
                        "key": key,
                        "value": weight,
                        "code": "ignored-by-consistent",
                        "judged": "config",
                        "why": "consistent pays no resource shaping; this override never pays",
                    }
                )
            elif name in overridden and not rose.get((table, name), False):
                rows.append(
                    {
                        "key": key,
                        "value": weight,
                        "code": "resource-not-raised",
                        "judged": "cannot judge here",
                        "why": f"no episode in this corpus raises {name}, so the override changes no return "
                        "here; it may on other episodes",
                    }
                )
    return rows


def _never_produced(table: str, name: str) -> str:
    if table == "inventory":
        return NOT_CRAFTER_ITEMS.get(
            name, f"it is not one of Crafter's 16 inventory items ({', '.join(INVENTORY_ITEMS)})"
        )
    meant = ACHIEVEMENT_ALIASES.get(name)
    suffix = f" (what rises instead: the {' or '.join(meant)} count)" if meant else ""
    return f"{name} is not a Crafter achievement, so it has no count{suffix}"


def _rose(scores: Scores) -> dict[tuple[str, str], bool]:
    """(table, name) of every inventory item and achievement count that rose somewhere in the corpus."""
    slots = np.unique(scores.prepared.gain_slot.astype(np.int64))
    n_items = len(INVENTORY_ITEMS)
    return {
        ("inventory", INVENTORY_ITEMS[s]) if s < n_items else ("achievement_counts", ACHIEVEMENTS[s - n_items]): True
        for s in slots.tolist()
    }
