"""``OveroptimisationPanel``: the over-optimisation watch of a growing run, per config: gold (achievements unlocked) against proxy (shaped return), the alarm in words.

It is a widget (a ``VBox``) whose state is the views' shared traits (``traits.ViewTraits``), so a
click on the episode where a decline began sets ``episode`` (and ``config`` to that config's)
and a Replayer that follows the panel opens it, as the other views do.
"""

from __future__ import annotations

import contextlib
import html
import threading
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as w
import numpy as np
import pandas as pd
import traitlets

from workbench.analysis.overoptimisation import MIN_RUN, WINDOW, OveroptimisationWatch, episodes_needed, live_watch
from workbench.data.episodes import Corpus
from workbench.scoring.incremental import LiveScores
from workbench.util.labels import short_label
from workbench.views.plots import LABEL_CHARS, PALETTE
from workbench.views.widgets.overoptimisation_figure import WatchChart
from workbench.views.widgets.pick import announce
from workbench.views.widgets.traits import ViewTraits

__all__ = ["OveroptimisationPanel"]

ALARM_COLOR = "#B3261E"
CALM_COLOR = "#1B6E20"


class OveroptimisationPanel(w.VBox, ViewTraits):
    """The over-optimisation watch (``workbench.analysis.overoptimisation.live_watch``) of every
    config of ``live``: per config a figure of gold against proxy, the alarm's state in words
    with the slopes' intervals and Crafter's score near the gold's peak and at the end, and a
    button that opens the episode where the decline began.

    Follows ``live`` (``follow``): each append recomputes the watch once (``reps`` bootstrap
    resamples: keep it small, the watch is re-run whole) and replaces the marks' data; a refresh
    with no new episode recomputes nothing. ``context`` is entered around refreshes made from the
    appending thread (the app sets its session's). With fewer than ``episodes_needed(min_run)``
    episodes it says how many more it needs.

    State, as traits: ``config`` (the config of the decline last opened; the first config until
    then), ``episode`` (the episode last opened, passing through None when opened again, so
    observers hear every pick), ``selection`` (that episode) and ``declines`` (config name ->
    the episode id where its decline began, for the configs whose alarm is on: the Timeline's
    ``mark_declines`` draws them). ``watch`` is the last ``OveroptimisationWatch`` (None while
    too few episodes), ``recomputes`` how many were made and ``last_update_ms`` the kernel's time
    of the last one with its redraw.

    Args:
        live: The run's episodes scored under each config as they arrive.
        window: Episodes in the rolling means (the gold's peak is the top of its mean).
        min_run: Episodes required after the peak.
        reps: Bootstrap resamples per interval.
        confidence: The intervals' coverage.
        follow: Refresh on each append (else only on ``refresh()``).
    """

    declines = traitlets.Dict()

    def __init__(
        self,
        live: LiveScores,
        *,
        window: int = WINDOW,
        min_run: int = MIN_RUN,
        reps: int = 500,
        confidence: float = 0.95,
        follow: bool = True,
    ) -> None:
        self.live, self.window, self.min_run, self.reps, self.confidence = live, window, min_run, reps, confidence
        self.context: Callable[[], Any] = contextlib.nullcontext
        self.watch: OveroptimisationWatch | None = None
        self.recomputes, self.last_update_ms = 0, 0.0
        self._lock = threading.RLock()
        self._seen = -1  # episodes the panel was last drawn for
        self._ids: list[str] = []
        self.summary = w.HTML()
        self.summary.add_class("wb-overopt-summary")
        self.charts: dict[str, WatchChart] = {}
        self.states: dict[str, w.HTML] = {}
        self.legends: dict[str, w.HTML] = {}
        self.buttons: dict[str, w.Button] = {}
        cards = [self._card(i, name) for i, name in enumerate(live.configs)]
        super().__init__(
            [self.summary, w.Box(cards, layout=w.Layout(flex_flow="row wrap", width="100%"))],
            layout=w.Layout(width="100%"),
        )
        self.add_class("workbench-overoptimisation")
        self.config = next(iter(live.configs.values()))
        if follow:
            live.on_append(self._appended)
        self.refresh()

    def _card(self, index: int, name: str) -> w.VBox:
        """One config's figure, legend, state and button."""
        self.charts[name] = WatchChart(PALETTE[index % len(PALETTE)], lambda position: self.open_episode(position))
        self.legends[name] = w.HTML()
        self.states[name] = w.HTML(layout=w.Layout(min_height="54px"))
        self.states[name].add_class("wb-overopt-state")
        button = w.Button(icon="play", layout=w.Layout(width="auto", max_width="100%", display="none"))
        button.add_class("wb-overopt-began")
        button.on_click(lambda _button: self.open_decline(name))
        self.buttons[name] = button
        title = w.HTML(f"<b>{html.escape(name)}</b>", layout=w.Layout(overflow="hidden"))
        children = [title, self.charts[name].figure, self.legends[name], self.states[name], button]
        card = w.VBox(children, layout=w.Layout(flex="1 1 520px", min_width="0", padding="0 8px 8px 0"))
        card.add_class("wb-overopt-card")
        return card

    # -- following ---------------------------------------------------------------------------
    def _appended(self, _episodes: Corpus) -> None:
        with self.context():
            self.refresh()

    def refresh(self) -> None:
        """Recompute the watch and redraw when episodes came since the last refresh (else nothing)."""
        with self._lock:
            if len(self.live) == self._seen:
                return
            start = time.perf_counter()
            table = self.live.episodes()
            n = len(table["episode"].unique()) if len(table) else 0
            needed = episodes_needed(self.min_run)
            watch = None
            if n >= needed:
                watch = live_watch(
                    table, window=self.window, min_run=self.min_run, reps=self.reps, confidence=self.confidence
                )
                self.recomputes += 1
            self.watch, self._seen = watch, n
            self._draw(table, watch, n, needed)
            self.last_update_ms = 1000 * (time.perf_counter() - start)

    def _draw(self, table: pd.DataFrame, watch: OveroptimisationWatch | None, n: int, needed: int) -> None:
        alarms = None if watch is None else watch.alarms.set_index("config")
        ordered = table.sort_values("arrival", kind="stable") if len(table) else table
        declines: dict[str, str] = {}
        for name, chart in self.charts.items():
            rows = ordered[ordered["config"] == name] if len(ordered) else ordered
            ids = rows["episode"].astype(str).tolist() if len(rows) else []
            gold = rows["unique_achievements_total"].to_numpy(dtype=np.float64) if len(rows) else np.zeros(0)
            proxy = rows["return"].to_numpy(dtype=np.float64) if len(rows) else np.zeros(0)
            found = None if alarms is None or name not in alarms.index else alarms.loc[name]
            alarm = found is not None and bool(found["alarm"])
            began = str(found["began_at"]) if alarm and found is not None else None
            chart.draw(gold, proxy, self.window, ids, int(found["start"]) if alarm and found is not None else None)
            self.legends[name].value = chart.legend(html.escape(name), None if began is None else html.escape(began))
            self.states[name].value = _state_html(found, n, needed)
            button = self.buttons[name]
            if began is not None:
                declines[name] = began
                button.description = f"replay episode {short_label(began, LABEL_CHARS)}, where the decline began"
                button.tooltip = began
            button.layout.display = None if began is not None else "none"
            self._ids = ids
        self.declines = declines
        self.summary.value = _summary_html(n, needed, len(declines), len(self.charts))

    # -- picks -------------------------------------------------------------------------------
    def open_decline(self, config: str) -> None:
        """Open the episode where ``config``'s decline began (what its button does).

        Args:
            config: A config name whose alarm is on.

        Raises:
            KeyError: ``config``'s alarm is not on.
        """
        self._open(self.declines[config], config)

    def open_episode(self, position: int) -> None:
        """Open the episode at arrival ``position`` (what a click on a gold point does).

        Args:
            position: The episode's arrival position.
        """
        self._open(self._ids[position], next(iter(self.charts)))

    def _open(self, episode: str, config: str) -> None:
        self.config = self.live.configs[config]
        self.selection = (episode,)
        announce(self, episode, source="watch")


