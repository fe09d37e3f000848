"""``AdvantagesPanel``: what a GRPO-family learner sees of a config on a corpus, per seed group, and how the last config change moved it.

It is a widget (a ``VBox``) whose state is the views' shared traits (``traits.ViewTraits``:
``config`` shown, ``episode`` in focus, ``selection`` of episode ids), so ``traitlets.link`` /
``dlink`` wire it to the Tuner, Replayer, Compare and Timeline.
"""

from __future__ import annotations

import html
import time
from typing import Any

import ipywidgets as w
import numpy as np
import pandas as pd

from workbench.analysis.learner import METHODS, LearnerView, learner_view
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import WorkbenchError
from workbench.views.widgets.advantages_figure import STATUS_COLORS, AdvantagesFigure, slot_offsets
from workbench.views.widgets.pick import announce
from workbench.views.widgets.traits import ViewTraits

__all__ = ["ESTIMATOR_LABELS", "AdvantagesPanel"]

#: The estimators the panel offers, as the dropdown shows them.
ESTIMATOR_LABELS = {
    "grpo": "GRPO: (r - mean) / std",
    "dr_grpo": "Dr.GRPO: r - mean",
    "rloo": "RLOO: leave one out",
    "gdpo": "GDPO: per component, summed",
}
#: Flag codes that mark a group's order as contradicting progress, per estimator.
CONTRADICTS = {
    "grpo": "contradicts-progress",
    "dr_grpo": "contradicts-progress",  # same order as GRPO within a group
    "rloo": "contradicts-progress",
    "gdpo": "gdpo-contradicts-progress",
}
#: Flags listed under the figure (all go to ``panel.view.flags``).
FLAGS_SHOWN = 8


