"""Detector accuracy: rates, stratified bootstrap, thresholds and time-to-flag by hand, and the
detectors' statistics on hand-built episodes whose verdict is obvious."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers.hand_episodes import hand_episode

from workbench.analysis.audit import audit
from workbench.analysis.detector_accuracy import (
    DETECTORS,
    MEASURED_PATH,
    bootstrap_rates,
    choose_threshold,
    detector_scores,
    gating,
    measured,
    meets_target,
    rates,
    shortfall,
    time_to_flag,
)
from workbench.analysis.diagnostics.loops import LOOP_CODE, LOOPS
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import DiagnosisError

T, F = True, False
CONFIG = RewardConfig(strategy="per_achievement", weights={}, indicator_lambda=1.0)


def stone_loop(laps: int) -> list[dict[str, int]]:
    """Mine a stone, place it back, ``laps`` times (one decision each)."""
    changes = []
    for lap in range(1, laps + 1):
        changes += [{"stone": 1, "collect_stone": lap}, {"stone": 0, "place_stone": lap}]
    return changes


def test_rates_by_hand():
    precision, recall, fpr = rates(np.array([T, T, F, F, T]), np.array([T, F, T, F, T]))
    # flagged exploiting 0 and 4, flagged honest 1; 3 exploiting, 2 honest episodes
    assert (precision, recall, fpr) == pytest.approx((2 / 3, 2 / 3, 1 / 2))
    precision, recall, fpr = rates(np.array([F, F]), np.array([T, F]))
    assert math.isnan(precision) and recall == 0 and fpr == 0


def test_a_perfect_detector_stays_perfect_in_every_resample():
    exploit = np.array([T, T, T, F, F, F])
    boot = bootstrap_rates(exploit, exploit, np.array(list("aabbcc")), reps=50, seed=1)
    assert boot.shape == (50, 3)
    assert (boot == [1.0, 1.0, 0.0]).all()


def test_one_episode_strata_resample_to_themselves():
    flagged, exploit = np.array([T, F, T, F]), np.array([T, T, F, F])
    boot = bootstrap_rates(flagged, exploit, np.array(list("abcd")), reps=20)
    assert (boot == [0.5, 0.5, 0.5]).all()  # 1 of 2 flags right, 1 of 2 hackers, 1 of 2 honest
    with pytest.raises(DiagnosisError, match="reps must be at least 1"):
        bootstrap_rates(flagged, exploit, np.array(list("abcd")), reps=0)


def test_the_threshold_is_the_smallest_within_the_false_positive_budget():
    stat = np.array([0.1, 0.5, 0.3, 2.0, 3.0])
    exploit = np.array([F, F, F, T, T])
    assert choose_threshold(stat, exploit, max_fpr=0.02) == 0.5  # above every honest score
    assert choose_threshold(stat, exploit, max_fpr=0.34) == 0.3  # one honest flag of three allowed


def test_time_to_flag_counts_episodes_of_each_run_up_to_its_first_flag():
    runs = np.array(list("aaabcc"))
    assert time_to_flag(np.array([F, F, T, T, F, F]), runs) == {"a": 3, "b": 1, "c": None}


def test_a_stone_loop_scores_as_farming_and_one_wood_does_not():
    corpus = Corpus(
        [
            hand_episode("loop", stone_loop(20), policy="hacker"),
            hand_episode("wood", [{"wood": 1, "collect_wood": 1}], policy="honest"),
        ]
    )
    stats = detector_scores(corpus, CONFIG)
    # loop: 20 laps of place_stone/collect_stone, past that loop's allowance by 20 - allowed.
    assert stats.loc["loop", LOOP_CODE] == 20 - LOOPS[0].allowed
    assert stats.loc["wood", LOOP_CODE] == 0
    # loop: credits collect_stone + place_stone = 2.0; each lap pays stone .15 + collect_stone
    # count .10 + place_stone count .05 = .30, 20 laps 6.0. Its loop pay (loop_signs): the stone
    # regained in laps 2-20, 19 x (.15 + .10) = 4.75, and 20 placements handing it back x .05 = 1.0.
    assert stats.loc["loop", "repeats-outweigh-credits"] == pytest.approx(5.75 / 2.0)
    assert stats.loc["loop", "resource-shaping-dominates"] == pytest.approx(6.0 / 8.0)
    assert stats.loc["loop", "component-dominates"] == pytest.approx(20 * 0.15 / 8.0)  # the stone item
    # wood: credit 1.0, wood .10 and the collect_wood count .08 once each: no repeats.
    assert stats.loc["wood", "repeats-outweigh-credits"] == 0
    assert stats.loc["wood", "resource-shaping-dominates"] == pytest.approx(0.18 / 1.18)
    assert stats.loc["wood", "component-dominates"] == pytest.approx(1.0 / 1.18)


def test_consistent_has_no_dominance_to_score():
    corpus = Corpus([hand_episode("loop", stone_loop(3), policy="hacker")])
    stats = detector_scores(corpus, RewardConfig(strategy="consistent"))
    assert stats.loc["loop"].tolist() == [0.0, 0.0, 0.0, 0.0]  # consistent pays no loop either


def test_measured_reads_the_shipped_measurements_per_config_else_pooled():
    table = json.loads(MEASURED_PATH.read_text())
    code = "repeats-outweigh-credits"
    shipped = measured(code, "upstream_shaped")
    assert shipped is not None and shipped["config"] == "upstream_shaped"
    assert shipped["precision"] == table["configs"]["upstream_shaped"][code]["precision"]
    mine = measured(code, "my_own_config")
    assert mine is not None and mine["config"] == "pooled"
    assert mine["recall"] == table["pooled"][code]["recall"]
    assert measured("unknown-name", "upstream_shaped") is None  # dead entries and the like judge configs


def test_audit_json_carries_each_flags_measured_precision():
    corpus = Corpus([hand_episode("loop", stone_loop(20), policy="hacker")])
    config = RewardConfig(strategy="per_achievement", weights={"collect_stone": 1.0, "craft_wood_pickaxe": 1.0})
    report = audit(corpus, {"mine": config}).to_json()
    [mine] = report["configs"]
    found = {flag["code"]: flag for flag in mine["flags"] + mine["notes"]}
    for code in (LOOP_CODE, "repeats-outweigh-credits"):
        assert found[code]["measured"] == measured(code, "mine")
        assert found[code]["measured"]["config"] == "pooled"
        assert (found[code] in mine["flags"]) == found[code]["measured"]["meets_target"]  # below the bar: a note
    dead = [flag for flag in mine["flags"] if flag["section"] == "dead entries"]
    assert dead and all(flag["measured"] is None for flag in dead)


def test_meets_target_follows_the_issues_bar():
    good = {"precision": 0.96, "fpr": 0.01, "recall": 0.91}
    assert meets_target("repeats-outweigh-credits", good)
    # recall binds the farming detectors together (the leave-one-family-out table), not one flag
    assert meets_target(LOOP_CODE, {**good, "recall": 0.3})
    assert not meets_target(LOOP_CODE, {**good, "fpr": 0.0213})  # one honest episode in 47
    assert meets_target("component-dominates", {**good, "recall": 0.1})
    assert not meets_target("component-dominates", {**good, "fpr": 0.03})
    assert not meets_target("component-dominates", {**good, "precision": None})


def test_a_detector_flags_only_when_its_pooled_row_meets_the_bar():
    table = json.loads(MEASURED_PATH.read_text())
    for code in DETECTORS:
        row = table["pooled"][code]
        assert gating(code) == meets_target(code, row)
        assert (shortfall(code) == "") == gating(code)  # a note says where it falls short
    assert gating("unknown-achievement") and gating("count-shaping-estimated")  # config checks always flag