def _rate(value: float) -> str:
    return f"{value:+.3g}"


def _interval(low: float, high: float) -> str:
    return f"[{_rate(low)}, {_rate(high)}]"


def _state_html(found: pd.Series | None, n: int, needed: int) -> str:
    """One config's alarm state in words (``found``: its row of ``watch.alarms``, None while too few)."""
    if found is None:
        return f"<div style='color:#555;font-size:12px'>waiting: {needed - n} more episode(s) before the watch</div>"
    gold = f"{_rate(found['gold_slope'])}/episode {_interval(found['gold_low'], found['gold_high'])}"
    proxy = f"{_rate(found['proxy_slope'])}/episode {_interval(found['proxy_low'], found['proxy_high'])}"
    began = html.escape(str(found["began_at"]))
    score = (
        f"Crafter score near the peak {found['score_before']:.1f}% &rarr; at the end {found['score_after']:.1f}% "
        f"(change {found['score_change']:+.1f} {_interval(found['score_low'], found['score_high'])})"
    )
    if bool(found["alarm"]):
        head = (
            f"<b style='color:{ALARM_COLOR}'>alarm</b>: proxy rising {proxy} while gold falls {gold} since episode "
            f"<code>{began}</code> (position {int(found['start'])})"
        )
    else:
        why = []
        if not bool(found["settled"]):
            why.append(f"the gold's peak has only {int(found['episodes']) - 1} episode(s) after it so far")
        elif not found["gold_high"] < 0:
            why.append("gold not falling (its interval reaches 0)" if found["gold_low"] <= 0 else "gold rising")
        if bool(found["settled"]) and not found["proxy_low"] > 0:
            why.append("proxy not rising (its interval reaches 0)" if found["proxy_high"] >= 0 else "proxy falling")
        head = (
            f"<b style='color:{CALM_COLOR}'>no alarm</b>: {' and '.join(why)}; from the gold's peak at position "
            f"{int(found['peak'])} on, gold {gold}, proxy {proxy}"
        )
    return f"<div style='font-size:12px;line-height:18px;word-break:break-word'>{head}; {score}</div>"


def _summary_html(n: int, needed: int, alarms: int, configs: int) -> str:
    if n < needed:
        text = (
            f"over-optimisation watch: {n} episode(s) so far; it needs at least {needed} in arrival order "
            f"({needed - n} more)"
        )
    else:
        colour = ALARM_COLOR if alarms else CALM_COLOR
        text = (
            f"over-optimisation watch on {n} episodes: <b style='color:{colour}'>{alarms} of {configs} config(s) "
            "alarmed</b> (the proxy rising while the gold falls, both intervals clear of 0)"
        )
    return f"<div class='wb-overopt-count' style='line-height:20px'>{text}</div>"
