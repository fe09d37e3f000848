"""The certificate panel on a hand-made farm (the stone loop of tests/helpers/hand_episodes): bars, cycles, picks and recompute, by hand."""

from __future__ import annotations

import pytest
from helpers import REPO
from helpers.hand_episodes import hand_episode

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.views.widgets import Replayer
from workbench.views.widgets.certificate import CertificatePanel

SHAPED = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")


def farm(laps: int) -> list[dict[str, int]]:
    """Chop a wood, then mine a stone and place it ``laps`` times (as hand_episodes.FARMING)."""
    laps_ = [({"stone": 1, "collect_stone": lap}, {"stone": 0, "place_stone": lap}) for lap in range(1, laps + 1)]
    return [{"wood": 1, "collect_wood": 1}] + [change for pair in laps_ for change in pair]


def farms() -> Corpus:
    return Corpus([hand_episode("farm-a", farm(3), policy="farmer"), hand_episode("farm-b", farm(2), policy="farmer")])


# By hand, under upstream_shaped (lambda 0.5; reward.md's tables: stone 0.15, collect_stone count
# 0.10, place_stone count 0.05, wood 0.10, collect_wood count 0.08; credits collect_wood 0.8,
# collect_stone 1.0, place_stone 1.0 on the first unlock):
# - returns: credits 0.5 (0.8 + 1.0 + 1.0) = 1.4 each; shaping 0.5 (0.10 + 0.08) = 0.09 for the
#   wood and 0.5 (0.15 + 0.10 + 0.05) = 0.15 a lap: farm-a 1.4 + 0.09 + 0.45 = 1.94, farm-b 1.79,
#   total 3.73.
# - fit (gamma 1, design rows = feature changes): the wood decision and each episode's first lap
#   change a flag of their own (unlocked collect_wood / collect_stone / place_stone), so a
#   potential fits them exactly; the later laps (2 in farm-a, 1 in farm-b) are pairs of rows
#   +stone and -stone. For the stone item (0.075 on each mining) the best theta is 0.0375 and
#   every row of a later lap keeps 0.0375: unexplained 2 * 0.0375 * 3 laps = 0.225. Likewise the
#   collect_stone count (0.05 a mining) leaves 0.15, the place_stone count (0.025 a placing)
#   0.075; the wood, its count and the credits nothing.
TOTAL = 3.73
UNEXPLAINED = {("inventory", "stone"): 0.225, ("achievement_count", "collect_stone"): 0.15}
UNEXPLAINED |= {("achievement_count", "place_stone"): 0.075}
# - cycles: rows are the reset then one per decision. The state after the first placing (row 3)
#   is seen again after each later placing, the state after the second mining (row 4) after each
#   later mining: farm-a rows 3->5, 4->6, 5->7, farm-b 3->5; each loop is one mining and one
#   placing, 0.5 (0.15 + 0.10 + 0.05) = 0.15.
CYCLES = [("farm-a", 4, 5), ("farm-a", 5, 6), ("farm-a", 6, 7), ("farm-b", 4, 5)]
LOOP = "collect_stone / place_stone (+stone)"


def test_the_bars_show_each_components_unexplained_share_by_hand():
    panel = CertificatePanel(farms(), SHAPED)
    figure = panel.figure
    drawn = {}
    for kind, mark in figure.bars.items():
        for label, value in zip(mark.x, mark.y):
            drawn[label] = (kind, float(value))
    expected = {
        f"{name} ({'item' if kind == 'inventory' else 'count'})": (kind, value / TOTAL)
        for (kind, name), value in UNEXPLAINED.items()
    }
    assert set(drawn) == set(expected)  # the explained components draw no bar
    for label, (kind, share) in expected.items():
        assert drawn[label][0] == kind and drawn[label][1] == pytest.approx(share, abs=1e-12)
    # the largest on top: the ordinal scale lists the bars from the bottom up
    assert list(figure.names.domain) == ["place_stone (count)", "collect_stone (count)", "stone (item)"]
    legend = figure.legend.value
    assert "inventory shaping" in legend and "achievement-count shaping" in legend
    assert "achievement credits" not in legend  # no credit bar, no credit in the legend
    assert "3.73" in panel.summary.value and "4 positive-return cycle(s) in 2 episode(s)" in panel.summary.value
    # the potential-based counterpart: credits 1.4 + Phi(end) - Phi(reset) at gamma 1, the same
    # for both farms (each ends holding the wood, no stone, three achievements unlocked):
    # 0.5 (0.10 wood + 0.08 + 0.10 + 0.05 for the three flags) = 0.165; the task app's mean (1.94 + 1.79) / 2
    assert "mean return per policy: farmer 1.565 (task app 1.865)" in panel.summary.value


def test_the_table_lists_every_cycle_by_hand_and_a_click_picks_its_start():
    corpus = farms()
    panel = CertificatePanel(corpus, SHAPED)
    columns = ["episode", "from_decision", "to_decision", "paid", "loop"]
    rows = [(e, f + 1, t, p, loop) for e, f, t, p, loop in panel.listed[columns].itertuples(index=False)]
    assert [(e, a, b) for e, a, b, _, _ in rows] == CYCLES  # equal pay: in the certificate's order
    assert all(p == pytest.approx(0.15) and loop == LOOP for *_, p, loop in rows)
    labels = [label for label, _ in panel.table.options]
    assert labels[3] == f"paid 0.150 · farm-b · decisions 4..5 · {LOOP}"
    replayer = Replayer(corpus, SHAPED)
    replayer.follow(panel)  # the panel names a decision: the Replayer opens the loop's start
    panel.table.value = panel.table.options[2][1]
    assert (panel.episode, panel.decision, panel.selection) == ("farm-a", 6, ("farm-a", "farm-b"))
    assert replayer.episode == "farm-a" and replayer.decision_at(replayer.step) == 6
    panel.table.value = panel.table.options[3][1]
    assert (panel.episode, panel.decision) == ("farm-b", 4)
    assert replayer.episode == "farm-b" and replayer.decision_at(replayer.step) == 4


def test_a_config_change_recomputes_bars_and_cycles_by_hand():
    panel = CertificatePanel(farms(), SHAPED)
    panel.table.value = panel.table.options[1][1]
    # Stone pays nothing: a lap pays 0.5 (0.10 + 0.05) = 0.075, the stone bar goes, the counts' stay.
    panel.config = SHAPED.with_changes(resource_overrides={"inventory": {"stone": 0.0}})
    shares = {label: float(v) for mark in panel.figure.bars.values() for label, v in zip(mark.x, mark.y)}
    total = TOTAL - 0.5 * 0.15 * 5  # five minings no longer pay for the stone
    assert set(shares) == {"collect_stone (count)", "place_stone (count)"}
    assert shares["collect_stone (count)"] == pytest.approx(0.15 / total, abs=1e-12)
    assert shares["place_stone (count)"] == pytest.approx(0.075 / total, abs=1e-12)
    assert panel.listed["paid"].tolist() == pytest.approx([0.075] * 4)
    assert panel.table.value == panel.table.options[1][1]  # the cycle picked is still listed: still picked
    # consistent pays 0.5 on a decision that unlocks something (the wood and each first lap's two):
    # no loop pays, and a potential over the unlocked flags explains every payment.
    panel.config = RewardConfig.from_file(REPO / "configs" / "consistent.yaml")
    assert panel.listed.empty and panel.table.options == () and panel.table.value is None
    assert all(len(mark.x) == 0 for mark in panel.figure.bars.values())
    assert "0 positive-return cycle(s)" in panel.summary.value
