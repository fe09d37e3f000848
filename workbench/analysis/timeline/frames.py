"""The episodes table of a run: its checks, one row per episode, and the x axis of a timeline."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.errors import WorkbenchError

#: What the x axis can be.
X_CHOICES = ("arrival", "training_step", "wall_time")
_X_LABELS = {
    "arrival": "episode (arrival order)",
    "training_step": "training step",
    "wall_time": "wall time (s since the first episode)",
}


class TimelineError(WorkbenchError):
    """A timeline asked of a table that cannot give it (a missing column, a bad window)."""


@dataclass(frozen=True)
class XAxis:
    """The x of each episode.

    Attributes:
        values: (episodes,) float Series indexed by episode id, in arrival order.
        column: The choice used (``X_CHOICES``).
        label: The axis label.
        note: Why the choice asked for was not used ("" when it was).
    """

    values: pd.Series
    column: str
    label: str
    note: str


def require_columns(table: pd.DataFrame, *columns: str) -> None:
    """Check that ``table`` has every one of ``columns``.

    Args:
        table: The episodes table.
        *columns: The column names needed.

    Raises:
        TimelineError: Naming the missing columns and those the table has.
    """
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise TimelineError(f"the episodes table has no column(s) {missing}; it has {list(table.columns)}")


def per_episode(table: pd.DataFrame) -> pd.DataFrame:
    """One row per episode (the first config's), sorted by arrival.

    Args:
        table: The episodes table (one row per episode and config).

    Returns:
        The first row of each episode, in arrival order, indexed 0..episodes-1.

    Raises:
        TimelineError: No ``episode`` or ``arrival`` column.
    """
    require_columns(table, "episode", "arrival")
    return table.drop_duplicates("episode").sort_values("arrival", kind="stable").reset_index(drop=True)


def x_axis(table: pd.DataFrame, x: str = "arrival") -> XAxis:
    """The x of every episode of ``table`` for ``x`` (one of ``X_CHOICES``): ``arrival``;
    ``training_step`` as recorded; ``wall_time`` as seconds since the earliest episode (ISO
    times or epoch seconds).

    Args:
        table: The episodes table.
        x: One of ``X_CHOICES``.

    Returns:
        One x per episode; arrival order with a ``note`` when any episode lacks the column.

    Raises:
        TimelineError: An unknown choice, or ``table`` has no ``episode`` or ``arrival`` column.
    """
    if x not in X_CHOICES:
        raise TimelineError(f"x must be one of {list(X_CHOICES)}, not {x!r}")
    episodes = per_episode(table)
    ids = episodes["episode"].astype(str).to_numpy()
    arrival = pd.Series(episodes["arrival"].to_numpy(dtype=np.float64), index=ids)
    if x == "arrival":
        return XAxis(arrival, "arrival", _X_LABELS["arrival"], "")
    raw = episodes[x] if x in episodes.columns else pd.Series([None] * len(episodes))
    if x == "training_step":
        # na_value: pandas < 2.2 gives a nullable dtype here, whose missing values need one.
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        values = _seconds(raw)
    missing = int(np.isnan(values).sum()) if len(values) else 0
    if missing:
        note = f"x = {x}: {missing} of {len(values)} episodes have no {x} in their metadata; showing arrival order"
        return XAxis(arrival, "arrival", _X_LABELS["arrival"], note)
    return XAxis(pd.Series(values, index=ids), x, _X_LABELS[x], "")


def _seconds(raw: pd.Series) -> np.ndarray:
    """Wall times (epoch seconds or ISO text, mixed) as seconds since the earliest; NaN where absent."""
    numeric = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    text = raw.where(np.isnan(numeric)).astype(object)
    stamps = pd.to_datetime(text, errors="coerce", utc=True, format="ISO8601")
    parsed = (stamps - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy(dtype=np.float64)
    seconds = np.where(np.isnan(numeric), parsed, numeric)
    if np.isnan(seconds).all():
        return seconds
    return seconds - np.nanmin(seconds)


def window_ends(n: int, window: int, since: int) -> range:
    """The positions at which a trailing window ends: from ``since`` (at least 0) to ``n - 1``.

    Args:
        n: Episodes in the series.
        window: Episodes per window (checked only: the first windows hold fewer).
        since: The first position computed.

    Returns:
        The positions, in order.

    Raises:
        TimelineError: ``window`` below 1.
    """
    if window < 1:
        raise TimelineError(f"window must be at least 1 episode, not {window}")
    return range(max(0, since), n)


def config_frames(table: pd.DataFrame, column: str) -> list[tuple[str, pd.DataFrame]]:
    """Each config's rows of ``table`` in arrival order, configs in order of first appearance.

    Args:
        table: The episodes table.
        column: The value column the caller reads (checked to be there).

    Returns:
        (config name, its rows indexed 0..n-1) pairs.

    Raises:
        TimelineError: No ``config`` or ``column`` column.
    """
    require_columns(table, "config", column)
    frames = []
    for name in dict.fromkeys(table["config"].astype(str)):
        rows = table[table["config"].astype(str) == name].sort_values("arrival", kind="stable")
        frames.append((name, rows.reset_index(drop=True)))
    return frames
