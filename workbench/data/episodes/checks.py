"""Crafter's value ranges enforced on stacked state rows (``DecisionArrays``): the one place they are checked."""

from __future__ import annotations

import numpy as np

from workbench.core.crafter_facts import ACHIEVEMENTS, ACTIONS, INVENTORY_ITEMS
from workbench.data.episodes.columns import COUNT_MAX, DecisionArrays
from workbench.errors import EpisodeValueError

#: Crafter's inventory is 0..9 for every item (health, food, drink, energy included).
INVENTORY_MAX = 9
#: Rows checked at a time by ``check_values``: its temporaries stay small and in cache.
_CHECK_ROWS = 1 << 16


def check_values(arrays: DecisionArrays, where: str = "") -> None:
    """Enforce Crafter's ranges on every row.

    Checked: inventory within 0..9; counts within 0..65,535 and non-decreasing within an episode;
    a stored status true exactly where the count is positive (``check_status``); positions -1
    (unknown) or more; Crafter's reward finite (no NaN or infinity); action ids Crafter's. Runs
    in row blocks, so the temporaries stay small on a 10M-decision corpus.

    Args:
        arrays: The rows to check.
        where: What prefixes the message (e.g. a file); "" for none.

    Raises:
        EpisodeValueError: At the first violation, naming the episode, decision and column.
    """
    row_starts = arrays.row_starts

    def fail(row: int, column: str, value: object, why: str) -> None:
        raise _value_error(arrays, where, row, column, value, why)

    is_reset = np.zeros(arrays.n_rows, dtype=bool)
    is_reset[row_starts] = True
    limits = (
        ("inventory", INVENTORY_ITEMS, 0, INVENTORY_MAX),
        ("achievement_counts", ACHIEVEMENTS, 0, COUNT_MAX),
        ("player_pos", ("x", "y"), -1, None),
    )
    counts_all = arrays.achievement_counts
    for first in range(0, arrays.n_rows, _CHECK_ROWS):
        last = min(first + _CHECK_ROWS, arrays.n_rows)
        for name, columns, low, high in limits:
            block = getattr(arrays, name)[first:last]
            # Reductions first (cheap); the violating cell is located only when there is one.
            info = np.iinfo(block.dtype) if block.dtype.kind in "iu" else None
            below = info is None or info.min < low
            above = high is not None and (info is None or info.max > high)
            if (below and block.min() < low) or (above and block.max() > high):
                bad = (block < low) | (block > high) if high is not None else block < low
                row, column = np.argwhere(bad)[0]
                limit = f"is below {low}" if high is None else f"is outside Crafter's {low}..{high}"
                fail(first + int(row), _column_name(name, columns[column]), block[row, column].item(), limit)
        if arrays.stored_status is not None:  # a derived status agrees with the counts by definition
            check_status(arrays, arrays.stored_status[first:last], first, where)
        # Counts never fall within an episode: each row against the one before, resets skipped.
        start = max(first, 1)
        falling = counts_all[start:last] < counts_all[start - 1 : last - 1]
        if falling.any():
            falling[is_reset[start:last]] = False
            if falling.any():
                row, column = np.argwhere(falling)[0]
                at = start + int(row)
                fail(
                    at,
                    _column_name("achievement_counts", ACHIEVEMENTS[column]),
                    counts_all[at, column].item(),
                    f"is below the previous decision's {counts_all[at - 1, column].item()} "
                    "(counts never decrease within an episode)",
                )
        reward = arrays.env_reward[first:last]
        if not np.isfinite(reward.sum()):  # NaN or infinity anywhere makes the sum non-finite
            finite = np.isfinite(reward)
            if not finite.all():
                row = int(np.flatnonzero(~finite)[0])
                fail(first + row, "env_reward", float(reward[row]), "is not a finite number")
    if len(arrays.action_ids) and int(arrays.action_ids.max()) >= len(ACTIONS):
        step = int(np.flatnonzero(arrays.action_ids >= len(ACTIONS))[0])
        row = int(np.searchsorted(arrays.action_offsets, step, side="right")) - 1
        fail(row, "actions", int(arrays.action_ids[step]), f"is not a Crafter action id (0..{len(ACTIONS) - 1})")


def check_status(arrays: DecisionArrays, status: np.ndarray, first_row: int, where: str = "") -> None:
    """Check a status block: Crafter's status is true exactly when the count is positive.

    Args:
        arrays: The rows whose ``achievement_counts`` the status must agree with.
        status: (rows, 22) bool, the status of rows ``first_row ..`` of ``arrays``.
        first_row: The row of ``arrays`` that ``status``'s first row is.
        where: What prefixes the message (e.g. a file); "" for none.

    Raises:
        EpisodeValueError: At the first cell that is not ``achievement_counts > 0``, naming the
            episode, decision and column.
    """
    counts = arrays.achievement_counts[first_row : first_row + len(status)]
    inconsistent = status != (counts > 0)
    if inconsistent.any():
        row, column = np.argwhere(inconsistent)[0]
        raise _value_error(
            arrays,
            where,
            first_row + int(row),
            _column_name("achievement_status", ACHIEVEMENTS[column]),
            bool(status[row, column]),
            f"disagrees with the count {counts[row, column].item()} (status is true exactly when the count is positive)",
        )


def _value_error(
    arrays: DecisionArrays, where: str, row: int, column: str, value: object, why: str
) -> EpisodeValueError:
    """The error for one bad cell: episode, decision and column named, ``where`` first."""
    row_starts = arrays.row_starts
    k = int(np.searchsorted(row_starts, row, side="right")) - 1
    prefix = f"{where}: " if where else ""
    return EpisodeValueError(
        f"{prefix}episode {arrays.ids[k]!r}: decision {row - int(row_starts[k])}, column {column!r}: {value!r} {why}"
    )


def _column_name(array: str, column: str) -> str:
    """The decisions-table column of one cell (``inventory_wood``, ``count_collect_wood`` ...)."""
    prefix = {
        "inventory": "inventory_",
        "achievement_counts": "count_",
        "achievement_status": "status_",
        "player_pos": "pos_",
    }[array]
    return prefix + column
