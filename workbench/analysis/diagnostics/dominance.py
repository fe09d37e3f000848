"""Dominance: which component kinds and names a group's (a policy's) shaped return is made of."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.analysis.diagnostics.components import ComponentTotals, EpisodeFacts
from workbench.analysis.diagnostics.flags import Flag
from workbench.analysis.thresholds import COMPONENT_THRESHOLD, DOMINANCE_THRESHOLD
from workbench.core.components import KIND_LABELS, RESOURCE_KINDS, component_label

__all__ = ["COMPONENT_THRESHOLD", "DOMINANCE_THRESHOLD", "dominance"]


def dominance(
    totals: ComponentTotals, facts: EpisodeFacts, *, threshold: float, component_threshold: float
) -> tuple[pd.DataFrame, pd.DataFrame, list[Flag]]:
    """Shares of each group's return, from the per-episode component totals.

    Returns ``(by_name, by_kind, flags)``. ``by_name``: per group (``facts.by``), ``kind`` and
    ``name``: ``paid`` (after lambda), ``share`` of the group's summed |reward| (so shares add up
    to 1 and a negative weight cannot hide a positive one), ``flagged`` past
    ``component_threshold``. ``by_kind``: the same per kind, ``flagged`` on the resource kinds
    of a group whose resource shaping (inventory plus achievement counts) is past
    ``threshold``: its return pays for collecting rather than for achievements. Groups in
    first-seen order, largest share first within one.
    """
    by = facts.by
    n_kinds, n_names = len(totals.kinds), len(totals.names)
    group = facts.group_code[totals.episode]
    key, paid, share, name_group = _shares(
        group * (n_kinds * n_names) + totals.kind * n_names + totals.name, totals, facts
    )
    name_kind, name = totals.kinds[key // n_names % n_kinds], totals.names[key % n_names]
    name_flagged = share > component_threshold
    kind_key, kind_paid, kind_share, kind_group = _shares(group * n_kinds + totals.kind, totals, facts)
    kind = totals.kinds[kind_key % n_kinds]
    resource = np.isin(kind, RESOURCE_KINDS)
    resource_share = np.bincount(kind_group[resource], weights=kind_share[resource], minlength=len(facts.groups))
    heavy = resource_share > threshold
    kind_flagged = resource & heavy[kind_group]

    flags: list[Flag] = []
    for code, group_name in enumerate(facts.groups):
        for i in np.flatnonzero(name_flagged & (name_group == code)):
            flags.append(
                Flag(
                    "dominance",
                    "component-dominates",
                    f"{by} {group_name}",
                    f"{component_label(name_kind[i], name[i])} is {share[i]:.0%} of "
                    f"{group_name}'s shaped reward (past the {component_threshold:.0%} threshold for one component)",
                )
            )
        if heavy[code]:
            parts = np.flatnonzero(resource & (kind_group == code))
            detail = ", ".join(f"{KIND_LABELS[kind[i]]} {kind_share[i]:.0%}" for i in parts)
            flags.append(
                Flag(
                    "dominance",
                    "resource-shaping-dominates",
                    f"{by} {group_name}",
                    f"resource shaping is {resource_share[code]:.0%} of {group_name}'s shaped reward ({detail}), past "
                    f"the {threshold:.0%} threshold: the return pays for collecting and repeating, not for achievements",
                )
            )
    by_name = pd.DataFrame(
        {
            by: facts.groups[name_group],
            "kind": name_kind,
            "name": name,
            "paid": paid,
            "share": share,
            "flagged": name_flagged,
        }
    )
    by_kind = pd.DataFrame(
        {by: facts.groups[kind_group], "kind": kind, "paid": kind_paid, "share": kind_share, "flagged": kind_flagged}
    )
    return by_name, by_kind, flags


def _shares(
    key: np.ndarray, totals: ComponentTotals, facts: EpisodeFacts
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct key (its leading digit the group): the key, ``paid``, ``share`` of the
    group's summed magnitude, and the group code; groups in order, largest share first in one."""
    keys, inverse = np.unique(key, return_inverse=True)
    paid = np.bincount(inverse, weights=totals.paid, minlength=len(keys))
    magnitude = np.bincount(inverse, weights=totals.magnitude, minlength=len(keys))
    group = facts.group_code[totals.episode]
    group_of_key = np.zeros(len(keys), dtype=np.int64)
    group_of_key[inverse] = group
    group_total = np.bincount(group, weights=totals.magnitude, minlength=len(facts.groups))
    with np.errstate(divide="ignore", invalid="ignore"):
        share = magnitude / np.where(group_total > 0, group_total, np.nan)[group_of_key]
    order = np.lexsort((-np.nan_to_num(share), group_of_key))
    return keys[order], paid[order], share[order], group_of_key[order]
