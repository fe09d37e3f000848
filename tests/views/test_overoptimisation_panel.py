"""The over-optimisation panel on hand-made series (gold a tent, one proxy rising, one equal to the
gold): its alarm state and words, the rule at the decline, a click on the decline's episode,
too few episodes, and a refresh on each append that recomputes only when episodes came; then on
a real ``LiveScores``, and the Timeline's rule where a decline began."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from helpers import REPO

from workbench.analysis.overoptimisation import live_watch, overoptimisation_watch
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.episodes import Corpus
from workbench.data.sample import search_corpus
from workbench.scoring.incremental import LiveScores
from workbench.views.widgets.overoptimisation import OveroptimisationPanel
from workbench.views.widgets.timeline import Timeline

SHAPED, HONEST = RewardConfig(strategy="per_achievement"), RewardConfig(strategy="consistent")
#: Gold rises by one achievement per episode to 14 at episode 14, then falls by one per episode
#: to 0 at episode 28; the "shaped" proxy rises 0.5 per episode throughout, the "honest" one
#: is the gold itself.
GOLD = [t if t <= 14 else 28 - t for t in range(29)]


class HandRun:
    """What the panel reads of a ``LiveScores`` (its configs, length, episodes table, appends),
    over the hand-made series: episode ``e{t}`` unlocked the first ``GOLD[t]`` achievements."""

    def __init__(self, n: int) -> None:
        self.configs = {"shaped": SHAPED, "honest": HONEST}
        self.n = n
        self.callbacks: list[Callable[[Corpus], None]] = []

    def __len__(self) -> int:
        return self.n

    def episodes(self) -> pd.DataFrame:
        rows = []
        for t in range(self.n):
            for name in self.configs:
                proxy = 0.5 * t if name == "shaped" else float(GOLD[t])
                unlocked = list(ACHIEVEMENTS[: GOLD[t]])
                rows.append((f"e{t}", name, t, proxy, unlocked, len(unlocked)))
        columns = ["episode", "config", "arrival", "return", "unique_achievements", "unique_achievements_total"]
        return pd.DataFrame(rows, columns=columns)

    def on_append(self, callback: Callable[[Corpus], None]) -> None:
        self.callbacks.append(callback)

    def grow(self, n: int) -> None:
        self.n = n
        for callback in self.callbacks:
            callback(Corpus())


def crafter_score(golds: list[int]) -> float:
    """Crafter's score (percent) of episodes that each unlocked the first ``g`` achievements, by hand."""
    rates = [100.0 * sum(g > a for g in golds) / len(golds) for a in range(len(ACHIEVEMENTS))]
    return math.exp(sum(math.log(1.0 + r) for r in rates) / len(rates)) - 1.0


def test_the_alarm_in_words_with_the_slopes_by_hand():
    panel = OveroptimisationPanel(HandRun(29), reps=200)  # type: ignore[arg-type]
    # The gold's centred mean of 9 peaks at 14 (symmetric there); from 14 on the gold is 28 - t
    # (slope -1 in every resample: a line stays a line) and the shaped proxy 0.5 t (+0.5).
    shaped = panel.states["shaped"].value
    assert "alarm</b>: proxy rising +0.5/episode [+0.5, +0.5] while gold falls -1/episode [-1, -1]" in shaped
    assert "since episode <code>e15</code> (position 15)" in shaped
    # Crafter's score over the 9 episodes up to the peak (6..14) and the last 9 (20..28: gold 8..0)
    before, after = crafter_score(GOLD[6:15]), crafter_score(GOLD[20:])
    assert f"near the peak {before:.1f}% &rarr; at the end {after:.1f}%" in shaped
    assert f"(change {after - before:+.1f} [" in shaped
    # the honest proxy falls with the gold: no alarm, and why
    honest = panel.states["honest"].value
    assert "no alarm</b>: proxy falling; from the gold's peak at position 14 on, gold -1/episode [-1, -1]" in honest
    assert "proxy -1/episode [-1, -1]" in honest
    assert panel.declines == {"shaped": "e15"}
    assert "on 29 episodes" in panel.summary.value and "1 of 2 config(s) alarmed" in panel.summary.value
    # the button names the episode and shows only where the alarm is on
    assert panel.buttons["shaped"].layout.display is None and "e15" in panel.buttons["shaped"].description
    assert panel.buttons["honest"].layout.display == "none"


