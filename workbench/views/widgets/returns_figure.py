"""The Tuner's figure: shaped return per policy as boxes and clickable episode points.

Live boxes beside the ghost baseline, drawn with bqplot; an update sends only box corners and
point heights."""

from __future__ import annotations

from collections.abc import Callable

import bqplot as bq
import ipywidgets as w
import numpy as np

from workbench.views.widgets.common import fit_chars, short_labels

#: Episodes drawn one point each up to this many; above it only the top and bottom ones.
ALL_POINTS_UP_TO = 200
#: How many top and bottom episodes a large corpus shows.
EXTREMES = 10
BASELINE_COLOR, LIVE_COLOR = "#9a9a9a", "#0072B2"
#: The plot area's narrowest width (the outputs column's 360 px less the margins): tick labels fit it.
NARROWEST_PLOT_PX = 290
#: The y range drawn when no episode is shown (the filter matches none).
EMPTY_RANGE = (-1.0, 1.0)
#: x offsets within a policy's slot: ghost box, live box, episode points.
GHOST_X, LIVE_X, POINTS_X, HALF_BOX = -0.22, 0.04, 0.3, 0.09


def box_lines(values_by_group: list[np.ndarray], offset: float) -> tuple[np.ndarray, np.ndarray]:
    """Polylines (rows of 5 points) drawing one box plot per group at x = group + offset: the
    quartile box, the median and whiskers to the 5th and 95th percentiles. An empty group draws
    nothing: its lines shrink to one point on the zero line (a NaN would make the browser log a
    path error per line).

    Args:
        values_by_group: Each group's values.
        offset: Added to each group's x.

    Returns:
        (x, y) of the polylines.
    """
    xs, ys = [], []
    for group, values in enumerate(values_by_group):
        x0, x1, xm = group + offset - HALF_BOX, group + offset + HALF_BOX, group + offset
        if len(values) == 0:
            q5 = q25 = q50 = q75 = q95 = 0.0
            x0 = x1 = xm
        else:
            q5, q25, q50, q75, q95 = np.percentile(values, [5, 25, 50, 75, 95])
        xs += [[x0, x1, x1, x0, x0], [x0, x1, x1, x1, x1], [xm, xm, xm, xm, xm], [xm, xm, xm, xm, xm]]
        ys += [
            [q25, q25, q75, q75, q25],
            [q50, q50, q50, q50, q50],
            [q5, q25, q25, q25, q25],
            [q75, q95, q95, q95, q95],
        ]
    return np.array(xs, dtype=float), np.array(ys, dtype=float)


#: The legend entry of the interval marks.
INTERVAL_LABEL = "estimated counts: interval"
#: Half the width of an interval's end caps, in x units (a policy's slot is 1 wide).
CAP = 0.035


