"""The over-optimisation figure: gold and proxy on their axes, the alarm marked where the decline began."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.analysis.overoptimisation import OveroptimisationWatch, watch_series
from workbench.views.plots.overoptimisation import overoptimisation


def hand_made_watch() -> OveroptimisationWatch:
    # Gold rises 0..14 then falls (29 episodes); "shaped" rises 0.5 a step (alarm from 15),
    # "aligned" follows the gold (no alarm).
    t = np.arange(29.0)
    gold = np.where(t <= 14, t, 28 - t)
    proxies = {"shaped": 0.5 * t, "aligned": gold / 10}
    series, rows = [], []
    for name, proxy in proxies.items():
        found = watch_series(gold, proxy, reps=100)
        rows.append({"config": name, **found.__dict__, "began_at": f"ep{found.start}"})
        series.append(
            pd.DataFrame(
                {
                    "position": t.astype(int),
                    "episode": [f"ep{i}" for i in range(29)],
                    "config": name,
                    "gold": gold,
                    "proxy": proxy,
                }
            )
        )
    return OveroptimisationWatch(pd.concat(series, ignore_index=True), pd.DataFrame(rows))


def test_the_figure_marks_the_alarm_and_labels_everything():
    watch = hand_made_watch()
    assert watch.alarms["alarm"].tolist() == [True, False]
    fig = overoptimisation(watch)
    gold_ax, proxy_ax = fig.axes
    assert gold_ax.get_xlabel() == "episode (run order)" and gold_ax.get_ylabel() == "achievements unlocked"
    assert proxy_ax.get_ylabel() == "shaped return (proxy)"
    assert "1 of 2 config(s) alarmed" in gold_ax.get_title()
    labels = [text.get_text() for text in fig.legends[0].get_texts()]
    assert labels[0].startswith("gold") and "proxy: shaped shaped return" in labels
    (alarm,) = [label for label in labels if label.startswith("alarm")]
    assert "from episode ep15" in alarm and "gold -1.000/ep" in alarm
    # the marker stands at the decline's first episode
    (line,) = [line for line in gold_ax.get_lines() if line.get_label().startswith("alarm")]
    assert list(line.get_xdata()) == [15, 15]