def test_the_figure_draws_gold_proxy_and_the_rule_at_the_decline():
    panel = OveroptimisationPanel(HandRun(29), reps=100)  # type: ignore[arg-type]
    chart = panel.charts["shaped"]
    assert chart.gold_points.y.tolist() == GOLD
    assert chart.proxy_points.y.tolist() == pytest.approx([0.5 * t for t in range(29)])
    # centred mean of 9 at 14: (10 + 11 + 12 + 13 + 14 + 13 + 12 + 11 + 10) / 9; at 0: (0..4) / 5
    assert chart.gold_line.y[14] == pytest.approx(106 / 9) and chart.gold_line.y[0] == pytest.approx(2.0)
    assert chart.rule.visible and list(chart.rule.x) == [15.0, 15.0]
    assert not panel.charts["honest"].rule.visible
    assert "decline began: episode e15" in panel.legends["shaped"].value
    assert "decline began" not in panel.legends["honest"].value
    assert (chart.x_axis.label, chart.gold_axis.label, chart.proxy_axis.label) == (
        "episode (arrival order)",
        "achievements unlocked",
        "shaped return",
    )


def test_a_click_on_the_decline_opens_its_episode():
    panel = OveroptimisationPanel(HandRun(29), reps=100)  # type: ignore[arg-type]
    heard: list[str] = []
    panel.observe(lambda change: heard.append(change["new"].episode), "picked")
    panel.buttons["shaped"].click()
    assert panel.episode == "e15" and panel.selection == ("e15",) and panel.config is SHAPED
    panel.buttons["shaped"].click()  # again: observers hear the pick again
    assert heard == ["e15", "e15"]
    panel.open_episode(3)  # a gold point clicked
    assert panel.episode == "e3"
    with pytest.raises(KeyError):
        panel.open_decline("honest")  # no alarm there


def test_too_few_episodes_say_how_many_more_then_an_append_refreshes_once():
    run = HandRun(7)
    panel = OveroptimisationPanel(run, reps=100)  # type: ignore[arg-type]
    assert panel.watch is None and panel.declines == {} and panel.recomputes == 0
    assert "7 episode(s) so far; it needs at least 12 in arrival order (5 more)" in panel.summary.value
    assert "waiting: 5 more episode(s)" in panel.states["shaped"].value
    assert panel.charts["shaped"].gold_points.y.tolist() == GOLD[:7]  # drawn meanwhile
    assert panel.buttons["shaped"].layout.display == "none"
    run.grow(29)
    assert panel.recomputes == 1 and panel.declines == {"shaped": "e15"}
    panel.refresh()  # no new episode: nothing recomputed
    assert panel.recomputes == 1
    follow_off = OveroptimisationPanel(HandRun(7), reps=100, follow=False)  # type: ignore[arg-type]
    follow_off.live.grow(29)  # type: ignore[attr-defined]
    assert follow_off.recomputes == 0
    follow_off.refresh()
    assert follow_off.recomputes == 1 and follow_off.declines == {"shaped": "e15"}