def interval_lines(
    x: np.ndarray, low: np.ndarray, high: np.ndarray, cap: float = CAP, vertical: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Polylines (rows of 6 points) drawing each interval ``[low_i, high_i]`` at ``x_i`` as an
    error bar with end caps: vertical (values on y) or, with ``vertical=False``, horizontal
    (values on x, ``x`` then being the y positions). Returns ``(xs, ys)`` of shape (k, 6)."""
    x, low, high = (np.asarray(a, dtype=float)[:, None] for a in (x, low, high))
    across = x + np.array([[-cap, cap, 0.0, 0.0, -cap, cap]])
    along = np.hstack([low, low, low, high, high, high])
    return (across, along) if vertical else (along, across)


def estimated_rows(intervals: np.ndarray | None) -> np.ndarray:
    """Positions of the rows of ``intervals`` ((k, 2) low, high; NaN or equal ends for an exact
    return) that are intervals to draw."""
    if intervals is None or not len(intervals):
        return np.zeros(0, dtype=np.int64)
    intervals = np.asarray(intervals, dtype=float)
    return np.flatnonzero(np.isfinite(intervals).all(axis=1) & (intervals[:, 1] > intervals[:, 0]))


def interval_bars(x_scale: bq.Scale, y_scale: bq.Scale, color: str) -> bq.Lines:
    """The (hidden until drawn) mark of the interval bars on ``x_scale`` and ``y_scale``."""
    bar_x, bar_y = interval_lines(np.zeros(1), np.zeros(1), np.zeros(1))
    scales = {"x": x_scale, "y": y_scale}
    return bq.Lines(x=bar_x, y=bar_y, scales=scales, colors=[color], stroke_width=1.5, visible=False)


class IntervalKey:
    """The legend entry of the interval bars, drawn in the plot area (an error-bar glyph and
    "estimated counts: interval" at ``x`` and ``y``, fractions of the plot area from its left
    and bottom), shown only while some interval is. bqplot's own legend sizes its box from the
    default font and drew it over the axis in the Tuner's narrow figure."""

    def __init__(self, x: float, y: float) -> None:
        frame_x, frame_y = bq.LinearScale(min=0.0, max=1.0), bq.LinearScale(min=0.0, max=1.0)
        glyph_x, glyph_y = interval_lines(np.array([x]), np.array([y - 0.035]), np.array([y + 0.035]), cap=0.012)
        self.glyph = bq.Lines(
            x=glyph_x[0],
            y=glyph_y[0],
            scales={"x": frame_x, "y": frame_y},
            colors=[LIVE_COLOR],
            stroke_width=1.5,
            visible=False,
        )
        self.label = bq.Label(
            x=[x + 0.025],
            y=[y - 0.02],
            text=[INTERVAL_LABEL],
            scales={"x": frame_x, "y": frame_y},
            colors=["#333"],
            default_size=11,
            align="start",
            visible=False,
        )
        self.marks = [self.glyph, self.label]

    def show(self, shown: bool, color: str) -> None:
        """Show or hide the entry, its glyph in ``color``."""
        if list(self.glyph.colors) != [color]:
            self.glyph.colors = [color]
        if self.label.visible != shown:
            self.glyph.visible = self.label.visible = shown


class ReturnsFigure:
    """Boxes per group (live and baseline) and episode points with hover and click.

    ``update(live, baseline, shown, names)`` redraws: ``live`` / ``baseline`` are per-group arrays
    of returns, ``shown`` (group, return) per drawn episode and ``names`` their hover texts.
    ``on_pick(index)`` is called with the position in the last ``shown`` of a clicked point.
    ``intervals`` ((k, 2) per drawn episode, NaN rows for exact returns) draws the return interval
    of each episode whose counts are estimated as an error bar through its point, with the
    legend entry "estimated counts: interval".
    """

    def __init__(self, groups: list[str], colors: dict[str, str], on_pick: Callable[[int], None]) -> None:
        self.groups = groups
        self.x = bq.LinearScale(min=-0.6, max=len(groups) - 0.4)
        self.y = bq.LinearScale()
        frame_y = bq.LinearScale(min=0.0, max=1.0)
        n = len(groups)
        self.ghost = bq.Lines(
            x=np.zeros((4 * n, 5)),
            y=np.zeros((4 * n, 5)),
            scales={"x": self.x, "y": self.y},
            colors=[BASELINE_COLOR],
            line_style="dashed",
            stroke_width=1.5,
            labels=["baseline"],
            display_legend=False,
        )
        self.live = bq.Lines(
            x=np.zeros((4 * n, 5)),
            y=np.zeros((4 * n, 5)),
            scales={"x": self.x, "y": self.y},
            colors=[LIVE_COLOR],
            stroke_width=2,
        )
        tooltip = bq.Tooltip(fields=["name"], labels=["episode"], show_labels=False)
        self.points = bq.Scatter(
            x=np.zeros(0),
            y=np.zeros(0),
            scales={"x": self.x, "y": self.y},
            default_size=36,
            stroke="white",
            tooltip=tooltip,
            names=[],
            display_names=False,
            colors=[LIVE_COLOR],
            interactions={"click": "select", "hover": "tooltip"},
        )
        self.points.on_element_click(lambda _mark, event: on_pick(int(event["data"]["index"])))
        # Labels fit their slot at the narrowest width (a 36-character policy id is shortened
        # around an ellipsis); ``legend`` names every group whole in its colour.
        self.short = short_labels(groups, fit_chars(NARROWEST_PLOT_PX, n, char_px=10.0))  # 13 px bold
        self.labels = bq.Label(
            x=list(range(n)),
            y=[0.02] * n,
            text=self.short,
            scales={"x": self.x, "y": frame_y},
            colors=[colors.get(g, "black") for g in groups],
            font_weight="bold",
            align="middle",
            default_size=13,
        )
        self.zero = bq.Lines(
            x=[-0.6, n - 0.4], y=[0.0, 0.0], scales={"x": self.x, "y": self.y}, colors=["#555"], stroke_width=0.8
        )
        # Error bars of estimated-count episodes' returns, and their legend entry (top left)
        self.intervals = interval_bars(self.x, self.y, LIVE_COLOR)
        self.interval_key = IntervalKey(0.03, 0.93)
        x_axis = bq.Axis(scale=self.x, num_ticks=0, tick_style={"display": "none"})
        y_axis = bq.Axis(scale=self.y, side="left", label="shaped return", grid_lines="dashed")
        self.widget = bq.Figure(
            marks=[
                self.zero,
                self.ghost,
                self.live,
                self.intervals,
                self.points,
                self.labels,
                *self.interval_key.marks,
            ],
            axes=[x_axis, y_axis],
            animation_duration=0,
            display_toolbar=False,
            fig_margin={"top": 44, "bottom": 20, "left": 60, "right": 10},  # the title clears the top tick
            layout=w.Layout(width="100%", height="330px"),
            title="shaped return per episode",
            title_style={"font-size": "13px"},
        )
        self._colors = colors
        self._baseline: list[np.ndarray] | None = None
        self._ghost: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))
        self._range = (np.inf, -np.inf)

    def update(
        self,
        live: list[np.ndarray],
        baseline: list[np.ndarray],
        shown_group: np.ndarray,
        shown_return: np.ndarray,
        names: list[str],
        title: str,
        intervals: np.ndarray | None = None,
    ) -> None:
        """Redraw boxes and points (see the class docstring).

        Args:
            live: Each group's returns under the live config.
            baseline: Each group's returns under the baseline.
            shown_group: Each drawn point's group.
            shown_return: Each drawn point's return.
            names: Each drawn point's hover text.
            title: The figure's title.
        """
        live_x, live_y = box_lines(live, LIVE_X)
        new_ghost = baseline is not self._baseline  # sent only when the filter changes it
        if new_ghost:
            self._baseline = baseline
            self._ghost = box_lines(baseline, GHOST_X)
        ghost_x, ghost_y = self._ghost
        estimated = estimated_rows(intervals)
        ends = np.asarray(intervals, dtype=float)[estimated].ravel() if len(estimated) else np.zeros(0)
        every = np.concatenate([*live, *baseline, shown_return, ends, [0.0]])
        every = every[np.isfinite(every)]
        low, high = float(every.min()), float(every.max())
        if not len(shown_return) and not any(len(v) for v in live):
            low, high = EMPTY_RANGE  # nothing shown: a plain range, not one of +-1e-7 around zero
        pad = max(high - low, 1e-6) * 0.08
        top = 3.0 * pad if len(estimated) else pad  # room for the intervals' legend entry
        jitter = ((np.arange(len(shown_group)) * 0.618) % 1.0 - 0.5) * 0.12
        # The y range only grows while dragging (fewer axis redraws); it fits again when it is
        # over twice what the data needs or the filter changes.
        current_low, current_high = self._range
        needed = (low - 2 * pad, high + top)
        if (
            new_ghost
            or needed[0] < current_low
            or needed[1] > current_high
            or (current_high - current_low) > 2 * (needed[1] - needed[0])
        ):
            self._range = needed
        with self.live.hold_sync(), self.ghost.hold_sync(), self.points.hold_sync(), self.y.hold_sync():
            if (self.y.min, self.y.max) != self._range:
                self.y.min, self.y.max = self._range
            self.live.x, self.live.y = live_x, live_y
            if new_ghost:
                self.ghost.x, self.ghost.y = ghost_x, ghost_y
            self.points.x = shown_group + POINTS_X + jitter
            self.points.y = shown_return
            if list(self.points.names) != names:
                self.points.names = names
            colors = [self._colors.get(self.groups[int(g)], LIVE_COLOR) for g in shown_group] or [LIVE_COLOR]
            if list(self.points.colors) != colors:
                self.points.colors = colors
            self._draw_intervals(self.points.x, intervals, estimated, colors)
        if self.widget.title != title:
            self.widget.title = title

    def _draw_intervals(self, x: np.ndarray, intervals, estimated: np.ndarray, colors: list[str]) -> None:
        """The error bars of the ``estimated`` rows of ``intervals`` at the points' ``x``."""
        shown = bool(len(estimated))
        if shown:
            bounds = np.asarray(intervals, dtype=float)[estimated]
            bar_x, bar_y = interval_lines(np.asarray(x)[estimated], bounds[:, 0], bounds[:, 1])
            bar_colors = [colors[i] if i < len(colors) else LIVE_COLOR for i in estimated]
            with self.intervals.hold_sync():
                self.intervals.x, self.intervals.y, self.intervals.colors = bar_x, bar_y, bar_colors
        if self.intervals.visible != shown:
            self.intervals.visible = shown
        self.interval_key.show(shown, self.intervals.colors[0] if shown else LIVE_COLOR)
