"""Per config over a run: trailing-window means, component shares and change points of a value."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from workbench.analysis.change_points import change_points
from workbench.analysis.rankstats import bootstrap_interval
from workbench.analysis.timeline.frames import TimelineError, config_frames, window_ends
from workbench.scoring.incremental import KIND_COLUMNS

#: Component kind -> the ``LiveScores.episodes()`` column of its per-episode total (after lambda).
COMPONENT_COLUMNS = dict(KIND_COLUMNS)


def rolling_mean(
    table: pd.DataFrame,
    column: str = "return",
    window: int = 20,
    *,
    strata: str | None = None,
    reps: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    since: int = 0,
) -> pd.DataFrame:
    """Per config and arrival: the mean of ``column`` over the trailing ``window`` episodes with
    a bootstrap percentile interval (``strata`` names a column, e.g. "policy", to resample
    within it; None: a plain bootstrap).

    Args:
        table: The episodes table.
        column: The value column averaged.
        window: Episodes per window (at least 1).
        strata: A column to resample within (None: a plain bootstrap).
        reps: Bootstrap resamples per window.
        seed: The bootstrap's seed.
        confidence: The interval's level.
        since: The first arrival whose window is computed.

    Returns:
        Columns config, arrival, episode (the window's last), n, mean, low, high; one row per
        (config, episode) with arrival >= ``since``.

    Raises:
        TimelineError: A missing column, or ``window`` below 1.
    """
    rows = []
    for name, frame in config_frames(table, column):
        values = frame[column].to_numpy(dtype=np.float64)
        labels = frame[strata].astype(str).to_numpy() if strata else None
        for end in window_ends(len(frame), window, since):
            start = max(0, end - window + 1)
            point, low, high = bootstrap_interval(
                lambda v: v.mean(axis=1),
                [values[start : end + 1]],
                None if labels is None else labels[start : end + 1],
                reps=reps,
                seed=seed,
                confidence=confidence,
            )
            rows.append(
                (name, int(frame["arrival"].iloc[end]), frame["episode"].iloc[end], end - start + 1, point, low, high)
            )
    return pd.DataFrame(rows, columns=["config", "arrival", "episode", "n", "mean", "low", "high"])


def component_shares(
    table: pd.DataFrame, window: int = 20, *, components: Mapping[str, str] | None = None, since: int = 0
) -> pd.DataFrame:
    """Per config, arrival and component kind: the kind's share of the reward its trailing
    ``window`` episodes were paid (window total of the kind / window total of every kind;
    ``components`` maps kind -> column, default ``COMPONENT_COLUMNS``, kinds the table lacks are
    left out); NaN when the window paid nothing.

    Args:
        table: The episodes table.
        window: Episodes per window (at least 1).
        components: Kind -> column (None: ``COMPONENT_COLUMNS``).
        since: The first arrival whose window is computed.

    Returns:
        Columns config, arrival, episode, component (the kind), total, share.

    Raises:
        TimelineError: No component column in the table, a missing column, or ``window`` below 1.
    """
    wanted = dict(components or COMPONENT_COLUMNS)
    kinds = [k for k, c in wanted.items() if c in table.columns]
    names = [wanted[k] for k in kinds]
    if not names:
        raise TimelineError(f"no component columns among {list(wanted.values())} in the table")
    rows = []
    for name, frame in config_frames(table, names[0]):
        sums = frame[names].to_numpy(dtype=np.float64).cumsum(axis=0)
        sums = np.vstack([np.zeros(len(names)), sums])
        for end in window_ends(len(frame), window, since):
            start = max(0, end - window + 1)
            totals = sums[end + 1] - sums[start]
            whole = totals.sum()
            for component, total in zip(kinds, totals):
                share = total / whole if whole != 0 else np.nan
                rows.append(
                    (name, int(frame["arrival"].iloc[end]), frame["episode"].iloc[end], component, total, share)
                )
    return pd.DataFrame(rows, columns=["config", "arrival", "episode", "component", "total", "share"])


def series_change_points(
    table: pd.DataFrame, column: str = "return", *, method: str = "auto", min_size: int = 5, **settings: float
) -> pd.DataFrame:
    """Per config, where ``column`` shifts: ``change_points`` over its episodes in arrival order.

    Args:
        table: The episodes table.
        column: The value column searched.
        method: ``change_points``'s method.
        min_size: The fewest episodes in a segment.
        **settings: ``change_points``'s penalty or threshold.

    Returns:
        Columns config, arrival (the first episode of the new segment), episode, before, after
        (the two segments' means); one row per change found.

    Raises:
        TimelineError: A missing column.
        WorkbenchError: A ``method`` or ``min_size`` ``change_points`` does not take.
    """
    rows = []
    for name, frame in config_frames(table, column):
        values = frame[column].to_numpy(dtype=np.float64)
        found = change_points(values, method=method, min_size=min_size, **settings)
        edges = [0, *found, len(values)]
        for i, at in enumerate(found):
            before, after = values[edges[i] : at].mean(), values[at : edges[i + 2]].mean()
            rows.append((name, int(frame["arrival"].iloc[at]), frame["episode"].iloc[at], before, after))
    return pd.DataFrame(rows, columns=["config", "arrival", "episode", "before", "after"])
