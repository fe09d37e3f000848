"""The over-optimisation watch as a figure: gold and proxy over a run's episodes, the alarm marked.

Reads ``workbench.analysis.overoptimisation.OveroptimisationWatch``; returns a matplotlib Figure."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from workbench.util.labels import short_label
from workbench.views.plots import LABEL_CHARS, PALETTE, WIDE, literal_text

__all__ = ["overoptimisation"]

GOLD_COLOR = PALETTE[7]


def _rolling(values: pd.Series, window: int) -> np.ndarray:
    return values.rolling(window, center=True, min_periods=1).mean().to_numpy()


@literal_text
def overoptimisation(watch, *, window: int = 9) -> Figure:
    """Gold (achievements unlocked per episode, left axis) and each config's proxy (shaped return,
    right axis) over the run, as points with a centred rolling mean of ``window`` episodes; for
    each config whose alarm fired, the span from the gold's peak is shaded and the episode where
    the decline began is marked and named in the legend.

    Args:
        watch: an ``OveroptimisationWatch``.
        window: episodes in the drawn rolling means.

    Returns:
        The figure (one axis pair).
    """
    fig = Figure(figsize=(WIDE[0], WIDE[1] + 1.2), layout="constrained")
    gold_ax = fig.subplots()
    proxy_ax = gold_ax.twinx()
    series, alarms = watch.series, watch.alarms.set_index("config")
    handles = []
    first = series[series["config"] == series["config"].iloc[0]]
    gold_ax.scatter(first["position"], first["gold"], s=8, color=GOLD_COLOR, alpha=0.3)
    handles += gold_ax.plot(
        first["position"],
        _rolling(first["gold"], window),
        color=GOLD_COLOR,
        linewidth=2,
        label="gold: achievements unlocked (rolling mean)",
    )
    for colour, (name, rows) in zip(PALETTE, series.groupby("config", sort=False)):
        label = short_label(str(name), LABEL_CHARS)
        proxy_ax.scatter(rows["position"], rows["proxy"], s=8, color=colour, alpha=0.3)
        handles += proxy_ax.plot(
            rows["position"],
            _rolling(rows["proxy"], window),
            color=colour,
            linewidth=1.5,
            linestyle="--",
            label=f"proxy: {label} shaped return",
        )
        found = alarms.loc[name]
        if bool(found["alarm"]):
            gold_ax.axvspan(found["peak"], rows["position"].max(), color=colour, alpha=0.08)
            handles.append(
                gold_ax.axvline(
                    found["start"],
                    color=colour,
                    linewidth=1.5,
                    label=f"alarm ({label}): from episode {short_label(str(found['began_at']), LABEL_CHARS)}; "
                    f"gold {found['gold_slope']:+.3f}/ep [{found['gold_low']:+.3f}, {found['gold_high']:+.3f}]",
                )
            )
    gold_ax.set_xlabel("episode (run order)")
    gold_ax.set_ylabel("achievements unlocked")
    proxy_ax.set_ylabel("shaped return (proxy)")
    fired = int(watch.alarms["alarm"].sum())
    gold_ax.set_title(f"over-optimisation watch: {fired} of {len(watch.alarms)} config(s) alarmed")
    # below the axes: alarm labels are long (config and episode names, the slope's interval)
    fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    return fig
