"""A run over time: pure functions over ``LiveScores.episodes()`` (one row per episode and config).

Shapes, as rliable documents its functions. The input ``table`` has one row per (episode,
config) with at least ``episode``, ``config``, ``arrival`` (0-based arrival order) and the
value columns used (``return``, the component totals, ``unique_achievements``), and, where the
metadata has them, ``training_step`` and ``wall_time`` (ISO text or epoch seconds). "Arrival"
rows are trailing windows ending at that arrival (the first ones hold fewer episodes: column
``n``); ``since`` computes only windows ending at or after that arrival, so a live view pays
only for what is new. The functions and their rows at a glance: docs/timeline.md.
"""

from typing import TYPE_CHECKING

from workbench.analysis.timeline.crafter import crafter_score_series, success_rates, unlocked_matrix, wilson_interval
from workbench.analysis.timeline.flags import WINDOW_SECTIONS, window_flags
from workbench.analysis.timeline.frames import X_CHOICES, TimelineError, XAxis, x_axis
from workbench.util.lazy_names import lazy_names

if TYPE_CHECKING:  # what the names below resolve to, for type checkers and readers
    from workbench.analysis.timeline.series import (
        COMPONENT_COLUMNS,
        component_shares,
        rolling_mean,
        series_change_points,
    )

#: The series' names, imported on first use (PEP 562): ``series`` imports ``change_points``,
#: which imports ruptures and scipy.stats (~0.8 s of CPU) with itself; ``overoptimisation``
#: (``unlocked_matrix``) needs none of it.
_SERIES = ("COMPONENT_COLUMNS", "component_shares", "rolling_mean", "series_change_points")

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


__getattr__ = lazy_names(__name__, dict.fromkeys(_SERIES, "workbench.analysis.timeline.series"))
