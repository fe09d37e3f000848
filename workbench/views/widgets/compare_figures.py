"""Compare's two bqplot figures: mean return per group and per-episode returns against the reference.

Grouped bars, a colour per config; the scatter's points replay their episode when clicked."""

from __future__ import annotations

from collections.abc import Callable

import bqplot as bq
import ipywidgets as w
import numpy as np
import pandas as pd

from workbench.scoring.intervals import interval_text
from workbench.views.plots import PALETTE
from workbench.views.widgets.common import fit_chars, short_labels
from workbench.views.widgets.returns_figure import IntervalKey, estimated_rows, interval_bars, interval_lines

#: The bars' plot area at its narrowest (430 px figure less its margins): group labels fit it.
BARS_PLOT_PX = 330
#: The y label of the bars per returns scale.
BAR_LABELS = {
    "raw": "mean shaped return",
    "share of max": "mean return / config's largest",
    "ranks": "mean rank (1 = paid most)",
}


def _figure(marks: list, axes: list, title: str, bottom: int) -> bq.Figure:
    return bq.Figure(
        marks=marks,
        axes=axes,
        title=title,
        animation_duration=0,
        title_style={"font-size": "13px"},
        display_toolbar=False,  # its hover toolbar covers the title; nothing here pans or zooms
        fig_margin={"top": 40, "bottom": bottom, "left": 62, "right": 10},
        layout=w.Layout(width="430px", height="340px"),
    )


