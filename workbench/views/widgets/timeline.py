"""Timeline: a run over time under every config of a ``LiveScores``, side by side.

The same episodes under each config, with rolling intervals and change points; it follows the
run (redraws on each append)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import Any

import bqplot as bq
import ipywidgets as w
import numpy as np
import pandas as pd

from workbench.analysis import timeline as tl
from workbench.analysis.timeline import series as _series  # noqa: F401 - ruptures now, not at the first long series mid-run
from workbench.core.components import KIND_LABELS, KINDS
from workbench.data.episodes import Corpus
from workbench.scoring.incremental import LiveScores
from workbench.views.plots import PALETTE
from workbench.views.widgets.common import lined, lines_box
from workbench.views.widgets.pick import announce
from workbench.views.widgets.replayer import Replayer
from workbench.views.widgets.timeline_text import changes_html, legend_html, note_html
from workbench.views.widgets.traits import ViewTraits

#: What the y axis can show: label -> (kind of series, the column or component kind).
Y_CHOICES: dict[str, tuple[str, str]] = {
    "shaped return": ("mean", "return"),
    **{f"{KIND_LABELS[kind]} share": ("share", kind) for kind in (*KINDS[1:], KINDS[0])},
    "Crafter score (%)": ("crafter", "unique_achievements_total"),
    "flags per window": ("flags", ""),
}
X_LABELS = {"arrival": "arrival", "training_step": "training step", "wall_time": "wall time"}
#: The colour of series that are the same under every config (Crafter's score).
ALL_CONFIGS = "#444444"


class Timeline(w.VBox, ViewTraits):
    """A run over time: per config of ``live``, the per-episode values (points: click one to
    replay it), the trailing ``window``'s mean with its interval (a band) and the change points
    (dashed verticals), on x = arrival order, training step or wall time (``x_picker``).

    A widget. ``y_picker`` picks the series (``Y_CHOICES``). Follows ``live``: each append
    redraws by updating the marks' data (nothing is rebuilt); the rolling windows already drawn
    are kept and only the new ones computed (``follow=False``: only when ``refresh()`` is called,
    e.g. from a thread of the caller's so the appending thread never waits for a redraw).
    ``context`` is entered around redraws made from the appending thread (the app sets its
    session's). Its state is traits:

    - ``config``: the config of the series last picked (the first config until a pick).
    - ``episode``: the episode last picked (a click on its point, or ``open_episode``), else None.
    - ``picked``: each pick as an event (``pick.Pick``; the same episode picked twice is heard twice).
    - ``selection``: the episodes highlighted among the points (a click highlights the one
      picked; setting it highlights those drawn).

    ``mark_declines`` rules (solid, named in the legend) where an ``OveroptimisationPanel``'s
    ``declines`` say a config's decline began.

    Args:
        live: The run's episodes scored under each config as they arrive.
        x: The x axis (``analysis.timeline.X_CHOICES``).
        y: The series (``Y_CHOICES``).
        window: The rolling window, in episodes.
        reps: Bootstrap resamples per interval.
        follow: Redraw on each append (else only on ``refresh()``).
        replay: Open picked episodes in a Replayer below the figure (the app shows them on its
            Replay page instead, observing ``episode``).

    Raises:
        KeyError: ``x`` or ``y`` is not one of the choices.
    """

    def __init__(
        self,
        live: LiveScores,
        *,
        x: str = "arrival",
        y: str = "shaped return",
        window: int = 20,
        reps: int = 400,
        follow: bool = True,
        replay: bool = True,
    ) -> None:
        if y not in Y_CHOICES:
            raise KeyError(f"y={y!r} is not one of {list(Y_CHOICES)}")
        if x not in tl.X_CHOICES:
            raise KeyError(f"x={x!r} is not one of {list(tl.X_CHOICES)}")
        self.live, self.reps = live, reps
        self.context: Callable[[], Any] = contextlib.nullcontext
        self._lock = threading.RLock()
        self._cache: dict[tuple[str, int], pd.DataFrame] = {}  # (y, window) -> rolling rows so far
        self._flags = pd.DataFrame()
        self._flag_windows = (0, 0)  # (window, complete windows diagnosed)
        self.replayer: Replayer | None = None
        self.redraws = 0
        self._declines: dict[str, str] = {}  # config -> the episode where its decline began
        self.x_picker = w.ToggleButtons(
            options=[(X_LABELS[c], c) for c in tl.X_CHOICES],
            value=x,
            style={"button_width": "110px"},
        )
        self.y_picker = w.Dropdown(
            options=list(Y_CHOICES),
            value=y,
            description="y",
            layout=w.Layout(width="260px"),
            style={"description_width": "initial"},  # room for the longest kind label
        )
        self.window_picker = w.Dropdown(
            options=sorted({5, 10, 20, 50, 100, int(window)}),
            value=int(window),
            description="window",
            layout=w.Layout(width="160px"),
        )
        self.note = w.HTML()
        self.legend = w.HTML(layout=w.Layout(width="100%"))
        self.changes = w.HTML(layout=lines_box(4))
        self.changes.add_class("wb-timeline-changes")
        self._build_figure()
        self.replay_area = w.VBox()
        controls = w.HBox(
            [w.Label("x"), self.x_picker, self.y_picker, self.window_picker],
            layout=w.Layout(flex_flow="row wrap", width="100%", align_items="center"),
        )
        super().__init__(
            [controls, self.note, self.figure, self.legend, self.changes, self.replay_area],
            layout=w.Layout(width="100%"),
        )
        self.add_class("workbench-timeline")
        if live.configs:
            self.config = next(iter(live.configs.values()))
        for control in (self.x_picker, self.y_picker, self.window_picker):
            control.observe(lambda _change: self.refresh(), names="value")
        self.observe(lambda _change: self._highlight(), names="selection")
        if replay:
            self.observe(self._replay, names="picked")
        if follow:
            live.on_append(self._appended)
        self.refresh()

    # -- figure ------------------------------------------------------------------------------
    def _build_figure(self) -> None:
        self.x_scale, self.y_scale = bq.LinearScale(), bq.LinearScale()
        scales = {"x": self.x_scale, "y": self.y_scale}
        names = list(self.live.configs)
        self.colors = {**{name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}, "": ALL_CONFIGS}
        # One band and one mean line per config (and "" for series the same under every config):
        # hidden while empty, never fed NaN (bqplot's SVG would log errors for it).
        self.bands = {
            name: bq.Lines(
                x=[0.0, 1.0], y=[[0.0, 0.0], [0.0, 0.0]], scales=scales, fill="between",
                colors=[self.colors[name]] * 2, fill_colors=[self.colors[name]], fill_opacities=[0.15],
                opacities=[0.0, 0.0], stroke_width=0, visible=False,
            )
            for name in self.colors
        }  # fmt: skip
        self.means = {
            name: bq.Lines(
                x=[0.0, 1.0], y=[0.0, 0.0], scales=scales, stroke_width=2.5, colors=[self.colors[name]], visible=False
            )
            for name in self.colors
        }
        self.points = bq.Scatter(
            x=np.zeros(0), y=np.zeros(0), scales=scales, default_size=22, stroke="white", names=[],
            display_names=False, colors=[PALETTE[0]], opacities=[0.75],
            tooltip=bq.Tooltip(fields=["name"], labels=["episode"], show_labels=False),
            interactions={"click": "select", "hover": "tooltip"},
        )  # fmt: skip
        self.points.on_element_click(lambda _mark, event: self.pick(int(event["data"]["index"])))
        self.change_lines = bq.Lines(
            x=[[0.0, 0.0]], y=[[0.0, 1.0]], scales=scales, line_style="dashed", stroke_width=2, colors=["#B3261E"],
            visible=False,
        )  # fmt: skip
        self.decline_lines = bq.Lines(
            x=[[0.0, 0.0]], y=[[0.0, 1.0]], scales=scales, stroke_width=3, colors=["#444444"], visible=False
        )
        self.x_axis = bq.Axis(scale=self.x_scale, label="episode (arrival order)", grid_lines="none")
        self.y_axis = bq.Axis(scale=self.y_scale, side="left", label="shaped return", grid_lines="dashed")
        self.figure = bq.Figure(
            marks=[*self.bands.values(), self.change_lines, self.decline_lines, *self.means.values(), self.points],
            axes=[self.x_axis, self.y_axis],
            animation_duration=0,
            fig_margin={"top": 10, "bottom": 45, "left": 65, "right": 15},
            layout=w.Layout(width="100%", height="360px"),
        )
        self.figure.add_class("wb-timeline-figure")
        self._shown: list[tuple[str, str]] = []  # (episode, config) of each drawn point

    # -- following ---------------------------------------------------------------------------
    def _appended(self, _episodes: Corpus) -> None:
        with self.context():
            self.refresh()

    def refresh(self) -> None:
        """Redraw from ``live`` as it is now: new windows computed, marks' data replaced."""
        with self._lock:
            table = self.live.episodes()
            if not len(table):
                self.note.value = lined("<span style='color:#555'>waiting for the first episode ...</span>")
                return
            self._draw(table)
            self.redraws += 1

    def _rolling(self, table: pd.DataFrame, y: str, window: int) -> pd.DataFrame:
        """The rolling rows of ``y`` for every arrival, computing only windows not cached."""
        kind, column = Y_CHOICES[y]
        cached = self._cache.get((y, window))
        since = 0 if cached is None or not len(cached) else int(cached["arrival"].max()) + 1
        if kind == "mean":
            new = tl.rolling_mean(table, column, window, reps=self.reps, since=since)
        elif kind == "share":
            new = tl.component_shares(table, window, since=since)
            new = new[new["component"] == column].rename(columns={"share": "mean"})
            new = new.assign(low=np.nan, high=np.nan)
        elif kind == "crafter":
            new = tl.crafter_score_series(table, window, reps=self.reps, since=since)
            new = new.rename(columns={"score": "mean"}).assign(config="")
        else:
            return self._window_flag_counts(window)
        rows = new if cached is None else pd.concat([cached, new], ignore_index=True)
        self._cache[(y, window)] = rows
        return rows

    def _window_flag_counts(self, window: int) -> pd.DataFrame:
        """Per config and complete window: how many flags the diagnostics raised (at its last arrival)."""
        corpus, configs = self.live.corpus, self.live.configs
        done_window, done = self._flag_windows
        if done_window != window:
            self._flags, done = pd.DataFrame(), 0
        new = tl.window_flags(corpus, configs, window, since_window=done, reps=100)
        self._flags = pd.concat([self._flags, new], ignore_index=True) if len(self._flags) else new
        self._flag_windows = (window, len(corpus) // window)
        rows = []
        for name in configs:
            for block in range(len(corpus) // window):
                mine = (
                    self._flags[(self._flags["config"] == name) & (self._flags["window"] == block)]
                    if len(self._flags)
                    else []
                )
                rows.append((name, (block + 1) * window - 1, len(mine)))
        return pd.DataFrame(rows, columns=["config", "arrival", "mean"]).assign(low=np.nan, high=np.nan)

    def _per_episode(self, table: pd.DataFrame, y: str) -> pd.DataFrame:
        """The per-episode values drawn as points (and searched for change points)."""
        kind, column = Y_CHOICES[y]
        if kind == "mean":
            return table[["episode", "config", "arrival", column]].rename(columns={column: "value"})
        if kind == "share":
            kinds = [c for c in tl.COMPONENT_COLUMNS.values() if c in table.columns]
            total = table[kinds].sum(axis=1)
            share = table[tl.COMPONENT_COLUMNS[column]] / total.where(total != 0)
            return table[["episode", "config", "arrival"]].assign(value=share).dropna(subset=["value"])
        if kind == "crafter":
            first = table.drop_duplicates("episode")
            return first[["episode", "arrival", column]].rename(columns={column: "value"}).assign(config="")
        return pd.DataFrame(columns=["episode", "config", "arrival", "value"])

    def _draw(self, table: pd.DataFrame) -> None:
        y, window = self.y_picker.value, int(self.window_picker.value)
        axis = tl.x_axis(table, self.x_picker.value)
        xs = axis.values
        rolling = self._rolling(table, y, window)
        episodes = self._per_episode(table, y)
        kind = Y_CHOICES[y][0]
        configs = [""] if kind == "crafter" else list(self.live.configs)
        colors = {**self.colors, "": ALL_CONFIGS}
        by_arrival = pd.Series(xs.to_numpy(), index=np.arange(len(xs)))
        with contextlib.ExitStack() as held:
            # every mark's and scale's changes go as one message each: x and y of a mark arriving
            # apart would be drawn with different lengths in between
            marks = (*self.bands.values(), *self.means.values(), self.points, self.change_lines, self.decline_lines)
            for part in (*marks, self.x_scale, self.y_scale, self.x_axis, self.y_axis):
                held.enter_context(part.hold_sync())
            for name, band in self.bands.items():
                rows = rolling[rolling["config"] == name] if name in configs else rolling.iloc[:0]
                rows = rows[np.isfinite(rows["mean"].to_numpy(dtype=float))]
                bx = by_arrival.reindex(rows["arrival"].to_numpy()).to_numpy(dtype=float)
                banded = len(rows) > 0 and bool(rows["low"].notna().all())
                if banded:
                    band.x, band.y = bx, np.vstack([rows["low"].to_numpy(float), rows["high"].to_numpy(float)])
                band.visible = banded
                line = self.means[name]
                if len(rows):
                    line.x, line.y = bx, rows["mean"].to_numpy(dtype=float)
                line.visible = len(rows) > 0
            self._draw_points(episodes, by_arrival, colors)
            self._fit_scales(by_arrival.to_numpy(dtype=float))
            found = self._draw_changes(episodes, by_arrival, kind)
            self._draw_declines(axis.values)
            self.x_axis.label = axis.label
            self.y_axis.label = y if kind != "flags" else f"flags per window of {window} episodes"
        self.note.value = note_html(axis, len(table["episode"].unique()))
        self.legend.value = legend_html(configs, colors, {c: e for c, e in self._declines.items() if c in colors})
        self.changes.value = changes_html(found)

    def _draw_points(self, episodes: pd.DataFrame, by_arrival: pd.Series, colors: dict[str, str]) -> None:
        px = by_arrival.reindex(episodes["arrival"].to_numpy()).to_numpy(dtype=float)
        self.points.x, self.points.y = px, episodes["value"].to_numpy(dtype=float)
        self._shown = list(zip(episodes["episode"].astype(str), episodes["config"].astype(str)))
        self.points.names = [f"{e} ({c})" if c else e for e, c in self._shown]
        self.points.colors = [colors.get(c, ALL_CONFIGS) for _, c in self._shown]
        self._highlight()

    def _highlight(self) -> None:
        """Select the drawn points of the episodes in ``selection``."""
        chosen = set(self.selection)
        self.points.selected = [i for i, (episode, _) in enumerate(self._shown) if episode in chosen] or None

    def _fit_scales(self, xs: np.ndarray) -> None:
        """Set both scales' ranges from what is shown, padded, never empty (one episode, or equal
        values, would give d3 a zero-width domain and the marks undefined positions)."""
        ys = [np.asarray(self.points.y, dtype=float)]
        ys += [np.asarray(m.y, dtype=float).ravel() for m in self.means.values() if m.visible]
        ys += [np.asarray(b.y, dtype=float).ravel() for b in self.bands.values() if b.visible]
        for scale, values in ((self.x_scale, xs), (self.y_scale, np.concatenate(ys))):
            values = values[np.isfinite(values)]
            low, high = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
            pad = max((high - low) * 0.04, 0.5 if scale is self.x_scale else max(abs(high) * 0.05, 0.05))
            if (scale.min, scale.max) != (low - pad, high + pad):
                scale.min, scale.max = low - pad, high + pad

    def _draw_changes(self, episodes: pd.DataFrame, by_arrival: pd.Series, kind: str) -> list[tuple[str, Any]]:
        """Dashed verticals where each config's per-episode series shifts; returns what was found."""
        found: list[tuple[str, Any]] = []
        if kind != "flags" and len(episodes):
            shifts = tl.series_change_points(episodes.rename(columns={"value": "_v"}), "_v")
            found = [(row.config, row) for row in shifts.itertuples(index=False)]
        low, high = float(self.y_scale.min), float(self.y_scale.max)
        if found:
            # midway between the last episode before the shift and the first after it
            arrivals = np.array([row.arrival for _, row in found])
            at = (by_arrival.reindex(arrivals - 1).to_numpy(float) + by_arrival.reindex(arrivals).to_numpy(float)) / 2
            self.change_lines.x = np.vstack([at, at]).T
            self.change_lines.y = np.tile([low, high], (len(found), 1))
            self.change_lines.colors = [self.colors.get(name, ALL_CONFIGS) for name, _ in found]
        self.change_lines.visible = bool(found)
        return found

    def mark_declines(self, declines: Mapping[str, str]) -> None:
        """Mark where each config's decline began (config name -> episode id; an empty mapping
        clears the marks) and redraw.

        Args:
            declines: The configs whose over-optimisation alarm is on, each with its episode.
        """
        with self._lock:
            self._declines = dict(declines)
            self.refresh()

    def _draw_declines(self, x_of: pd.Series) -> None:
        """A rule per marked config at its episode's x (configs or episodes not drawn: none)."""
        marked = [(name, x_of.get(episode)) for name, episode in self._declines.items() if name in self.colors]
        marked = [(name, float(x)) for name, x in marked if x is not None and np.isfinite(x)]
        if marked:
            at = np.array([x for _, x in marked])
            self.decline_lines.x = np.vstack([at, at]).T
            self.decline_lines.y = np.tile([float(self.y_scale.min), float(self.y_scale.max)], (len(marked), 1))
            self.decline_lines.colors = [self.colors[name] for name, _ in marked]
        self.decline_lines.visible = bool(marked)

    # -- replay ------------------------------------------------------------------------------
    def pick(self, index: int) -> None:
        """Pick the ``index``-th drawn point's episode (what a click does).

        Args:
            index: The point's position among those drawn.
        """
        episode, config = self._shown[index]
        self.open_episode(episode, config)

    def open_episode(self, episode: str, config: str = "") -> None:
        """Pick ``episode`` under the config named ``config`` (the first config when ''):
        ``config`` and ``selection`` follow, then ``episode``.

        Args:
            episode: An episode id of the run.
            config: A config name of ``live`` ('' for series the same under every config).
        """
        self.config = self.live.configs[config or next(iter(self.live.configs))]
        self.selection = (episode,)
        announce(self, episode, source="timeline")

    def _replay(self, change: dict[str, Any]) -> None:
        """Show the pick in the Replayer below the figure (rebuilt when the run has grown past it)."""
        pick = change["new"]
        if pick is None:
            return
        if self.replayer is None or pick.episode not in self.replayer.corpus.ids:
            self.replayer = Replayer(self.live.corpus, self.config, episode=pick.episode)
            self.replay_area.children = [self.replayer]
        self.replayer.open_pick(pick, self.config)
