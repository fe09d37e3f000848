"""Interactive views (ipywidgets 8, bqplot figures, an anywidget player) over the scoring engine.

They hold controls, not logic: every number comes from ``workbench.scoring`` and
``workbench.analysis.alignment``, every file from ``RewardConfig`` methods. One view per module:

- ``Tuner`` (``tuner.py``; its control column in ``tuner_controls.py``, its text views in
  ``tuner_text.py``, its figure in ``returns_figure.py``): strategy, lambda, a weight slider per
  achievement, k-limits, resource tables; re-scores live while dragging; returns per policy
  against a ghost baseline (where Reset goes); Undo, filters, Save / Export, send to Compare;
  click an episode to replay it.
- ``Replayer`` (``replayer.py``): an episode played in the browser (frames, or a text rollout's
  map views drawn with Crafter's textures) beside its state, components and reward strip.
- ``Compare`` (``compare.py``; figures in ``compare_figures.py``, text in ``compare_text.py``):
  several configs side by side, raw or normalised, a legend naming each in its colour.
- ``AdvantagesPanel`` (``advantages.py``; its figure in ``advantages_figure.py``): what a
  GRPO / Dr.GRPO / RLOO / GDPO learner sees of a config per seed group, flagged groups, and how
  the last config change moved the advantages; state as the traitlets ``config``, ``episode``
  and ``selection``.
- ``Timeline`` (``timeline.py``): a growing run (a ``LiveScores``) over time under every config,
  rolling intervals and change points; redraws on each append; click an episode to replay it.

``link(tuner, replayer, compare)`` wires them together.
"""

# ruff: noqa: E402
# (the imports below need the optional packages checked first)
from __future__ import annotations

from workbench.util.extras import require_extra

require_extra("lab", "the widgets (workbench.views.widgets)", "ipywidgets", "anywidget", "bqplot", "matplotlib")

from typing import Any

from workbench.views.widgets.advantages import AdvantagesPanel
from workbench.views.widgets.compare import Compare
from workbench.views.widgets.replayer import Replayer
from workbench.views.widgets.timeline import Timeline
from workbench.views.widgets.tuner import Tuner

__all__ = ["AdvantagesPanel", "Compare", "Replayer", "Timeline", "Tuner", "link"]


def link(
    tuner: Tuner | None = None, replayer: Replayer | None = None, compare: Compare | None = None
) -> dict[str, Any]:
    """Wire views together: a click on an episode in the Tuner or Compare opens it in the
    Replayer, and the Tuner's "send to Compare" offers its config to Compare. Returns the views."""
    if tuner is not None:
        tuner.link(replayer=replayer, compare=compare)
    if compare is not None and replayer is not None:
        compare.link(replayer=replayer)
    return {"tuner": tuner, "replayer": replayer, "compare": compare}