class CompareFigures:
    """The bars (``groups_figure``) and the episodes scatter (``episodes_figure``) of a Compare
    over ``groups`` (group names in order, labelled shortened to fit; ``group_names`` says what
    each short label stands for) grouped ``by``; ``on_pick(position)`` gets a clicked point."""

    def __init__(self, groups: list[str], by: str, on_pick: Callable[[int], None]) -> None:
        self.groups, self.by = groups, by
        self.short = short_labels(groups, fit_chars(BARS_PLOT_PX, len(groups)))
        gx, self._bar_scale = bq.OrdinalScale(), bq.LinearScale()
        self.bars = bq.Bars(
            x=self.short,
            y=np.zeros((1, len(groups))),
            scales={"x": gx, "y": self._bar_scale},
            type="grouped",
            colors=list(PALETTE),
            display_legend=False,  # the legend above names every config whole, in its colour
            labels=["-"],
            tooltip=bq.Tooltip(fields=["x", "y"], formats=["", ".3f"], labels=[by, "mean"]),
        )
        self._bar_axis = bq.Axis(scale=self._bar_scale, side="left", grid_lines="dashed", label=BAR_LABELS["raw"])
        self.groups_figure = _figure(
            [self.bars], [bq.Axis(scale=gx, label=by), self._bar_axis], f"mean shaped return per {by}", 40
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
        self.points.on_element_click(lambda _mark, event: on_pick(int(event["data"]["index"])))
        # Interval bars of estimated-count episodes (vertical: the compared config's return,
        # horizontal: the reference's) and their legend entry (top left: above the diagonal)
        self.intervals = interval_bars(ex, ey, PALETTE[0])
        self.interval_key = IntervalKey(0.04, 0.93)
        self.x_axis = bq.Axis(scale=ex, label="reference")
        self.y_axis = bq.Axis(scale=ey, side="left", label="compared", grid_lines="dashed")
        self.episodes_figure = _figure(
            [self.diagonal, self.intervals, self.points, *self.interval_key.marks],
            [self.x_axis, self.y_axis],
            "per episode vs reference; click to replay",
            44,
        )

    def draw_bars(self, values: np.ndarray, names: list[str], colors: list[str], scale: str) -> None:
        """Bars of ``values`` (a row per config in ``names``, a column per group) on ``scale``.

        Args:
            values: Configs x groups.
            names: The configs' names.
            colors: The configs' colours.
            scale: One of ``SCALES``.
        """
        low, high = float(min(values.min(), 0.0)), float(max(values.max(), 0.0))
        pad = max(high - low, 1e-9) * 0.1
        with self.bars.hold_sync(), self._bar_scale.hold_sync():
            self._bar_scale.min, self._bar_scale.max = low - (pad if low < 0 else 0.0), high + pad
            self.bars.y = values
            self.bars.labels = names
            self.bars.colors = colors
        self._bar_axis.label = BAR_LABELS[scale]
        self.groups_figure.title = f"{BAR_LABELS[scale].split(' (')[0]} per {self.by}"

    def draw_points(
        self,
        x: np.ndarray,
        y: np.ndarray,
        colors: list[str],
        labels: list[str],
        scale: str,
        sample: str,
        x_intervals: np.ndarray | None = None,
        y_intervals: np.ndarray | None = None,
    ) -> None:
        """The episodes scatter: ``x`` under the reference, ``y`` under a compared config, equal axes.

        Args:
            x: Each point's value under the reference.
            y: Each point's value under its compared config.
            colors: Each point's colour.
            labels: Each point's hover text.
            scale: One of ``SCALES``.
            sample: A note on the points drawn ('' for every episode).
            x_intervals: (n, 2) low, high of each point's return interval under the reference
                (NaN rows for exact returns): drawn as a horizontal bar through the point.
            y_intervals: The same under the compared config: drawn as a vertical bar.
        """
        bars = [(np.asarray(b, dtype=float), estimated_rows(b)) for b in (x_intervals, y_intervals)]
        ends = [b[rows].ravel() for b, rows in bars if len(rows)]
        # equal axes fitted to the data (both scales set: bqplot would otherwise pad them apart)
        every = np.concatenate([x, y, *ends])
        low, high = float(every.min()), float(every.max())
        pad = max(high - low, 1e-9) * 0.05
        low, high = low - pad, high + pad
        ex, ey = self._episode_scales
        with self.points.hold_sync(), self.diagonal.hold_sync(), ex.hold_sync(), ey.hold_sync():
            ex.min, ex.max, ey.min, ey.max = low, high, low, high
            self.points.x, self.points.y = x, y
            self.points.colors = colors or [PALETTE[0]]
            self.points.names = labels
            self.diagonal.x, self.diagonal.y = [low, high], [low, high]
            self._draw_intervals(x, y, bars, colors, 0.012 * (high - low))
        # Config names (any length) are in the legend, in their colours; the axes say the role.
        self.x_axis.label = f"return under the reference ({scale})"
        self.y_axis.label = f"under the compared config ({scale})"
        self.episodes_figure.title = f"per episode vs reference{sample}; click to replay"

    def _draw_intervals(self, x: np.ndarray, y: np.ndarray, bars: list, colors: list[str], cap: float) -> None:
        """Horizontal bars for the reference's intervals, vertical ones for the compared config's."""
        (x_bounds, x_rows), (y_bounds, y_rows) = bars
        xs, ys, bar_colors = [], [], []
        if len(x_rows):
            lines = interval_lines(y[x_rows], x_bounds[x_rows, 0], x_bounds[x_rows, 1], cap, vertical=False)
            xs.append(lines[0])
            ys.append(lines[1])
            bar_colors += [colors[i] if i < len(colors) else PALETTE[0] for i in x_rows]
        if len(y_rows):
            lines = interval_lines(x[y_rows], y_bounds[y_rows, 0], y_bounds[y_rows, 1], cap)
            xs.append(lines[0])
            ys.append(lines[1])
            bar_colors += [colors[i] if i < len(colors) else PALETTE[0] for i in y_rows]
        shown = bool(bar_colors)
        if shown:
            with self.intervals.hold_sync():
                self.intervals.x, self.intervals.y = np.vstack(xs), np.vstack(ys)
                self.intervals.colors = bar_colors
        if self.intervals.visible != shown:
            self.intervals.visible = shown
        self.interval_key.show(shown, bar_colors[0] if shown else PALETTE[0])


#: How returns are put on one scale: as they are, as a share of each config's largest
#: |mean return|, or as ranks (1 = paid most).
SCALES = ("raw", "share of max", "ranks")


def normalised(returns: np.ndarray, scale: str) -> np.ndarray:
    """Per-episode returns on ``scale`` (see ``SCALES``).

    Args:
        returns: Per-episode returns.
        scale: One of ``SCALES``.

    Returns:
        The returns on that scale.
    """
    if scale == "ranks":
        return pd.Series(returns).rank(ascending=False, method="min").to_numpy()
    if scale == "share of max":
        peak = float(np.abs(returns).max()) if len(returns) else 0.0
        return returns / peak if peak > 0 else returns * 0.0
    return returns


def interval_ranges(bounds: dict[int, tuple[float, float]], picked: np.ndarray) -> np.ndarray:
    """(len(picked), 2) each picked episode's interval from ``bounds``, NaN where it has none."""
    return np.array([bounds.get(int(i), (np.nan, np.nan)) for i in picked], dtype=float).reshape(-1, 2)


def value_text(bounds: dict[int, tuple[float, float]], i: int, value: float) -> str:
    """Episode ``i``'s value: its return interval when ``bounds`` has one, else ``value`` to 3 figures."""
    if i in bounds:
        low, high = bounds[i]
        return interval_text(low, high, 3)
    return f"{value:.3g}"
