"""A run over time: pure functions over ``LiveScores.episodes()`` (one row per episode and config).

Shapes, as rliable documents its functions. The input ``table`` has one row per (episode,
config) with at least ``episode``, ``config``, ``arrival`` (0-based arrival order) and the
value columns used (``return``, the component totals, ``unique_achievements``), and, where the
metadata has them, ``training_step`` and ``wall_time`` (ISO text or epoch seconds). "Arrival"
rows are trailing windows ending at that arrival (the first ones hold fewer episodes: column
``n``); ``since`` computes only windows ending at or after that arrival, so a live view pays
only for what is new. The functions and their rows at a glance: docs/timeline.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd

from workbench.analysis.change_points import change_points
from workbench.analysis.diagnostics import diagnose
from workbench.analysis.rankstats import bootstrap_interval
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.episodes import Corpus
from workbench.errors import WorkbenchError
from workbench.scoring.incremental import KIND_COLUMNS

__all__ = [
    "COMPONENT_COLUMNS",
    "WINDOW_SECTIONS",
    "X_CHOICES",
    "XAxis",
    "component_shares",
    "crafter_score_series",
    "rolling_mean",
    "series_change_points",
    "success_rates",
    "unlocked_matrix",
    "wilson_interval",
    "window_flags",
    "x_axis",
]

#: What the x axis can be.
X_CHOICES = ("arrival", "training_step", "wall_time")
#: Component kind -> the ``LiveScores.episodes()`` column of its per-episode total (after lambda).
COMPONENT_COLUMNS = dict(KIND_COLUMNS)
#: The diagnostics' sections ``window_flags`` keeps by default.
WINDOW_SECTIONS = ("farming", "dominance")
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


def _require(table: pd.DataFrame, *columns: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise TimelineError(f"the episodes table has no column(s) {missing}; it has {list(table.columns)}")


def _per_episode(table: pd.DataFrame) -> pd.DataFrame:
    """One row per episode (the first config's), sorted by arrival."""
    _require(table, "episode", "arrival")
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
    episodes = _per_episode(table)
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


def _window_starts(n: int, window: int, since: int) -> range:
    if window < 1:
        raise TimelineError(f"window must be at least 1 episode, not {window}")
    return range(max(0, since), n)


def _config_frames(table: pd.DataFrame, column: str) -> list[tuple[str, pd.DataFrame]]:
    _require(table, "config", column)
    frames = []
    for name in dict.fromkeys(table["config"].astype(str)):
        rows = table[table["config"].astype(str) == name].sort_values("arrival", kind="stable")
        frames.append((name, rows.reset_index(drop=True)))
    return frames


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
    for name, frame in _config_frames(table, column):
        values = frame[column].to_numpy(dtype=np.float64)
        labels = frame[strata].astype(str).to_numpy() if strata else None
        for end in _window_starts(len(frame), window, since):
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
    for name, frame in _config_frames(table, names[0]):
        sums = frame[names].to_numpy(dtype=np.float64).cumsum(axis=0)
        sums = np.vstack([np.zeros(len(names)), sums])
        for end in _window_starts(len(frame), window, since):
            start = max(0, end - window + 1)
            totals = sums[end + 1] - sums[start]
            whole = totals.sum()
            for component, total in zip(kinds, totals):
                share = total / whole if whole != 0 else np.nan
                rows.append(
                    (name, int(frame["arrival"].iloc[end]), frame["episode"].iloc[end], component, total, share)
                )
    return pd.DataFrame(rows, columns=["config", "arrival", "episode", "component", "total", "share"])


def wilson_interval(successes: np.ndarray, n: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of the proportions ``successes / n``; it stays inside (0, 1) for 0
    or n successes, where the normal one collapses.

    Args:
        successes: (k,) the successes.
        n: (k,) the trials, each > 0.
        confidence: The interval's level.

    Returns:
        (low, high): (k,) float64 each, in [0, 1].
    """
    k, m = np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = k / m
    centre = (p + z * z / (2 * m)) / (1 + z * z / m)
    half = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def unlocked_matrix(episodes: pd.DataFrame) -> np.ndarray:
    """Which achievements each row of ``episodes`` unlocked, from its ``unique_achievements``
    names (a list, or text separated by commas).

    Args:
        episodes: One row per episode (e.g. one config's rows of ``LiveScores.episodes()``).

    Returns:
        (rows, 22) booleans, achievements in Crafter order.

    Raises:
        TimelineError: no column of names unlocked.
    """
    column = next((c for c in ("unique_achievements", "achievements", "unlocked") if c in episodes.columns), None)
    if column is None:
        raise TimelineError("the episodes table has no unique_achievements column (names unlocked per episode)")
    position = {name: i for i, name in enumerate(ACHIEVEMENTS)}
    out = np.zeros((len(episodes), len(ACHIEVEMENTS)), dtype=bool)
    for row, names in enumerate(episodes[column]):
        names = names.split(",") if isinstance(names, str) else list(names if names is not None else [])
        for name in names:
            if name.strip() in position:
                out[row, position[name.strip()]] = True
    return out


def success_rates(
    table: pd.DataFrame,
    window: int = 20,
    *,
    achievements: Sequence[str] | None = None,
    confidence: float = 0.95,
    since: int = 0,
) -> pd.DataFrame:
    """Per arrival and achievement (default: all 22, Crafter order): the percentage of the
    trailing ``window`` episodes that unlocked it, with a Wilson interval. Columns: arrival,
    episode, achievement, n, successes, rate, low, high (percent)."""
    episodes = _per_episode(table)
    unlocked = unlocked_matrix(episodes)
    picked = list(achievements or ACHIEVEMENTS)
    unknown = [a for a in picked if a not in ACHIEVEMENTS]
    if unknown:
        raise TimelineError(f"unknown achievement(s) {unknown}")
    columns = [ACHIEVEMENTS.index(a) for a in picked]
    counts = np.vstack([np.zeros(len(ACHIEVEMENTS)), unlocked.cumsum(axis=0)])
    rows = []
    for end in _window_starts(len(episodes), window, since):
        start = max(0, end - window + 1)
        n = end - start + 1
        hits = (counts[end + 1] - counts[start])[columns]
        low, high = wilson_interval(hits, np.full(len(hits), n), confidence)
        for name, k, lo, hi in zip(picked, hits, low, high):
            rows.append(
                (
                    int(episodes["arrival"].iloc[end]),
                    episodes["episode"].iloc[end],
                    name,
                    n,
                    int(k),
                    100 * k / n,
                    100 * lo,
                    100 * hi,
                )
            )
    return pd.DataFrame(rows, columns=["arrival", "episode", "achievement", "n", "successes", "rate", "low", "high"])


def _score_rows(*indicators: np.ndarray) -> np.ndarray:
    """Crafter's score (percent) of each row of resampled episodes: 22 arrays of shape (m, n)."""
    rates = 100.0 * np.stack([a.mean(axis=1) for a in indicators], axis=1)
    return np.exp(np.log1p(rates).mean(axis=1)) - 1.0


def crafter_score_series(
    table: pd.DataFrame, window: int = 20, *, reps: int = 1000, seed: int = 0, confidence: float = 0.95, since: int = 0
) -> pd.DataFrame:
    """Per arrival: Crafter's score (offset geometric mean of the 22 success rates, percent) of
    the trailing ``window`` episodes, with a bootstrap percentile interval over episodes.
    Columns: arrival, episode, n, score, low, high."""
    episodes = _per_episode(table)
    unlocked = unlocked_matrix(episodes).astype(np.float64)
    rows = []
    for end in _window_starts(len(episodes), window, since):
        start = max(0, end - window + 1)
        block = unlocked[start : end + 1]
        point, low, high = bootstrap_interval(_score_rows, list(block.T), reps=reps, seed=seed, confidence=confidence)
        rows.append((int(episodes["arrival"].iloc[end]), episodes["episode"].iloc[end], len(block), point, low, high))
    return pd.DataFrame(rows, columns=["arrival", "episode", "n", "score", "low", "high"])


def series_change_points(
    table: pd.DataFrame, column: str = "return", *, method: str = "auto", min_size: int = 5, **settings: float
) -> pd.DataFrame:
    """Per config, where ``column`` shifts (``change_points`` over the episodes in arrival
    order; ``settings``: its penalty / threshold). Columns: config, arrival (the first episode of
    the new segment), episode, before, after (the segments' means)."""
    rows = []
    for name, frame in _config_frames(table, column):
        values = frame[column].to_numpy(dtype=np.float64)
        found = change_points(values, method=method, min_size=min_size, **settings)
        edges = [0, *found, len(values)]
        for i, at in enumerate(found):
            before, after = values[edges[i] : at].mean(), values[at : edges[i + 2]].mean()
            rows.append((name, int(frame["arrival"].iloc[at]), frame["episode"].iloc[at], before, after))
    return pd.DataFrame(rows, columns=["config", "arrival", "episode", "before", "after"])


def window_flags(
    corpus: Corpus,
    configs: Mapping[str, RewardConfig],
    window: int = 20,
    *,
    since_window: int = 0,
    reps: int = 200,
    sections: Sequence[str] = WINDOW_SECTIONS,
) -> pd.DataFrame:
    """The diagnostics' flags of each complete block of ``window`` episodes of ``corpus`` (arrival
    order: episodes 0..window-1, then window..2 window-1, ...) under each config, from block
    ``since_window`` on. Columns: config, window, first, last (arrivals), section, code, subject,
    why; one row per flag of the ``sections`` kept (a clean block has none; the default keeps the
    signs of hacking that can change over a run, farming and dominance: dead entries are facts of
    the config, the same in every block). ``reps`` sets the diagnosis's bootstrap."""
    if window < 2:
        raise TimelineError(f"window must be at least 2 episodes to diagnose, not {window}")
    rows = []
    for block in range(since_window, len(corpus) // window):
        first, last = block * window, (block + 1) * window - 1
        part = corpus[first : last + 1]
        for name, config in configs.items():
            flags = diagnose(part, config, reps=reps, progress=("achievements",)).flags
            for flag in flags[flags["section"].isin(list(sections))].itertuples(index=False):
                rows.append((name, block, first, last, flag.section, flag.code, flag.subject, flag.why))
    return pd.DataFrame(rows, columns=["config", "window", "first", "last", "section", "code", "subject", "why"])