class AdvantagesPanel(w.VBox, ViewTraits):
    """The learner's view of ``config`` on ``corpus`` (``workbench.analysis.learner``) as a panel.

    Per seed group (``by``: default seed, plus policy_version when the corpus has it), each
    rollout's advantage under the estimator picked in the panel; zero-variance groups and groups
    whose advantage order contradicts progress (achievements or Crafter's reward) coloured and
    listed; after ``config`` changes, the previous advantages as grey rings joined to the new
    ones. Clicking a rollout sets ``episode`` to it and ``selection`` to its group; setting them
    from outside rings those rollouts. ``panel.view`` is the current ``LearnerView``,
    ``panel.before`` the one before the last change, ``panel.last_update_ms`` the kernel's time
    of the last recompute and redraw.
    """

    def __init__(
        self, corpus: Corpus, config: RewardConfig, *, by: tuple[str, ...] | None = None, estimator: str = "grpo"
    ) -> None:
        if estimator not in METHODS:
            raise WorkbenchError(f"estimator must be one of {list(METHODS)}, not {estimator!r}")
        self.corpus, self.by = corpus, by
        self.view: LearnerView | None = None
        self.before: LearnerView | None = None
        self.last_update_ms = 0.0
        self.estimator = w.Dropdown(
            options=[(label, key) for key, label in ESTIMATOR_LABELS.items()],
            value=estimator,
            description="estimator",
            layout=w.Layout(width="320px"),
        )
        self.summary = w.HTML()
        self.flags_view = w.HTML()
        first = learner_view(corpus, config, by=by)
        self.figure = AdvantagesFigure(len(first.groups), self._on_pick)
        super().__init__(
            [self.estimator, self.summary, self.figure.widget, self.flags_view], layout=w.Layout(width="100%")
        )
        self.add_class("workbench-advantages")
        self._first: LearnerView | None = first  # the first view, computed once for the group count
        self.estimator.observe(lambda _change: self._draw(), "value")
        self.observe(self._on_config, "config")
        self.observe(lambda _change: self._highlight(), ["episode", "selection"])
        self.config = config

    # -- state -----------------------------------------------------------------------------------
    def _on_config(self, change: dict[str, Any]) -> None:
        start = time.perf_counter()
        new = self._first if self._first is not None else learner_view(self.corpus, change["new"], by=self.by)
        self._first = None
        self.before, self.view = self.view, new
        self._draw()
        self.last_update_ms = 1000 * (time.perf_counter() - start)

    def _on_pick(self, row: int) -> None:
        episodes = self._view.episodes
        group = episodes["group"].iat[row]
        with self.hold_trait_notifications():
            self.selection = tuple(episodes.loc[episodes["group"] == group, "episode"].astype(str))
        announce(self, str(episodes["episode"].iat[row]), source="advantages")

    @property
    def _view(self) -> LearnerView:
        if self.view is None:  # set in __init__: only a subclass skipping it gets here
            raise RuntimeError("AdvantagesPanel has no config yet")
        return self.view

    # -- drawing ---------------------------------------------------------------------------------
    def statuses(self) -> np.ndarray:
        """Each rollout's flag under the picked estimator: ``zero`` (its group has zero variance),
        ``contradicts`` (its group's order contradicts progress), ``alone`` (a single rollout) or ``ok``."""
        view, estimator = self._view, self.estimator.value
        groups = view.groups
        zero = groups["zero_variance"].to_numpy()
        bad = np.zeros(len(groups), dtype=bool)
        column = "discordant_gdpo_" if estimator == "gdpo" else "discordant_"
        for measure in ("achievements", "env_return"):
            bad |= groups[f"{column}{measure}"].to_numpy() > 0
        group = view.episodes["group"].to_numpy()
        size = view.episodes["group_size"].to_numpy()
        return np.select([size == 1, zero[group], bad[group]], ["alone", "zero", "contradicts"], "ok")

    def _draw(self) -> None:
        view, estimator = self._view, self.estimator.value
        episodes = view.episodes
        group = episodes["group"].to_numpy()
        x = group + slot_offsets(group, episodes["achievements"].to_numpy(dtype=np.float64))
        now = episodes[estimator].to_numpy()
        before = None if self.before is None else self.before.episodes[estimator].to_numpy()
        status = self.statuses()
        names = self._names(episodes, now, before)
        name = ESTIMATOR_LABELS[estimator].split(":")[0]
        self.figure.update(x, now, before, status, names, f"{name} advantages per {', '.join(view.by)} group")
        self.summary.value = self._summary_html(status, now, before)
        self.flags_view.value = _flags_html(view.flags, CONTRADICTS[estimator])
        self._highlight()

    def _names(self, episodes: pd.DataFrame, now: np.ndarray, before: np.ndarray | None) -> list[str]:
        keys = [episodes[c].astype(str).to_numpy() for c in self._view.by]
        moved = [""] * len(now) if before is None else [f" (was {b:+.3f})" for b in before]
        return [
            f"{e} · group {g} ({', '.join(k[i] for k in keys)}) · return {r:.3f} · {a} achievements · "
            f"advantage {v:+.3f}{moved[i]}"
            for i, (e, g, r, a, v) in enumerate(
                zip(episodes["episode"], episodes["group"], episodes["return"], episodes["achievements"], now)
            )
        ]

    def _summary_html(self, status: np.ndarray, now: np.ndarray, before: np.ndarray | None) -> str:
        view = self._view
        groups = view.groups
        counts = {s: int(groups["group"].isin(view.episodes["group"][status == s]).sum()) for s in STATUS_COLORS}
        parts = [
            f"{len(view.episodes)} rollouts in {len(groups)} group(s) by {html.escape(', '.join(view.by))}",
            _dot("zero") + f"{counts['zero']} zero-variance (no gradient)",
            _dot("contradicts") + f"{counts['contradicts']} whose order contradicts progress",
            _dot("alone") + f"{counts['alone']} single rollout(s)",
        ]
        if before is not None and len(now):
            move = np.abs(now - before)
            top = int(np.argmax(move))
            parts.append(
                f"since the last config change: mean |move| {move.mean():.3f}, largest "
                f"{html.escape(str(view.episodes['episode'].iat[top]))} {before[top]:+.3f} &rarr; {now[top]:+.3f}"
            )
        return "<div style='font-size:12px;line-height:18px'>" + " &middot; ".join(parts) + "</div>"

    def _highlight(self) -> None:
        if self.view is None:
            return
        ids = self.view.episodes["episode"].astype(str).to_numpy()
        wanted = set(self.selection) | ({self.episode} if self.episode else set())
        self.figure.highlight(np.flatnonzero(np.isin(ids, list(wanted))))


def _dot(status: str) -> str:
    return f"<span style='color:{STATUS_COLORS[status]}'>&#9679;</span> "


def _flags_html(flags: pd.DataFrame, contradicts: str) -> str:
    """The zero-variance and contradicts-progress flags of the estimator, the first few."""
    shown = flags[flags["code"].isin(["zero-variance", contradicts, "gdpo-flips-sign"])]
    if shown.empty:
        return "<div style='font-size:12px'>no group flagged under this estimator</div>"
    rows = "".join(
        f"<li><b>{html.escape(row.code)}</b> {html.escape(row.subject)}: {html.escape(row.why)}</li>"
        for row in shown.head(FLAGS_SHOWN).itertuples()
    )
    more = f"<li>... and {len(shown) - FLAGS_SHOWN} more (panel.view.flags)</li>" if len(shown) > FLAGS_SHOWN else ""
    return f"<ul style='font-size:12px;margin:2px 0;word-break:break-word'>{rows}{more}</ul>"
