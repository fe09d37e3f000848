"""The certificate panel's bqplot figure: per component, the share of the shaped return that no potential explains (horizontal bars, one colour per kind, named in a legend under it)."""

from __future__ import annotations

import bqplot as bq
import ipywidgets as w
import numpy as np
import pandas as pd

from workbench.core.components import KIND_LABELS, KINDS, component_label
from workbench.views.plots import KIND_COLORS
from workbench.views.widgets.common import legend_html

__all__ = ["BARS", "UnexplainedFigure", "bar_label"]

#: Bars drawn: the components with the largest unexplained share (by magnitude).
BARS = 12
#: Pixels per bar, and the figure's height around them (title, axis, legend).
BAR_PX, FRAME_PX = 22, 110


def bar_label(kind: str, name: str) -> str:
    """A component as its bar names it: ``"stone (item)"``, ``"collect_stone (count)"``.

    Args:
        kind: One of ``core.components.KINDS``.
        name: The component's name.

    Returns:
        The label.
    """
    return component_label(kind, name, short=True)  # the kinds' one-word labels (the legend says them in full)


class UnexplainedFigure:
    """Horizontal bars: per component (largest first, at most ``BARS``), its unexplained share of
    the shaped return, coloured by kind as every figure colours kinds (``views.plots.KIND_COLORS``),
    ``legend`` (HTML under the figure, where no bar can hide it) naming the kinds shown. ``shown``
    is the table the bars show, in bar order (the largest on top)."""

    def __init__(self) -> None:
        self.names = bq.OrdinalScale()
        self.share = bq.LinearScale(min=0.0)
        scales = {"x": self.names, "y": self.share}
        self.bars: dict[str, bq.Bars] = {
            kind: bq.Bars(
                x=[],
                y=[],
                scales=scales,
                orientation="horizontal",
                colors=[KIND_COLORS[kind]],
                padding=0.25,
                tooltip=bq.Tooltip(fields=["x", "y"], formats=["", ".2%"], labels=["component", "unexplained"]),
            )
            for kind in KINDS
        }
        self.name_axis = bq.Axis(scale=self.names, side="left", tick_style={"font-size": "11px"})
        self.share_axis = bq.Axis(
            scale=self.share,
            side="bottom",
            label="share of the shaped return",
            tick_format=".0%",
            grid_lines="dashed",
            num_ticks=5,
        )
        self.shown = pd.DataFrame()
        self.legend = w.HTML()
        self.widget = bq.Figure(
            marks=list(self.bars.values()),
            axes=[self.name_axis, self.share_axis],
            animation_duration=0,
            display_toolbar=False,
            fig_margin={"top": 30, "bottom": 46, "left": 170, "right": 24},
            layout=w.Layout(width="100%", min_width="300px", height=f"{FRAME_PX + BAR_PX * 3}px"),
            title="unexplained, per component",
            title_style={"font-size": "13px"},
        )

    def update(self, components: pd.DataFrame) -> None:
        """Redraw from a certificate's ``components`` table (``Certificate.components``).

        Args:
            components: Its ``kind``, ``name`` and ``unexplained_share`` columns are drawn.
        """
        order = np.argsort(-np.abs(components["unexplained_share"].to_numpy()), kind="stable")
        shown = components.iloc[order[:BARS]]
        shown = shown[np.abs(shown["unexplained_share"].to_numpy()) > 1e-9].reset_index(drop=True)
        self.shown = shown
        labels = [bar_label(k, n) for k, n in zip(shown["kind"], shown["name"])]
        share = shown["unexplained_share"].to_numpy(dtype=np.float64)
        low, high = min(0.0, float(share.min(initial=0.0))), max(float(share.max(initial=0.0)), 1e-3)
        with self.names.hold_sync(), self.share.hold_sync():
            self.names.domain = labels[::-1]  # horizontal bars: the domain's first at the bottom
            self.share.min, self.share.max = low * 1.1, high * 1.1
        for kind, mark in self.bars.items():
            rows = np.flatnonzero(shown["kind"].to_numpy() == kind)
            with mark.hold_sync():
                mark.x = [labels[i] for i in rows]
                mark.y = share[rows]
        kinds = [KIND_LABELS[k] for k in KINDS if k in set(shown["kind"])]
        colors = {KIND_LABELS[k]: KIND_COLORS[k] for k in KINDS}
        self.legend.value = legend_html(kinds, colors, kinds, title="bars") if kinds else ""
        self.widget.layout.height = f"{FRAME_PX + BAR_PX * max(len(shown), 3)}px"
