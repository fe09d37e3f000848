"""``WatchChart``: one config's gold (achievements unlocked) against its proxy (shaped return) over a run, in bqplot, the decline marked."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import bqplot as bq
import ipywidgets as w
import numpy as np
import pandas as pd

from workbench.views.plots.overoptimisation import GOLD_COLOR

__all__ = ["WatchChart", "rule_swatch", "swatch"]


class WatchChart:
    """A figure (``figure``) with gold on the left axis and one config's proxy on the right, per
    episode in arrival order: faint points and a centred rolling mean each, and a vertical rule
    at the first episode of the decline when the config's alarm is on. ``legend`` names them.
    Clicking a gold point calls ``on_pick(position)``.

    Args:
        color: The config's colour (its proxy and its rule).
        on_pick: Called with the arrival position of a gold point clicked.
    """

    def __init__(self, color: str, on_pick: Callable[[int], None]) -> None:
        self.color = color
        self.x = bq.LinearScale()
        self.y_gold, self.y_proxy = bq.LinearScale(), bq.LinearScale()
        gold, proxy = {"x": self.x, "y": self.y_gold}, {"x": self.x, "y": self.y_proxy}
        # hidden while empty, never fed NaN: bqplot's SVG logs errors for either
        self.gold_points = bq.Scatter(
            x=np.zeros(0), y=np.zeros(0), scales=gold, colors=[GOLD_COLOR], default_size=14,
            opacities=[0.3], names=[], display_names=False,
            tooltip=bq.Tooltip(fields=["name"], labels=["episode"], show_labels=False),
            interactions={"click": "select", "hover": "tooltip"},
        )  # fmt: skip
        self.gold_points.on_element_click(lambda _mark, event: on_pick(int(event["data"]["index"])))
        self.gold_line = bq.Lines(x=[0.0, 1.0], y=[0.0, 0.0], scales=gold, colors=[GOLD_COLOR], stroke_width=2.5)
        self.proxy_points = bq.Scatter(
            x=np.zeros(0), y=np.zeros(0), scales=proxy, colors=[color], default_size=14, opacities=[0.3]
        )
        self.proxy_line = bq.Lines(
            x=[0.0, 1.0], y=[0.0, 0.0], scales=proxy, colors=[color], stroke_width=2, line_style="dashed"
        )
        self.rule = bq.Lines(x=[0.0, 0.0], y=[0.0, 1.0], scales=gold, colors=[color], stroke_width=2.5, visible=False)
        for line in (self.gold_line, self.proxy_line):
            line.visible = False
        # the label below the tick labels (bqplot's default offset puts it on them)
        self.x_axis = bq.Axis(scale=self.x, label="episode (arrival order)", grid_lines="none", label_offset="34px")
        self.gold_axis = bq.Axis(scale=self.y_gold, side="left", label="achievements unlocked", grid_lines="dashed")
        self.proxy_axis = bq.Axis(scale=self.y_proxy, side="right", label="shaped return", grid_lines="none")
        self.figure = bq.Figure(
            marks=[self.proxy_points, self.gold_points, self.rule, self.proxy_line, self.gold_line],
            axes=[self.x_axis, self.gold_axis, self.proxy_axis],
            animation_duration=0,
            fig_margin={"top": 10, "bottom": 50, "left": 55, "right": 60},
            layout=w.Layout(width="100%", height="250px"),
        )
        self.figure.add_class("wb-overopt-figure")

    def draw(
        self, gold: np.ndarray, proxy: np.ndarray, window: int, names: list[str], start: int | None = None
    ) -> None:
        """Draw the series (arrival positions 0..E-1) and the rule at ``start`` (None: no rule).

        Args:
            gold: Achievements unlocked per episode.
            proxy: The config's shaped return per episode.
            window: Episodes in the centred rolling means.
            names: Each episode's tooltip.
            start: The first position of the decline, when the alarm is on.
        """
        xs = np.arange(len(gold), dtype=np.float64)
        parts = (self.gold_points, self.proxy_points, self.gold_line, self.proxy_line, self.rule)
        with contextlib.ExitStack() as held:
            # each mark's x and y go as one message: apart, they would be drawn with two lengths
            for part in (*parts, self.x, self.y_gold, self.y_proxy):
                held.enter_context(part.hold_sync())
            self.gold_points.x, self.gold_points.y, self.gold_points.names = xs, gold, names
            self.proxy_points.x, self.proxy_points.y = xs, proxy
            for line, values in ((self.gold_line, gold), (self.proxy_line, proxy)):
                if len(values):
                    line.x, line.y = xs, rolling_mean(values, window)
                line.visible = bool(len(values))
            _fit(self.x, xs, 0.5)
            _fit(self.y_gold, gold, 0.5)
            _fit(self.y_proxy, proxy, 0.05)
            if start is not None:
                self.rule.x, self.rule.y = [float(start), float(start)], [self.y_gold.min, self.y_gold.max]
            self.rule.visible = start is not None

    def legend(self, config: str, began: str | None) -> str:
        """The legend's HTML: gold, the config's proxy, and the rule when ``began`` (an episode id).

        Args:
            config: The config's name, HTML-escaped.
            began: The episode where the decline began, HTML-escaped, or None.

        Returns:
            HTML.
        """
        entries = [
            swatch(GOLD_COLOR) + "gold: achievements unlocked (rolling mean)",
            swatch(self.color, dashed=True) + f"proxy: {config} shaped return (rolling mean)",
        ]
        if began is not None:
            entries.append(rule_swatch(self.color) + f"decline began: episode {began}")
        spans = "".join(f"<span style='margin-right:14px;overflow-wrap:anywhere'>{entry}</span>" for entry in entries)
        return f"<div class='wb-overopt-legend' style='line-height:20px;font-size:12px'>{spans}</div>"


def rolling_mean(values: np.ndarray, window: int) -> np.ndarray:
    """The centred rolling mean of ``values`` over ``window`` episodes (fewer at the ends), as
    the watch finds the gold's peak.

    Args:
        values: One value per episode.
        window: Episodes per mean.

    Returns:
        One mean per episode.
    """
    return pd.Series(values).rolling(window, center=True, min_periods=1).mean().to_numpy()


def swatch(color: str, *, dashed: bool = False) -> str:
    """A legend's short horizontal line in ``color`` (dashed for a proxy).

    Args:
        color: A CSS colour.
        dashed: Draw it dashed.

    Returns:
        HTML.
    """
    style = f"border-top:3px {'dashed' if dashed else 'solid'} {color}"
    return f"<span style='display:inline-block;width:16px;vertical-align:middle;margin-right:4px;{style}'></span>"


def rule_swatch(color: str) -> str:
    """A legend's short vertical rule in ``color`` (where a decline began).

    Args:
        color: A CSS colour.

    Returns:
        HTML.
    """
    return (
        f"<span style='display:inline-block;width:3px;height:14px;background:{color};vertical-align:middle;"
        "margin:0 8px 0 6px'></span>"
    )


def _fit(scale: bq.LinearScale, values: np.ndarray, least: float) -> None:
    """Set ``scale``'s range to the finite ``values``, padded, never zero-wide (a d3 domain of
    zero width puts the marks at undefined positions)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    low, high = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
    pad = max((high - low) * 0.05, least)
    if (scale.min, scale.max) != (low - pad, high + pad):
        scale.min, scale.max = low - pad, high + pad
