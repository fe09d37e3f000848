"""Compare: three or more configs side by side over a corpus, raw or normalised, linked to the
Replayer (click an episode to replay it)."""

from __future__ import annotations

import html
from typing import Any

import bqplot as bq
import ipywidgets as w
import numpy as np
import pandas as pd

from workbench.analysis.alignment import progress_summary, returns_by_group
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import WorkbenchError
from workbench.scoring import Comparison, Scores, compare, prepare, score
from workbench.views.plots import PALETTE
from workbench.views.widgets.common import LatestWins, component_label, counts_note, groups_of, lined, lines_box

#: How returns are put on one scale: as they are, as a share of each config's largest
#: |mean return|, or as ranks (1 = paid most).
SCALES = ("raw", "share of max", "ranks")
#: Episodes drawn one point each up to this many in the episodes figure; above, a sample.
MAX_POINTS = 400
#: The summary's fixed height in lines: a config a line or two at 1920 px, scrolling when narrower.
SUMMARY_LINES = 6


def normalised(returns: np.ndarray, scale: str) -> np.ndarray:
    """Per-episode returns on ``scale`` (see ``SCALES``)."""
    if scale == "ranks":
        return pd.Series(returns).rank(ascending=False, method="min").to_numpy()
    if scale == "share of max":
        peak = float(np.abs(returns).max()) if len(returns) else 0.0
        return returns / peak if peak > 0 else returns * 0.0
    return returns


