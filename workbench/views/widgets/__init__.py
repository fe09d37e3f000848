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
- ``CertificatePanel`` (``certificate.py``; its figure in ``certificate_figure.py``): a config's
  shaping certificate, the unexplained share per component and the positive-return cycles, a
  click on a cycle picking its episode and decision. Both panels are also the Tuner's and
  Compare's collapsed sections (``section.py``).
- ``Timeline`` (``timeline.py``; its text in ``timeline_text.py``): a growing run (a
  ``LiveScores``) over time under every config, rolling intervals and change points, the rules
  where an over-optimisation decline began; redraws on each append; click an episode to replay it.
- ``OveroptimisationPanel`` (``overoptimisation.py``; its figure in ``overoptimisation_figure.py``):
  the over-optimisation watch of a growing run per config, gold against proxy, the alarm in words
  with its intervals; refreshes on each append; click where the decline began to replay it.

Each view is an ipywidgets widget whose state is traits (``config``, ``episode``, ``selection``,
defined once in ``traits.py``; the Replayer's ``decision``; docs/widgets.md lists them): link them with ``traitlets.link``,
``dlink`` or ``observe``. A pick is an event, the ``picked`` trait (an immutable ``Pick``), and
``link(tuner, replayer, compare)`` (``pick.py``) wires the usual links, the one way the
notebooks and the app do: picks open in the Replayer, "send to Compare" adds to Compare.
"""

# ruff: noqa: E402
# (the imports below need the optional packages checked first)
from __future__ import annotations

from workbench.util.extras import require_extra

require_extra("lab", "the widgets (workbench.views.widgets)", "ipywidgets", "anywidget", "bqplot", "matplotlib")

from workbench.views.widgets.advantages import AdvantagesPanel
from workbench.views.widgets.certificate import CertificatePanel
from workbench.views.widgets.compare import Compare
from workbench.views.widgets.overoptimisation import OveroptimisationPanel
from workbench.views.widgets.pick import Pick, link
from workbench.views.widgets.replayer import Replayer
from workbench.views.widgets.timeline import Timeline
from workbench.views.widgets.tuner import Tuner

__all__ = [
    "AdvantagesPanel",
    "CertificatePanel",
    "Compare",
    "OveroptimisationPanel",
    "Pick",
    "Replayer",
    "Timeline",
    "Tuner",
    "link",
]
