"""The loop signs (count-at-cap, spent-and-regained, progress-free pay) on hand-built episodes
whose verdict is obvious: units, decisions and pay counted by hand in the comments."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.hand_episodes import HONEST, hand_episode

from workbench.analysis.audit import audit
from workbench.analysis.detector_accuracy import measured
from workbench.analysis.diagnostics.loop_pay import loop_pay
from workbench.analysis.diagnostics.loop_signs import (
    CAP_CODE,
    PROGRESS_FREE_CODE,
    REGAINED_CODE,
    SignThresholds,
    sign_flags,
    sign_statistics,
    sign_table,
)
from workbench.analysis.family_holdout import choose_margin, sign_thresholds, wilson
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import Corpus
from workbench.scoring import prepare

N_ITEMS = len(INVENTORY_ITEMS)
# What one unit of each rise pays in these tests: stone .15, collect_stone .10, place_stone .05,
# collect_sapling .10.
PAYS = np.zeros(N_ITEMS + len(ACHIEVEMENTS))
PAYS[INVENTORY_ITEMS.index("stone")] = 0.15
PAYS[N_ITEMS + ACHIEVEMENTS.index("collect_stone")] = 0.10
PAYS[N_ITEMS + ACHIEVEMENTS.index("place_stone")] = 0.05
PAYS[N_ITEMS + ACHIEVEMENTS.index("collect_sapling")] = 0.10


def capped(n: int = 120) -> list[dict[str, int]]:
    """Decision 1 picks 9 saplings at once (collect_sapling 9: a new unlock); decisions 2..61 keep
    picking at the cap (collect_sapling 10..69, sapling stays 9): 60 rises at the cap; then idle."""
    return [{"sapling": 9, "collect_sapling": 9}, *({"collect_sapling": 9 + k} for k in range(1, 61)), *[{}] * (n - 61)]


def test_digging_at_the_cap_is_not_a_cap_loop():
    # Mining stone at the cap: the count rises, the stone stays at 9, but mining also clears the
    # way (a mined block turns into path): honest players do it, so it is not counted
    mined = [{"stone": 9, "collect_stone": 9}, *({"collect_stone": 9 + k} for k in range(1, 61))]
    corpus = Corpus([hand_episode("dig", mined, policy="p")])
    assert loop_pay(corpus, PAYS).cap_units.sum() == 0


def batched(laps: int = 4, n: int = 120) -> list[dict[str, int]]:
    """Mine 5 stones, walk 3 decisions, place all 5; ``laps`` times (13 decisions a lap); idle after."""
    out: list[dict[str, int]] = []
    for lap in range(laps):
        out += [{"stone": k, "collect_stone": 5 * lap + k} for k in range(1, 6)]
        out += [{}] * 3
        out += [{"stone": 5 - k, "place_stone": 5 * lap + k} for k in range(1, 6)]
    return out + [{}] * (n - len(out))


def table(*episodes: list[dict[str, int]]):
    corpus = Corpus([hand_episode(f"e{i}", changes, policy="p") for i, changes in enumerate(episodes)])
    prepared = prepare(corpus)
    rewards = np.zeros(prepared.n_decisions)  # the unit signs read no reward
    return corpus, sign_table(corpus, rewards, prepared.n_first, PAYS, np.ones(len(corpus)))


def test_counts_rising_at_the_cap_are_counted_and_paid():
    corpus, found = table(capped())
    pay = loop_pay(corpus, PAYS)
    # decision 1's 9 rises raise the sapling too (not at the cap); decisions 2..61 rise at the cap
    assert pay.cap_units.sum() == 60 and np.flatnonzero(pay.cap_units).tolist() == list(range(1, 61))
    row = found.iloc[0]
    assert row["cap_units"] == 60 and row["cap_paid"] == pytest.approx(60 * 0.10)
    assert (row["cap_first"], row["cap_last"]) == (2, 61)
    # after decision 1 (the unlock) no decision unlocks anything new: 119 progress-free decisions,
    # so the best 50 are decisions 2..51, all 50 at the cap
    assert (row["cap_peak"], row["cap_at"]) == (50, 2)
    assert row["regained_units"] == 0


def test_batched_laps_are_regained_in_any_order_at_any_distance():
    corpus, found = table(batched())
    pay = loop_pay(corpus, PAYS)
    # lap 1 raises the stone to 5 for the first time; laps 2-4 each mine 5 back: 15 regained
    assert pay.regained_units.sum() == 15
    assert pay.by_item[0, ["wood", "stone", "coal", "iron", "diamond", "sapling"].index("stone")] == 15
    # 15 x (stone .15 + collect_stone .10) for the regains, 20 placements x .05 handing stone back
    assert pay.regained.sum() == pytest.approx(15 * 0.25 + 20 * 0.05)
    row = found.iloc[0]
    # place_stone unlocks at decision 9; the regains (decisions 14-18, 27-31, 40-44) all fall in
    # the stretch after it (111 quiet decisions), and in the first 50-decision window
    assert (row["regained_peak"], row["regained_at"]) == (15, 1)
    assert row["item"] == "stone" and row["cap_units"] == 0


def test_honest_restocking_is_not_a_loop():
    # HONEST mines and places a stone twice within 7 decisions full of first unlocks: 2 units
    # regained, but in no stretch of 50 decisions without a new unlock
    _, found = table(HONEST)
    assert found.iloc[0]["regained_units"] == 2 and found.iloc[0]["regained_peak"] == 0


def test_flags_say_what_fired_where_and_paying_what():
    _, found = table(capped(), batched(), HONEST)
    flags = sign_flags(found, SignThresholds(cap_units=10, regained_units=7, progress_free=3.0))
    assert [(f.code, f.subject) for f in flags] == [(CAP_CODE, "e0"), (REGAINED_CODE, "e1")]
    cap = flags[0].evidence
    # the window 2..51 paid 50 x .10 at the cap; the whole episode 60 x .10 (the why says both)
    assert cap["decisions"] == [2, 51] and cap["laps"] == 50 and cap["paid"] == pytest.approx(5.0)
    assert cap["replay"]["decision"] == 2 and "e0" in cap["replay"]["link"]
    assert "50 in decisions 2..51" in flags[0].why and "paid 6.000" in flags[0].why
    assert flags[1].evidence["decisions"] == [1, 50] and flags[1].evidence["laps"] == 15
    # in decisions 1..50 the progress-free ones are 10..50 (place_stone unlocks at 9): the 15 regains
    # x .25, and the placements there x .05: lap 1's at 10-13, lap 2's 22-26, lap 3's 35-39 and
    # lap 4's 48-50: 3.75 + 17 x .05 = 4.60
    assert flags[1].evidence["paid"] == pytest.approx(3.75 + 17 * 0.05)


def test_progress_free_sign_is_against_honest_plays_rate():
    _, found = table(capped())
    found.loc[0, "progress_free_peak"] = 3.0  # per 100 decisions
    stats = sign_statistics(found, reference=1.2)
    assert stats.loc["e0", PROGRESS_FREE_CODE] == pytest.approx(2.5)  # 3.0 / 1.2
    assert sign_statistics(found, reference=float("nan")).loc["e0", PROGRESS_FREE_CODE] == 0.0


def test_thresholds_and_margin_follow_the_honest_maximum():
    import pandas as pd

    honest = pd.DataFrame({CAP_CODE: [3.0, 8.0], REGAINED_CODE: [1.0, 7.0], PROGRESS_FREE_CODE: [1.5, 2.0]})
    assert sign_thresholds(honest, 1.5) == {
        "farming-loop": 0.0,
        CAP_CODE: 12.0,
        REGAINED_CODE: 10.5,
        PROGRESS_FREE_CODE: 3.0,
    }
    exploit = pd.DataFrame(
        {"farming-loop": [0.0, 0.0], CAP_CODE: [20.0, 0.0], REGAINED_CODE: [0.0, 12.0], PROGRESS_FREE_CODE: [0.0, 0.0]}
    )
    # margin 1.5 flags both (20 > 12, 12 > 10.5); 2.0 only the first (12 < 14): the largest keeping 100% is 1.5
    assert choose_margin(honest, exploit, target=1.0, margins=(1.0, 1.5, 2.0)) == 1.5


def test_wilson_interval_by_hand():
    # 8 of 10: centre (0.8 + 1.96^2/20) / (1 + 1.96^2/10) = 0.7167, half-width
    # 1.96 * sqrt(0.016 + 1.96^2/400) / 1.3841 = 0.2266 -> [0.490, 0.943]
    low, high = wilson(8, 10)
    assert (low, high) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert wilson(0, 10)[0] == 0.0 and np.isnan(wilson(0, 0)[0])


def test_audit_reports_the_cap_loop_with_its_evidence():
    corpus = Corpus([hand_episode("capper", capped(), policy="hacker")])
    config = RewardConfig(strategy="per_achievement", weights={"collect_sapling": 1.0}, indicator_lambda=1.0)
    report = audit(corpus, {"mine": config})
    found = report.findings()
    row = found[found["code"] == CAP_CODE].iloc[0]
    assert (row["episode"], row["first"], row["last"], row["laps"]) == ("capper", 2, 51, 50)
    assert row["replay"] and row["paid"] > 0
    seen = measured(CAP_CODE, "mine")
    assert seen is not None and seen["config"] == "pooled"
    assert (row["kind"] == "flag") == seen["meets_target"]


def test_honest_reference_is_zero_where_only_progress_pays():
    from workbench.analysis.sign_gates import honest_reference, shipped_signs

    # consistent pays the indicator, at decisions that unlock something new for the episode;
    # progress-free decisions unlock nothing new, so honest play's progress-free rate is 0
    assert honest_reference(RewardConfig(strategy="consistent")) == 0.0
    shaped = RewardConfig(strategy="per_achievement", weights={}, indicator_lambda=1.0)
    assert honest_reference(shaped) > 0.0  # resource shaping pays drinking, eating, restocking
    signs = shipped_signs(shaped)
    assert signs.reference == honest_reference(shaped) and np.isfinite(signs.cap_units)


@pytest.mark.crafter
def test_real_crafter_pays_a_count_at_the_cap(tmp_path):
    # The premise of count-at-cap, in the real game: drinking at full raises collect_drink while
    # the drink stays at 9 (Crafter clamps items after the action). The cap drinker walks to water
    # and drinks, full or not.
    from workbench.data.benchmarks import load_benchmark, make_benchmark

    make_benchmark(tmp_path, episodes=1, max_steps=120, policies=["cap_drinker"], progress=False)
    [episode] = list(load_benchmark(tmp_path, rollouts=False).corpus)
    drink = episode.inventory[:, INVENTORY_ITEMS.index("drink")]
    sips = np.diff(episode.achievement_counts[:, ACHIEVEMENTS.index("collect_drink")])
    at_cap = np.flatnonzero((sips > 0) & (drink[:-1] == 9) & (drink[1:] == 9))
    assert len(at_cap) > 0
    found = loop_pay(Corpus([episode]), PAYS + np.eye(len(PAYS))[N_ITEMS + ACHIEVEMENTS.index("collect_drink")])
    assert set(at_cap) <= set(np.flatnonzero(found.cap_units))
    # only collect_drink pays here (1 a rise): the cap pay is its rises where the drink did not rise
    unrisen = (sips > 0) & (np.diff(drink) <= 0)
    assert found.cap.sum() == pytest.approx(float(sips[unrisen].sum()))