class Compare:
    """Configs side by side over a corpus.

    The reference config (``a``, picker "reference") against one or more others (``b`` and the
    "compare with" list; ``add`` offers more, e.g. a Tuner's config). Shows per config how well
    the shaped return agrees with progress and the mean return per group (``by``, e.g. policy),
    raw or normalised; the per-episode returns against the reference (hover names the episode,
    click replays it in a linked Replayer); and per other config the components whose corpus
    totals changed most, with friendly names ("no differences" when there are none).
    ``comparison`` is the ``scoring.Comparison`` of the reference and the first other config;
    ``comparisons`` maps each other config's name to its Comparison.
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
        replayer: Any = None,
    ) -> None:
        if not configs:
            raise WorkbenchError(
                "Compare needs at least one named config, e.g. {'shaped': RewardConfig.from_file(...)}"
            )
        self.corpus, self.by, self.top, self.replayer = corpus, by, top, replayer
        self.prepared = prepare(corpus)
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
        self.summary = w.HTML(layout=lines_box(SUMMARY_LINES))
        self._build_figures()
        self.groups_view = w.HTML()
        self.components_view = w.HTML()
        tables = w.Tab(children=[self.groups_view, self.components_view], titles=("per group", "components"))
        header = w.HTML(counts_note(corpus))
        # wraps (the returns toggles below) rather than squeezing the pickers in a narrow notebook
        controls = w.HBox(
            [w.VBox([self.picker_a, self.swap_button], layout=w.Layout(flex="0 0 auto")), self.shown, self.scale],
            layout=w.Layout(flex_flow="row wrap", align_items="flex-start"),
        )
        self.widget = w.VBox(
            [controls, header, self.summary, w.HBox([self.groups_figure, self.episodes_figure]), tables]
        )
        self.widget.add_class("workbench-compare")
        self._updating = False
        self._updates = LatestWins(self.update)
        self.update()
        for control in (self.picker_a, self.shown, self.scale):
            control.observe(self._updates.request, names="value")

    # -- figures -----------------------------------------------------------------------------
    def _build_figures(self) -> None:
        self._groups = list(dict.fromkeys(groups_of(self.corpus, self.by).reindex(list(self.prepared.ids))))
        gx, gy = bq.OrdinalScale(), bq.LinearScale()
        self._bar_scale = gy
        self.bars = bq.Bars(
            x=self._groups,
            y=np.zeros((1, len(self._groups))),
            scales={"x": gx, "y": gy},
            type="grouped",
            colors=list(PALETTE),
            display_legend=False,
            labels=["-"],
            tooltip=bq.Tooltip(fields=["x", "y"], formats=["", ".3f"], labels=[self.by, "mean"]),
        )
        self.groups_figure = bq.Figure(
            marks=[self.bars],
            axes=[bq.Axis(scale=gx), bq.Axis(scale=gy, side="left", grid_lines="dashed")],
            title="mean shaped return per " + self.by,
            animation_duration=0,
            title_style={"font-size": "13px"},
            display_toolbar=False,  # its hover toolbar covers the title; nothing here pans or zooms
            fig_margin={"top": 40, "bottom": 30, "left": 55, "right": 10},
            layout=w.Layout(width="430px", height="340px"),
        )
        ex, ey = bq.LinearScale(), bq.LinearScale()
        self._episode_scales = (ex, ey)
        self.diagonal = bq.Lines(x=[0, 1], y=[0, 1], scales={"x": ex, "y": ey}, colors=["#999"], line_style="dashed")
        self.points = bq.Scatter(
            x=np.zeros(0),
            y=np.zeros(0),
            scales={"x": ex, "y": ey},
            default_size=24,
            colors=[PALETTE[0]],
            names=[],
            display_names=False,
            tooltip=bq.Tooltip(fields=["name"], show_labels=False),
            interactions={"click": "select", "hover": "tooltip"},
        )
        self.points.on_element_click(lambda _mark, event: self._on_pick(int(event["data"]["index"])))
        self._x_axis = bq.Axis(scale=ex, label="reference")
        self._y_axis = bq.Axis(scale=ey, side="left", label="compared", grid_lines="dashed")
        self.episodes_figure = bq.Figure(
            marks=[self.diagonal, self.points],
            axes=[self._x_axis, self._y_axis],
            animation_duration=0,
            display_toolbar=False,
            title="per episode: compared vs reference (click to replay)",
            title_style={"font-size": "13px"},
            fig_margin={"top": 40, "bottom": 40, "left": 55, "right": 10},
            layout=w.Layout(width="430px", height="340px"),
        )
        self._picked: list[int] = []

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
        reference, ``side="b"`` (or ``show``) adds it first to the compared configs."""
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

    def color(self, name: str) -> str:
        """The colour of config ``name`` in every figure and list: given when the config first
        appears (the next of the palette) and kept, whatever is added, picked or swapped."""
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

    def _compare(self, reference: str, other: str) -> Comparison:
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
        self.comparisons: dict[str, Comparison] = {name: self._compare(reference, name) for name in self.others}
        self.comparison = self.comparisons[self.others[0]]
        names = [reference] + [n for n in self.others if n != reference]
        scores = {name: self._score(name) for name in names}
        self.summary.value = self._summary_html(names, scores)
        self._draw_groups(names, scores)
        self._draw_episodes(reference, names, scores)
        self.groups_view.value = self._groups_html(names, scores)
        self.components_view.value = self._components_html(reference)

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
        label = {
            "raw": "mean shaped return",
            "share of max": "mean return / config's largest",
            "ranks": "mean rank (1 = paid most)",
        }[scale]
        values = np.array(rows)
        low, high = float(min(values.min(), 0.0)), float(max(values.max(), 0.0))
        pad = max(high - low, 1e-9) * 0.1
        with self.bars.hold_sync(), self._bar_scale.hold_sync():
            self._bar_scale.min, self._bar_scale.max = low - (pad if low < 0 else 0.0), high + pad
            self.bars.y = values
            self.bars.labels = names
            self.bars.colors = [self.color(name) for name in names]
        self.groups_figure.title = f"{label} per {self.by} (colours as listed above)"

    def _draw_episodes(self, reference: str, names: list[str], scores: dict[str, Scores]) -> None:
        scale = self.scale.value
        n = self.prepared.n_episodes
        picked = np.arange(n) if n <= MAX_POINTS else np.linspace(0, n - 1, MAX_POINTS).astype(int)
        x_all = normalised(scores[reference].reward_sum, scale)
        xs, ys, colors, labels, self._picked = [], [], [], [], []
        others = [m for m in names if m != reference] or [reference]
        groups = groups_of(self.corpus, self.by)
        for name in others:
            y_all = normalised(scores[name].reward_sum, scale)
            xs.append(x_all[picked])
            ys.append(y_all[picked])
            colors += [self.color(name)] * len(picked)
            for i in picked:
                episode = self.prepared.ids[i]
                labels.append(
                    f"{episode} · {groups.get(episode, '')} · {reference} {x_all[i]:.3g} · {name} "
                    f"{y_all[i]:.3g} · {int(scores[name].episodes['unique_achievements_total'].iat[i])} "
                    "achievements"
                )
                self._picked.append(int(i))
        x, y = np.concatenate(xs), np.concatenate(ys)
        # equal axes fitted to the data (both scales set: bqplot would otherwise pad them apart)
        low, high = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
        pad = max(high - low, 1e-9) * 0.05
        low, high = low - pad, high + pad
        ex, ey = self._episode_scales
        with self.points.hold_sync(), self.diagonal.hold_sync(), ex.hold_sync(), ey.hold_sync():
            ex.min, ex.max, ey.min, ey.max = low, high, low, high
            self.points.x, self.points.y = x, y
            self.points.colors = colors
            self.points.names = labels
            self.diagonal.x, self.diagonal.y = [low, high], [low, high]
        self._x_axis.label = f"{reference} ({scale})"
        self._y_axis.label = f"{', '.join(others)} ({scale})"
        sample = f" ({MAX_POINTS} of {n} episodes, evenly spaced)" if n > MAX_POINTS else ""
        self.episodes_figure.title = f"per episode vs reference{sample}; click to replay"

    def _on_pick(self, position: int) -> None:
        if self.replayer is not None and 0 <= position < len(self._picked):
            episode = self.prepared.ids[self._picked[position]]
            self.replayer.set_config(self.configs[self.others[0]])
            self.replayer.open(episode, decision="best")

    def link(self, *, replayer: Any = None) -> Compare:
        """Open clicked episodes in ``replayer`` (scored under the first compared config). Returns self."""
        self.replayer = replayer
        return self

    def _summary_html(self, names: list[str], scores: dict[str, Scores]) -> str:
        rows = []
        for k, name in enumerate(names):
            config = scores[name].config
            role = "reference" if k == 0 else "compared"
            rows.append(
                f"<li><b style='color:{self.color(name)}'>{html.escape(name)}</b> ({role}): "
                f"{config.effective_strategy}, lambda x{config.effective_lambda:g}; "
                f"{html.escape(self._progress_line(scores[name]))}</li>"
            )
        return lined(f"<ul style='margin:0;padding-left:18px;font-size:12px'>{''.join(rows)}</ul>")

    def _progress_line(self, scores: Scores) -> str:
        key = ("progress", id(scores))
        if key not in self._tables:
            self._tables[key] = (scores, progress_summary(scores))
        return self._tables[key][1]

    def _groups_html(self, names: list[str], scores: dict[str, Scores]) -> str:
        frames = []
        for name in names:
            table = self._by_group(name)
            frames.append(
                table.assign(config=name)[
                    [self.by, "config", "episodes", "mean_achievements", "mean_return", "return_per_achievement"]
                ]
            )
        table = pd.concat(frames).rename(
            columns={
                "mean_achievements": "mean achievements",
                "mean_return": "mean return",
                "return_per_achievement": "return per achievement",
            }
        )
        table = table.sort_values(
            self.by, key=lambda c: c.map({g: i for i, g in enumerate(self._groups)}), kind="stable"
        )
        return table.to_html(index=False, float_format="%.3f")

    def _components_html(self, reference: str) -> str:
        parts = []
        for name, comparison in self.comparisons.items():
            changes = comparison.largest_changes(self.top)
            changes = changes[changes["difference"] != 0]
            title = f"<b>{html.escape(name)}</b> vs <b>{html.escape(reference)}</b>"
            if changes.empty:
                parts.append(f"<p>{title}: no differences (every component pays the same corpus total)</p>")
                continue
            table = pd.DataFrame(
                {
                    "component": [component_label(k, n) for k, n in zip(changes["kind"], changes["name"])],
                    f"total: {reference}": changes["total_a"].to_numpy(),
                    f"total: {name}": changes["total_b"].to_numpy(),
                    "difference": changes["difference"].to_numpy(),
                }
            )
            parts.append(
                f"<p>{title}: the {len(table)} largest changes of corpus totals</p>"
                + table.to_html(index=False, float_format="%.3f")
            )
        return "".join(parts)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
