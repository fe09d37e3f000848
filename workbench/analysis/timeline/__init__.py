"""A run over time: pure functions over ``LiveScores.episodes()`` (one row per episode and config).

Shapes, as rliable documents its functions. The input ``table`` has one row per (episode,
config) with at least ``episode``, ``config``, ``arrival`` (0-based arrival order) and the
value columns used (``return``, the component totals, ``unique_achievements``), and, where the
metadata has them, ``training_step`` and ``wall_time`` (ISO text or epoch seconds). "Arrival"
rows are trailing windows ending at that arrival (the first ones hold fewer episodes: column
``n``); ``since`` computes only windows ending at or after that arrival, so a live view pays
only for what is new. The functions and their rows at a glance: docs/timeline.md.
"""

from workbench.analysis.timeline.crafter import crafter_score_series, success_rates, unlocked_matrix, wilson_interval
from workbench.analysis.timeline.flags import WINDOW_SECTIONS, window_flags
from workbench.analysis.timeline.frames import X_CHOICES, TimelineError, XAxis, x_axis
from workbench.analysis.timeline.series import COMPONENT_COLUMNS, component_shares, rolling_mean, series_change_points

__all__ = [
    "COMPONENT_COLUMNS",
    "WINDOW_SECTIONS",
    "X_CHOICES",
    "TimelineError",
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
