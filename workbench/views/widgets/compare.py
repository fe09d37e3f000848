"""Compare: several configs side by side over a corpus, raw or normalised, linked to the Replayer.

A click on an episode replays it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import ipywidgets as w
import numpy as np
import pandas as pd

from workbench.analysis.alignment import progress_summary, returns_by_group
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import WorkbenchError
from workbench.scoring import Comparison, Scores, compare, prepare, score
from workbench.scoring.intervals import UpperReturns
from workbench.views.plots import PALETTE
from workbench.views.widgets.common import LatestWins, counts_note, groups_of, legend_html
from workbench.views.widgets.compare_figures import SCALES, CompareFigures, interval_ranges, normalised, value_text
from workbench.views.widgets.compare_text import components_html, config_legend_html, groups_html, summary_html
from workbench.views.widgets.exploitability import exploitability_section
from workbench.views.widgets.pick import announce, link
from workbench.views.widgets.replayer import Replayer
from workbench.views.widgets.section import advantages_section, certificate_section
from workbench.views.widgets.traits import ViewTraits
from workbench.views.widgets.tuner import Tuner

#: Episodes drawn one point each up to this many in the episodes figure; above, a sample.
MAX_POINTS = 400


class Compare(w.VBox, ViewTraits):
    """Configs side by side over a corpus.

    A widget: the reference config (``a``, picker "reference") against one or more others (``b``
    and the "compare with" list; ``add`` offers more, e.g. a Tuner's config). Shows per config how
    well the shaped return agrees with progress and the mean return per group (``by``, e.g.
    policy), raw or normalised; the per-episode returns against the reference (hover names the
    episode, a click picks it); and per other config the components whose corpus totals changed
    most, with friendly names ("no differences" when there are none). ``comparison`` is the
    ``scoring.Comparison`` of the reference and the first other config; ``comparisons`` maps each
    other config's name to its Comparison. Its state is traits:

    - ``config``: the first compared config (what a picked episode is replayed under); set by the view.
    - ``episode``: the episode last picked in the episodes figure, else None (an episode picked
      again passes through None, so observers hear every pick).
    - ``selection``: the episodes highlighted in the episodes figure (a click highlights the one
      picked; setting it highlights those drawn).

    Args:
        corpus: The episodes to score.
        configs: The configs by name (at least one).
        a: The reference config's name (default: the first).
        b: The first compared config's name (default: up to three others).
        by: The corpus index column the groups come from.
        top: How many changed components to list per config.
        replayer: A Replayer that opens the picked episodes (``Replayer.follow``).

    Raises:
        WorkbenchError: No configs.
        KeyError: ``a`` or ``b`` is not one of the configs.
    """

    def __init__(
        self,
        corpus: Corpus,
        configs: dict[str, RewardConfig],
        *,
        a: str | None = None,
        b: str | None = None,
        by: str = "policy",
        top: int = 12,
        replayer: Replayer | None = None,
    ) -> None:
        if not configs:
            raise WorkbenchError(
                "Compare needs at least one named config, e.g. {'shaped': RewardConfig.from_file(...)}"
            )
        self.corpus, self.by, self.top = corpus, by, top
        self.prepared = prepare(corpus)
        #: Episodes with estimated counts show their per_achievement returns as intervals.
        self._upper = UpperReturns(corpus)
        self.configs = dict(configs)
        names = list(self.configs)
        self._colors: dict[str, str] = {}  # a config's colour, given once by first appearance
        for name in names:
            self.color(name)
        for side, picked in (("a", a), ("b", b)):
            if picked is not None and picked not in self.configs:
                raise KeyError(f"{side}={picked!r} is not one of the configs {names}")
        reference = a or names[0]
        others = [b] if b else [n for n in names if n != reference][:3] or [reference]
        self._scores: dict[tuple[str, int], Scores] = {}
        self._tables: dict[tuple, tuple] = {}  # keyed by id of Scores kept alive in the value
        self.summary = w.HTML()  # as tall as its configs: every one is shown, whatever the width
        self.summary.add_class("workbench-compare-summary")
        self.legend = w.HTML()
        self._groups = list(dict.fromkeys(groups_of(self.corpus, by).reindex(list(self.prepared.ids))))
        self.figures = CompareFigures(self._groups, by, self._on_pick)
        self.bars, self.points = self.figures.bars, self.figures.points
        self.groups_figure, self.episodes_figure = self.figures.groups_figure, self.figures.episodes_figure
        self._picked: list[int] = []
        group_names = w.HTML(
            legend_html(self._groups, {}, self.figures.short, title=by) if self.figures.short != self._groups else ""
        )
        self.groups_view = w.HTML()
        self.components_view = w.HTML()
        tables = w.Tab(children=[self.groups_view, self.components_view], titles=("per group", "components"))
        header = w.HTML(counts_note(corpus))
        controls = self._build_controls(names, reference, others)
        super().__init__(
            [
                controls,
                header,
                self.summary,
                self.legend,
                w.HBox([self.groups_figure, self.episodes_figure], layout=w.Layout(flex_flow="row wrap")),
                group_names,
                tables,
                advantages_section(self, corpus),
                certificate_section(self, corpus),
                exploitability_section(self, corpus),
            ]
        )
        self.add_class("workbench-compare")
        self._updating = False
        self._updates = LatestWins(self.update)
        self.update()
        for control in (self.picker_a, self.shown, self.scale):
            control.observe(self._updates.request, names="value")
        self.observe(lambda _change: self._highlight(), names="selection")
        if replayer is not None:
            replayer.follow(self)

    def _build_controls(self, names: list[str], reference: str, others: list[str]) -> w.HBox:
        self.picker_a = w.Dropdown(
            options=names, value=reference, description="reference", layout=w.Layout(width="300px")
        )
        self.shown = w.SelectMultiple(
            options=names,
            value=tuple(others),
            description="compare with",
            rows=4,
            layout=w.Layout(width="340px"),
            style={"description_width": "90px"},
        )
        self.scale = w.ToggleButtons(
            options=SCALES,
            value="raw",
            description="returns",
            style={"button_width": "108px", "description_width": "60px"},
            layout=w.Layout(flex="0 0 auto"),
        )
        self.swap_button = w.Button(description="Swap", icon="exchange", tooltip="reference <-> first compared")
        self.swap_button.on_click(lambda _: self.swap())
        # wraps (the returns toggles below) rather than squeezing the pickers in a narrow notebook
        return w.HBox(
            [w.VBox([self.picker_a, self.swap_button], layout=w.Layout(flex="0 0 auto")), self.shown, self.scale],
            layout=w.Layout(flex_flow="row wrap", align_items="flex-start"),
        )

    # -- configs ------------------------------------------------------------------------------
    @property
    def config_a(self) -> RewardConfig:
        """The reference config."""
        return self.configs[self.picker_a.value]

    @property
    def others(self) -> list[str]:
        """The configs compared with the reference, in the order picked (the reference itself
        when nothing else is picked)."""
        return [n for n in self.shown.value] or [self.picker_a.value]

    def add(self, name: str, config: RewardConfig, *, side: str | None = None, show: bool = False) -> None:
        """Offer ``config`` as ``name`` (replacing a config of that name); ``side="a"`` makes it the
        reference, ``side="b"`` (or ``show``) adds it first to the compared configs.

        Args:
            name: The config's name.
            config: The config.
            side: "a" (the reference), "b" (first compared) or None.
            show: Add it first to the compared configs.

        Raises:
            WorkbenchError: ``side`` is not "a", "b" or None.
        """
        if side not in (None, "a", "b"):
            raise WorkbenchError(f"side must be 'a', 'b' or None, not {side!r}")
        self.configs[name] = config
        self.color(name)
        self._scores = {k: v for k, v in self._scores.items() if k[0] != name}
        self._updating = True  # one re-score for the whole change, not one per widget event
        try:
            reference, shown = self.picker_a.value, list(self.shown.value)
            self.picker_a.options = self.shown.options = list(self.configs)
            self.picker_a.value = name if side == "a" else reference
            if side == "b" or show:
                shown = [name] + [n for n in shown if n != name]
            self.shown.value = tuple(n for n in shown if n in self.configs)
        finally:
            self._updating = False
        self.update()

    def follow(self, tuner: Tuner) -> None:
        """Add every config ``tuner`` sends (its ``sent`` trait, ``(name, config)``), first among
        the compared configs. Following the same Tuner twice follows it once.

        Args:
            tuner: The Tuner whose "send to Compare" feeds this view.
        """
        link(tuner, compare=self)

    def color(self, name: str) -> str:
        """The colour of config ``name`` in every figure and list: given when the config first
        appears (the next of the palette) and kept, whatever is added, picked or swapped.

        Args:
            name: A config name.

        Returns:
            Its colour (a CSS colour).
        """
        if name not in self._colors:
            self._colors[name] = PALETTE[len(self._colors) % len(PALETTE)]
        return self._colors[name]

    def swap(self) -> None:
        """Exchange the reference and the first compared config."""
        first = self.others[0]
        self._updating = True
        try:
            reference = self.picker_a.value
            self.picker_a.value = first
            self.shown.value = tuple([reference] + [n for n in self.others[1:] if n != reference])
        finally:
            self._updating = False
        self.update()

    def _score(self, name: str) -> Scores:
        # Cached per config object (configs are values: a changed config is a new object), so
        # flipping between configs re-scores nothing.
        key = (name, id(self.configs[name]))
        cached = self._scores.get(key)
        if cached is None or cached.config is not self.configs[name]:
            self._scores[key] = cached = score(self.prepared, self.configs[name])
        return cached

    def _by_group(self, name: str) -> pd.DataFrame:
        scores = self._score(name)
        key = ("groups", id(scores))
        if key not in self._tables:
            self._tables[key] = (scores, returns_by_group(scores, self.corpus, by=self.by))
        return self._tables[key][1]

    def _comparison(self, reference: str, other: str) -> Comparison:
        a, b = self._score(reference), self._score(other)
        key = ("compare", id(a), id(b))
        if key not in self._tables:
            self._tables[key] = (a, b, compare(self.prepared, a.config, b.config))
        return self._tables[key][-1]

    # -- drawing -----------------------------------------------------------------------------
    def update(self) -> None:
        """Compare the picked configs and redraw everything."""
        if self._updating:
            return
        reference = self.picker_a.value
        self.comparisons: dict[str, Comparison] = {name: self._comparison(reference, name) for name in self.others}
        self.comparison = self.comparisons[self.others[0]]
        names = [reference] + [n for n in self.others if n != reference]
        scores = {name: self._score(name) for name in names}
        # The figures first: their messages leave the kernel before the text is made, so a
        # change is painted sooner (the text below follows within the same update).
        self._draw_groups(names, scores)
        self._draw_episodes(reference, names, scores)
        self.summary.value = self._summary_html(names, scores)
        self.legend.value = config_legend_html(names, [self.color(name) for name in names])
        self.groups_view.value = self._text(
            ("groups_html", tuple(names)),
            tuple(scores.values()),
            lambda: groups_html({name: self._by_group(name) for name in names}, self.by, self._groups),
        )
        self.components_view.value = self._text(
            ("components_html", reference, tuple(self.comparisons), self.top),
            tuple(self.comparisons.values()),
            lambda: components_html(reference, self.comparisons, self.top),
        )
        self.config = self.configs[self.others[0]]

    def _text(self, key: tuple, made_from: tuple, make: Callable[[], str]) -> str:
        """A text panel's HTML, made once per ``key`` and the objects it is ``made_from`` (by
        identity, kept alive beside it): picking back a config seen before costs nothing."""
        full = (*key, *map(id, made_from))
        if full not in self._tables:
            self._tables[full] = (made_from, make())
        return self._tables[full][1]

    def _draw_groups(self, names: list[str], scores: dict[str, Scores]) -> None:
        scale = self.scale.value
        rows = []
        for name in names:
            table = self._by_group(name).set_index(self.by)
            if scale == "ranks":
                ranks = pd.Series(normalised(scores[name].reward_sum, "ranks"), index=list(self.prepared.ids))
                groups = groups_of(self.corpus, self.by)
                values = ranks.groupby(groups.reindex(ranks.index)).mean()
            else:
                values = table["mean_return"]
                if scale == "share of max":
                    peak = float(values.abs().max())
                    values = values / peak if peak > 0 else values * 0.0
            rows.append(values.reindex(self._groups).fillna(0.0).to_numpy())
        self.figures.draw_bars(np.array(rows), names, [self.color(name) for name in names], scale)

    def _draw_episodes(self, reference: str, names: list[str], scores: dict[str, Scores]) -> None:
        scale = self.scale.value
        n = self.prepared.n_episodes
        picked = np.arange(n) if n <= MAX_POINTS else np.linspace(0, n - 1, MAX_POINTS).astype(int)
        x_all = normalised(scores[reference].reward_sum, scale)
        xs, ys, colors, labels, self._picked = [], [], [], [], []
        others = [m for m in names if m != reference] or [reference]
        groups = groups_of(self.corpus, self.by)
        bounds = self._intervals(scale, scores)
        shown = {name: partial(value_text, bounds[name]) for name in scores}
        x_ranges, y_ranges = [], []
        for name in others:
            y_all = normalised(scores[name].reward_sum, scale)
            xs.append(x_all[picked])
            ys.append(y_all[picked])
            x_ranges.append(interval_ranges(bounds[reference], picked))
            y_ranges.append(interval_ranges(bounds[name], picked))
            colors += [self.color(name)] * len(picked)
            for i in picked:
                episode = self.prepared.ids[i]
                labels.append(
                    f"{episode} · {groups.get(episode, '')} · {reference} {shown[reference](i, x_all[i])} · {name} "
                    f"{shown[name](i, y_all[i])} · {int(scores[name].episodes['unique_achievements_total'].iat[i])} "
                    "achievements"
                )
                self._picked.append(int(i))
        sample = f" ({MAX_POINTS} of {n} episodes, evenly spaced)" if n > MAX_POINTS else ""
        self.figures.draw_points(
            np.concatenate(xs),
            np.concatenate(ys),
            colors,
            labels,
            scale,
            sample,
            np.concatenate(x_ranges),
            np.concatenate(y_ranges),
        )
        self._highlight()

    def _intervals(self, scale: str, scores: dict[str, Scores]) -> dict[str, dict[int, tuple[float, float]]]:
        """Per config, the return interval ``[low, high]`` of each episode with estimated counts
        under per_achievement, on the raw scale (none on the normalised ones)."""
        return {
            name: self._upper.intervals(scored.config, scored.reward_sum) if scale == "raw" else {}
            for name, scored in scores.items()
        }

    def _on_pick(self, position: int) -> None:
        if 0 <= position < len(self._picked):
            episode = str(self.prepared.ids[self._picked[position]])
            self.selection = (episode,)
            announce(self, episode, source="compare")

    def _highlight(self) -> None:
        """Select, in the episodes figure, the drawn points of the episodes in ``selection``."""
        chosen = set(self.selection)
        selected = [i for i, row in enumerate(self._picked) if self.prepared.ids[row] in chosen]
        self.points.selected = selected or None

    def _summary_html(self, names: list[str], scores: dict[str, Scores]) -> str:
        return summary_html(
            names,
            [scores[name].config for name in names],
            [self.color(name) for name in names],
            [self._progress_line(scores[name]) for name in names],
        )

    def _progress_line(self, scores: Scores) -> str:
        key = ("progress", id(scores))
        if key not in self._tables:
            self._tables[key] = (scores, progress_summary(scores))
        return self._tables[key][1]
