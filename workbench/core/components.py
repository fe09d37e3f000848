"""The reward's component kinds, as the scorer lists them and as people read them."""

from __future__ import annotations

__all__ = [
    "KINDS",
    "KIND_COLUMNS",
    "KIND_LABELS",
    "KIND_SHORT_LABELS",
    "PAY_PARTS",
    "RESOURCE_KINDS",
    "component_label",
]

#: Component kinds, in the order a decision lists them: the consistent strategy's indicator, then
#: per_achievement's achievement credits and its two resource-shaping kinds (reward.md, step 2).
KINDS = ("indicator", "achievement", "inventory", "achievement_count")
#: How each kind reads in legends, flags and tables (the one wording every view and report uses).
KIND_LABELS = {
    "indicator": "indicator (consistent)",
    "achievement": "achievement credits",
    "inventory": "inventory shaping",
    "achievement_count": "achievement-count shaping",
}
#: The same, in one word, where a label has no room (a bar's name in the certificate figure).
KIND_SHORT_LABELS = {
    "indicator": "indicator",
    "achievement": "credit",
    "inventory": "item",
    "achievement_count": "count",
}
#: The kinds of resource shaping: uncapped, paid on every rise (reward.md quirk 3).
RESOURCE_KINDS = ("inventory", "achievement_count")
#: Component kind -> the per-episode column holding that kind's total after lambda
#: (``LiveScores.episodes``, the TensorBoard series; together they add up to the return).
KIND_COLUMNS = {kind: f"reward_{kind}" for kind in KINDS}
#: The three parts a decision's pay is split into by the learner's view and the shaping
#: certificate (``analysis.decision_kinds``): ``credit`` (the indicator's 1.0 or the achievement
#: credits: what the strategy pays for progress), then the two resource-shaping kinds.
PAY_PARTS = ("credit", *RESOURCE_KINDS)


def component_label(kind: str, name: str, *, short: bool = False) -> str:
    """One component as people read it: its name and its kind's label.

    Args:
        kind: one of ``KINDS`` (an unknown kind is shown as it is).
        name: the component's name (an achievement or an item; the indicator's is internal).
        short: use ``KIND_SHORT_LABELS`` (``"stone (item)"``) where there is no room.

    Returns:
        ``"collect_wood (achievement credits)"``, ``"stone (inventory shaping)"``; the indicator,
        whose name is internal (``__indicator__``), as its kind's label alone.
    """
    labels = KIND_SHORT_LABELS if short else KIND_LABELS
    if kind == "indicator":
        return labels[kind]
    return f"{name} ({labels.get(kind, kind)})"
