"""The corpus index: its columns (``INDEX_COLUMNS``), its ``DataFrame`` built from index rows, and unique ids."""

from __future__ import annotations

from typing import Any

import pandas as pd

#: Columns of ``Corpus.index``, in order.
INDEX_COLUMNS = (
    "episode",
    "source",
    "policy",
    "seed",
    "decisions",
    "steps",
    "env_return",
    "unlocked",
    "n_unlocked",
    "has_frames",
    "has_logged",
    "counts",
)


def unique_id(episode_id: str, seen: set[str]) -> str:
    """``episode_id``, or the first of ``<id>-2``, ``<id>-3`` ... not in ``seen`` (as
    ``Corpus.concat`` renames a repeated id).

    Args:
        episode_id: The id wanted.
        seen: The ids already taken (not changed: the caller adds the result).

    Returns:
        An id not in ``seen``.
    """
    if episode_id not in seen:
        return episode_id
    suffix = 2
    while f"{episode_id}-{suffix}" in seen:
        suffix += 1
    return f"{episode_id}-{suffix}"


def index_frame(rows: list[dict[str, Any]] | dict[str, list[Any]]) -> pd.DataFrame:
    """``Corpus.index`` from index rows (``Episode.index_row()`` dicts) or columns, with its dtypes.

    Args:
        rows: One dict per episode holding at least the ``INDEX_COLUMNS`` (others are left
            out), or columns: name -> one value per episode (what a stored index reads as).

    Returns:
        One row per episode, columns ``INDEX_COLUMNS``: ``decisions``, ``steps`` and
        ``n_unlocked`` int64, ``env_return`` float64, ``has_frames`` and ``has_logged`` bool
        (the others as given); empty with those columns when ``rows`` is.
    """
    frame = pd.DataFrame(rows, columns=list(INDEX_COLUMNS))
    return frame.astype(
        {
            "decisions": "int64",
            "steps": "int64",
            "env_return": "float64",
            "n_unlocked": "int64",
            "has_frames": "bool",
            "has_logged": "bool",
        }
    )
