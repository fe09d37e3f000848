"""The advantages panel's bqplot figure: each rollout's advantage per seed group, flags coloured, moves from the last config drawn.

An update sends point positions, colours and the move segments only."""

from __future__ import annotations

from collections.abc import Callable

import bqplot as bq
import ipywidgets as w
import numpy as np

from workbench.views.plots import PALETTE

#: Point colours: an ordinary group, a group whose order contradicts progress, a zero-variance
#: group (every advantage 0: no gradient), a single rollout (no baseline).
STATUS_COLORS = {"ok": PALETTE[0], "contradicts": PALETTE[5], "zero": "#8a2be2", "alone": "#9a9a9a"}
STATUS_LABELS = {
    "ok": "advantage (now)",
    "contradicts": "group's order contradicts progress",
    "zero": "zero-variance group (no gradient)",
    "alone": "single rollout (no baseline)",
}
BEFORE_COLOR, SELECTED_COLOR = "#b0b0b0", "#000000"
#: Half the width of a group's slot used by its rollouts (left to right: fewer to more achievements).
SPREAD = 0.32


def slot_offsets(group: np.ndarray, progress: np.ndarray) -> np.ndarray:
    """Each rollout's x offset in its group's slot: rollouts ordered by ``progress`` (ties by
    position), spread evenly over [-SPREAD, SPREAD]; a single rollout sits at 0."""
    order = np.lexsort((np.arange(len(group)), progress, group))
    sorted_group = group[order]
    starts = np.r_[0, np.flatnonzero(sorted_group[1:] != sorted_group[:-1]) + 1]
    sizes = np.diff(np.r_[starts, len(group)])
    rank = np.arange(len(group)) - np.repeat(starts, sizes)
    size = np.repeat(sizes, sizes)
    offset = np.zeros(len(group))
    offset[order] = np.where(size > 1, (rank / np.maximum(size - 1, 1) - 0.5) * 2 * SPREAD, 0.0)
    return offset


class AdvantagesFigure:
    """Advantages (y) of the rollouts of each group (x), coloured by their group's flag, with
    the previous config's advantages as grey rings joined to the new ones by a segment.
    ``on_pick(position)`` gets the row of a clicked point."""

    def __init__(self, n_groups: int, on_pick: Callable[[int], None]) -> None:
        self.x = bq.LinearScale(min=-0.6, max=max(n_groups, 1) - 0.4)
        self.y = bq.LinearScale()
        scales = {"x": self.x, "y": self.y}
        self.zero = bq.Lines(x=[-0.6, n_groups - 0.4], y=[0.0, 0.0], scales=scales, colors=["#555"], stroke_width=0.8)
        self.moves = bq.Lines(
            x=np.zeros((1, 2)),
            y=np.zeros((1, 2)),
            scales=scales,
            colors=[BEFORE_COLOR],
            stroke_width=1.2,
            visible=False,
            labels=["moved by the config change"],
            display_legend=False,
        )
        self.before = bq.Scatter(
            x=np.zeros(0),
            y=np.zeros(0),
            scales=scales,
            colors=[BEFORE_COLOR],
            fill=False,
            default_size=40,
            stroke_width=1.5,
            labels=["before the config change"],
            display_legend=False,
            visible=False,
        )
        self.points: dict[str, bq.Scatter] = {}
        for status, color in STATUS_COLORS.items():
            mark = bq.Scatter(
                x=np.zeros(0),
                y=np.zeros(0),
                scales=scales,
                colors=[color],
                default_size=40,
                stroke="white",
                names=[],
                display_names=False,
                labels=[STATUS_LABELS[status]],
                display_legend=False,
                tooltip=bq.Tooltip(fields=["name"], show_labels=False),
                interactions={"click": "select", "hover": "tooltip"},
            )
            mark.on_element_click(lambda _mark, event, s=status: on_pick(self._rows[s][int(event["data"]["index"])]))
            self.points[status] = mark
        self.selected = bq.Scatter(
            x=np.zeros(0),
            y=np.zeros(0),
            scales=scales,
            colors=[SELECTED_COLOR],
            fill=False,
            default_size=110,
            stroke_width=2,
            labels=["selected"],
            display_legend=False,
        )
        self._rows: dict[str, np.ndarray] = {s: np.zeros(0, dtype=np.int64) for s in STATUS_COLORS}
        self._x = np.zeros(0)
        self._y = np.zeros(0)
        # a tick per group (every k-th past 12 groups): groups are numbered, the hover names the seed
        step = max(1, -(-n_groups // 12))
        self.x_axis = bq.Axis(
            scale=self.x,
            label="seed group (in each: fewer to more achievements, left to right)",
            tick_values=np.arange(0, max(n_groups, 1), step),
            tick_format="d",
        )
        self.y_axis = bq.Axis(scale=self.y, side="left", label="advantage", grid_lines="dashed")
        self.widget = bq.Figure(
            marks=[self.zero, self.moves, self.before, *self.points.values(), self.selected],
            axes=[self.x_axis, self.y_axis],
            animation_duration=0,
            display_toolbar=False,
            legend_location="top-right",
            legend_style={"font-size": "11px"},
            fig_margin={"top": 40, "bottom": 48, "left": 60, "right": 10},
            layout=w.Layout(width="100%", min_width="300px", height="360px"),
            title="advantages per seed group",
            title_style={"font-size": "13px"},
        )

    def update(
        self,
        x: np.ndarray,
        now: np.ndarray,
        before: np.ndarray | None,
        status: np.ndarray,
        names: list[str],
        title: str,
    ) -> None:
        """Redraw: ``x`` and ``now`` per rollout, ``before`` (None: no earlier config), each
        rollout's ``status`` (a key of ``STATUS_COLORS``) and hover ``names``."""
        self._x, self._y = x, now
        every = np.concatenate([now, [0.0]] if before is None else [now, before, [0.0]])
        low, high = float(every.min()), float(every.max())
        pad = max(high - low, 1e-6) * 0.1
        # room above for the legend box (top right)
        with self.y.hold_sync():
            self.y.min, self.y.max = low - pad, high + 4 * pad
        for key, mark in self.points.items():
            rows = np.flatnonzero(status == key)
            self._rows[key] = rows
            with mark.hold_sync():
                mark.x, mark.y = x[rows], now[rows]
                mark.names = [names[i] for i in rows]
                mark.display_legend = bool(len(rows))
        shown = before is not None
        with self.before.hold_sync(), self.moves.hold_sync():
            if before is not None:
                self.before.x, self.before.y = x, before
                self.moves.x = np.column_stack([x, x])
                self.moves.y = np.column_stack([before, now])
                self.moves.colors = [BEFORE_COLOR] * len(x)
            self.before.visible = self.before.display_legend = shown
            self.moves.visible = shown
        self.widget.title = title

    def highlight(self, rows: np.ndarray) -> None:
        """Ring the rollouts at ``rows`` (the panel's episode and selection)."""
        with self.selected.hold_sync():
            self.selected.x, self.selected.y = self._x[rows], self._y[rows]
            self.selected.display_legend = bool(len(rows))