def test_on_a_live_run_the_panel_is_the_watch_of_the_corpus():
    corpus = search_corpus()
    configs = {name: RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in ("upstream_shaped",)}
    live = LiveScores(corpus[:10], configs)
    panel = OveroptimisationPanel(live, reps=200)
    live.append(corpus[10:])
    assert panel.recomputes == 1
    # independent path: the corpus watch prepares the corpus again (gold from the states seen)
    expected = overoptimisation_watch(corpus, configs, reps=200).alarms
    pd.testing.assert_frame_equal(panel.watch.alarms, expected)  # type: ignore[union-attr]
    assert panel.charts["upstream_shaped"].gold_points.y.tolist() == corpus.index["n_unlocked"].tolist()
    pd.testing.assert_frame_equal(live_watch(live.episodes(), reps=200).alarms, expected)


def test_the_timeline_rules_where_a_decline_began():
    corpus = search_corpus()
    configs = {name: RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in ("upstream_shaped",)}
    live = LiveScores(corpus[:30], configs)
    timeline = Timeline(live, window=10, reps=50)
    assert not timeline.decline_lines.visible
    timeline.mark_declines({"upstream_shaped": corpus.ids[17], "not-a-config": corpus.ids[3]})
    # one rule, at the 18th episode's arrival (17), from the y scale's bottom to its top
    assert timeline.decline_lines.visible
    assert np.atleast_2d(timeline.decline_lines.x).tolist() == [[17.0, 17.0]]
    assert np.atleast_2d(timeline.decline_lines.y).tolist() == [[timeline.y_scale.min, timeline.y_scale.max]]
    assert f"the decline began at episode <code>{corpus.ids[17]}</code>" in timeline.legend.value
    assert "not-a-config" not in timeline.legend.value
    timeline.x_picker.value = "training_step"  # no training steps: arrival order, the rule stays
    assert np.atleast_2d(timeline.decline_lines.x).tolist() == [[17.0, 17.0]]
    timeline.mark_declines({})
    assert not timeline.decline_lines.visible and "decline" not in timeline.legend.value


def test_a_replayer_following_the_panel_opens_the_decline():
    """The farmer takes over (the scripted player's episodes by achievements, then the farmer's
    paid more than 26 by return): upstream_shaped alarms, and a Replayer that follows the panel
    opens the episode where the decline began under that config."""
    from workbench.scoring import score
    from workbench.views.widgets import Replayer

    corpus = search_corpus()
    configs = {
        name: RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in ("consistent", "upstream_shaped")
    }
    paid = score(corpus, configs["upstream_shaped"]).reward_sum
    policy, gold = corpus.index["policy"].to_numpy(), corpus.index["n_unlocked"].to_numpy()
    scripted = sorted(np.flatnonzero(policy == "scripted"), key=lambda i: gold[i])
    farmer = sorted(np.flatnonzero((policy == "farmer") & (paid > 26)), key=lambda i: paid[i])
    run = corpus[np.array([*scripted, *farmer])]
    live = LiveScores(run, configs)
    panel = OveroptimisationPanel(live, reps=200)
    assert list(panel.declines) == ["upstream_shaped"]
    began = panel.declines["upstream_shaped"]
    replayer = Replayer(live.corpus, configs["consistent"])
    replayer.follow(panel)
    panel.open_decline("upstream_shaped")
    assert replayer.episode == began and replayer.config is configs["upstream_shaped"]
    # the decline begins after the gold's peak, which lies among the scripted player's episodes
    assert began in {corpus.ids[i] for i in scripted}


def test_while_the_gold_still_rises_the_panel_waits_for_its_peak_to_settle():
    # 20 episodes of the tent: the gold rises to 14 at episode 14 and falls to 9 at episode 19.
    # The centred mean of 9 tops at 14 (symmetric: 4 episodes each side), followed by only 5
    # episodes (10 needed): no alarm yet, however the slopes look, and the panel says why.
    panel = OveroptimisationPanel(HandRun(20), reps=200)  # type: ignore[arg-type]
    shaped = panel.states["shaped"].value
    assert "no alarm</b>: the gold's peak has only 5 episode(s) after it so far" in shaped
    assert "from the gold's peak at position 14 on" in shaped
    assert panel.declines == {}
