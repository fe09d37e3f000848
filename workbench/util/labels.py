"""Names shortened to fit a figure's label: the start and the end kept around an ellipsis."""

from __future__ import annotations


def short_label(name: str, chars: int) -> str:
    """``name`` in at most ``chars`` characters: whole when it fits, else its start and end around
    an ellipsis (ids and UUIDs differ at both ends), e.g. ``3f2c9a1b…0e7d4c``."""
    if len(name) <= chars:
        return name
    keep = max(chars - 1, 2)
    head = (keep + 1) // 2
    return f"{name[:head]}…{name[len(name) - (keep - head) :]}"


def short_labels(names: list[str], chars: int) -> list[str]:
    """``short_label`` of each name, lengthened where two would read the same (up to whole names)."""
    for limit in range(max(chars, 3), max((len(n) for n in names), default=0) + 1):
        labels = [short_label(n, limit) for n in names]
        if len(set(labels)) == len(set(names)):
            return labels
    return list(names)
