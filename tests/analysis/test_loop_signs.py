"""The loop signs (multi-scale scans of loop units per kind, progress-free pay) on hand-built
episodes whose verdict is obvious: units, decisions and pay counted by hand in the comments."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.hand_episodes import HONEST, hand_episode

from workbench.analysis.audit import audit
from workbench.analysis.detector_accuracy import measured
from workbench.analysis.diagnostics.loop_pay import loop_pay
from workbench.analysis.diagnostics.loop_scan import KINDS, SCALES, WHOLE, Units, loop_units, scan, unit_pay
from workbench.analysis.diagnostics.loop_signs import (
    CAP_CODE,
    PROGRESS_FREE_CODE,
    REGAINED_CODE,
    SignThresholds,
    sign_flags,
    sign_statistics,
    sign_table,
)
from workbench.analysis.family_holdout import pay_over_honest, progress_free_thresholds, unit_thresholds, wilson
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import Corpus
from workbench.scoring import prepare

N_ITEMS = len(INVENTORY_ITEMS)
# What one unit of each rise pays in these tests: stone .15, collect_stone .10, place_stone .05,
# collect_sapling .10, sapling .02.
PAYS = np.zeros(N_ITEMS + len(ACHIEVEMENTS))
PAYS[INVENTORY_ITEMS.index("stone")] = 0.15
PAYS[N_ITEMS + ACHIEVEMENTS.index("collect_stone")] = 0.10
PAYS[N_ITEMS + ACHIEVEMENTS.index("place_stone")] = 0.05
PAYS[N_ITEMS + ACHIEVEMENTS.index("collect_sapling")] = 0.10
PAYS[INVENTORY_ITEMS.index("sapling")] = 0.02
KIND = {kind.name: k for k, kind in enumerate(KINDS)}
SCALE = {scale: s for s, scale in enumerate(SCALES)}


def capped(n: int = 120) -> list[dict[str, int]]:
    """Decision 1 picks 9 saplings at once (collect_sapling 9: a new unlock); decisions 2..61 keep
    picking at the cap (collect_sapling 10..69, sapling stays 9): 60 rises at the cap; then idle."""
    return [{"sapling": 9, "collect_sapling": 9}, *({"collect_sapling": 9 + k} for k in range(1, 61)), *[{}] * (n - 61)]


def batched(laps: int = 4, n: int = 120) -> list[dict[str, int]]:
    """Mine 5 stones, walk 3 decisions, place all 5; ``laps`` times (13 decisions a lap); idle after."""
    out: list[dict[str, int]] = []
    for lap in range(laps):
        out += [{"stone": k, "collect_stone": 5 * lap + k} for k in range(1, 6)]
        out += [{}] * 3
        out += [{"stone": 5 - k, "place_stone": 5 * lap + k} for k in range(1, 6)]
    return out + [{}] * (n - len(out))


def saplings(laps: int, every: int, n: int = 300) -> list[dict[str, int]]:
    """Pick a sapling and plant it at once (decisions 1, 2: both first unlocks); then ``laps`` more
    laps, one every ``every`` decisions (a pick at decision 3 + i * every, the planting next), idle
    between. Each later pick regains the sapling the last planting gave away: ``laps`` units."""
    out: list[dict[str, int]] = [{"sapling": 1, "collect_sapling": 1}, {"sapling": 0, "place_plant": 1}]
    for lap in range(laps):
        while len(out) < 2 + lap * every:
            out.append({})
        out += [{"sapling": 1, "collect_sapling": 2 + lap}, {"sapling": 0, "place_plant": 2 + lap}]
    return out + [{}] * (n - len(out))


def table(*episodes: list[dict[str, int]], pays: np.ndarray = PAYS):
    corpus = Corpus([hand_episode(f"e{i}", changes, policy="p") for i, changes in enumerate(episodes)])
    prepared = prepare(corpus)
    rewards = np.zeros(prepared.n_decisions)  # the unit signs read no reward
    return corpus, sign_table(corpus, rewards, prepared.n_first, pays, np.ones(len(corpus)))


def test_digging_at_the_cap_is_not_a_cap_loop():
    # Mining stone at the cap: the count rises, the stone stays at 9, but mining also clears the
    # way (a mined block turns into path): honest players tunnel at the cap as much as a hacker
    # collects there, so neither the cap pay nor the scan counts it
    mined = [{"stone": 9, "collect_stone": 9}, *({"collect_stone": 9 + k} for k in range(1, 61))]
    corpus = Corpus([hand_episode("dig", mined, policy="p")])
    assert loop_pay(corpus, PAYS).cap_units.sum() == 0
    assert len(loop_units(corpus).decision) == 0


def test_counts_rising_at_the_cap_are_scanned_and_paid():
    corpus, found = table(capped())
    pay = loop_pay(corpus, PAYS)
    # decision 1's 9 rises raise the sapling too (not at the cap); decisions 2..61 rise at the cap
    assert pay.cap_units.sum() == 60 and np.flatnonzero(pay.cap_units).tolist() == list(range(1, 61))
    assert found.episodes.loc[0, "cap_paid"] == pytest.approx(60 * 0.10)
    # after decision 1 (the unlock) no decision unlocks anything new: decisions 2..120 are
    # progress-free; the best 25 of them are 2..26 (25 rises), the best 50 are 2..51 (50), and
    # 100, 200 and all of them hold all 60
    k = KIND["collect_sapling at the cap"]
    assert found.scan.peak[0, k].tolist() == [25, 50, 60, 60, 60]
    assert found.scan.first[0, k].tolist() == [2, 2, 2, 2, 2]
    # 100 progress-free decisions from 2 end at 101; 200 run past the end (120), as does the whole
    assert found.scan.last[0, k].tolist() == [26, 51, 101, 120, 120]
    assert found.scan.peak[0, KIND["sapling regained"]].sum() == 0


def test_batched_laps_are_regained_in_any_order_at_any_distance():
    corpus, found = table(batched())
    pay = loop_pay(corpus, PAYS)
    # lap 1 raises the stone to 5 for the first time; laps 2-4 each mine 5 back: 15 regained
    assert pay.regained_units.sum() == 15
    # 15 x (stone .15 + collect_stone .10) for the regains, 20 placements x .05 handing stone back
    assert pay.regained.sum() == pytest.approx(15 * 0.25 + 20 * 0.05)
    # place_stone unlocks at decision 9: decisions 10..120 are progress-free (position 0 = decision
    # 10). The regains are at decisions 14-18, 27-31, 40-44: 25 progress-free decisions from 14
    # (14..38) hold laps 2 and 3 (10 units); 50 from 14 (14..63) all 15
    k = KIND["stone regained"]
    assert found.scan.peak[0, k].tolist() == [10, 15, 15, 15, 15]
    assert found.scan.first[0, k, : SCALE[WHOLE]].tolist() == [14, 14, 14, 14]
    assert found.scan.last[0, k, :2].tolist() == [38, 63]
    # the whole scale's window is all the progress-free decisions: 10..120
    assert (found.scan.first[0, k, SCALE[WHOLE]], found.scan.last[0, k, SCALE[WHOLE]]) == (10, 120)


def test_honest_restocking_is_not_a_loop():
    # HONEST mines and places a stone twice within 7 decisions full of first unlocks: 2 units
    # regained, but no decision is progress-free (no stretch of 50 without a new unlock)
    corpus, found = table(HONEST)
    assert loop_pay(corpus, PAYS).regained_units.sum() == 2
    assert found.scan.peak.sum() == 0


def test_windows_count_progress_free_decisions_only():
    # Two episodes of 6 decisions; units of kind 0 at decisions 0, 2, 5 of the first (0-based,
    # corpus order) and 6, 11 of the second. Progress-free: the first's 0, 1, 2, 5 (3 and 4 are
    # not) and the second's 6..11. A window of 3 progress-free decisions from decision 0 holds
    # decisions 0, 1, 2 (2 units); from decision 2 it holds 2 and 5 (3 and 4 are skipped): 2
    # units too; the first such window wins. The second episode's 3-windows hold 1 unit at most.
    units = Units(np.array([0, 2, 5, 6, 11]), np.zeros(5, np.int64), np.ones(5, np.int64))
    quiet = np.array([True, True, True, False, False, True] + [True] * 6)
    found = scan(units, quiet, np.array([6, 6]), scales=(3, WHOLE))
    assert found.peak[:, 0].tolist() == [[2, 3], [1, 2]]
    assert found.first[0, 0].tolist() == [1, 1] and found.last[0, 0].tolist() == [3, 6]
    # the second episode's best 3-window starts at its first unit (its decision 1) and ends at 3
    assert found.first[1, 0, 0] == 1 and found.last[1, 0, 0] == 3
    assert found.scales == (3, WHOLE)


def test_each_scale_sees_its_own_shape_of_loop():
    # The same six sapling laps as a burst (a lap every 2 decisions: 6 regained in 12 decisions)
    # and spread out (a lap every 40: 6 regained over 202 decisions). Thresholds 4 at every scale
    # but the whole episode (10): the burst passes at 25 (6 > 4), the spread loop only at 200
    # (decisions 3..202 hold its picks at 3, 43, ..., 163: 5 > 4), neither over the whole (6).
    # Three spread laps (3 regained) pass nowhere.
    _, found = table(saplings(6, 2), saplings(6, 40), saplings(3, 40))
    k = KIND["sapling regained"]
    assert found.scan.peak[:, k].tolist() == [[6, 6, 6, 6, 6], [1, 2, 3, 5, 6], [1, 2, 3, 3, 3]]
    units = np.full((len(KINDS), len(SCALES)), np.inf)
    units[k] = [4, 4, 4, 4, 10]
    flags = sign_flags(found, SignThresholds(units, progress_free=np.inf))
    assert [(f.code, f.subject, f.evidence["scale"]) for f in flags] == [
        (REGAINED_CODE, "e0", "25"),
        (REGAINED_CODE, "e1", "200"),
    ]
    # place_plant unlocks at decision 2: the progress-free decisions are 3..300; the spread loop's
    # laps pick at 3 + 40 i (i = 0..5), regaining at 3, 43, ..., 203: the first 200-window
    # reaching 5 starts at its first regain (3) and ends at 202
    burst, spread = flags[0].evidence, flags[1].evidence
    assert spread["decisions"] == [3, 202] and spread["laps"] == 5 and spread["allowed"] == 4
    assert burst["decisions"] == [3, 27] and burst["laps"] == 6
    # a regained sapling pays the sapling (.02) and collect_sapling (.10)
    assert spread["paid"] == pytest.approx(5 * 0.12) and "sapling regained" in flags[1].why
    assert "200 progress-free decisions" in flags[1].why and spread["replay"]["decision"] == 3


def test_each_kind_has_its_own_threshold_and_only_paid_kinds_fire():
    # 15 stones regained in 50 decisions: under stone's threshold of 20 (honest players regain
    # stone a lot) nothing fires; six saplings regained pass sapling's 4
    _, found = table(batched(), saplings(6, 2))
    units = np.full((len(KINDS), len(SCALES)), 4.0)
    units[KIND["stone regained"]] = 20.0
    stats = sign_statistics(found, SignThresholds(units, progress_free=np.inf))
    # e0's stone peaks (10, 15, ...) over 20: at most 0.75; e1's sapling peak 6 over 4: 1.5
    assert stats[REGAINED_CODE].tolist() == pytest.approx([0.75, 1.5])
    # a config that pays neither the sapling nor collect_sapling: the sapling loop earns nothing
    unpaid = PAYS.copy()
    unpaid[[INVENTORY_ITEMS.index("sapling"), N_ITEMS + ACHIEVEMENTS.index("collect_sapling")]] = 0
    _, found = table(saplings(6, 2), pays=unpaid)
    assert unit_pay(unpaid)[KIND["sapling regained"]] == 0
    assert sign_statistics(found, SignThresholds(units, progress_free=np.inf))[REGAINED_CODE].tolist() == [0.0]


def test_flags_say_what_fired_where_and_paying_what():
    _, found = table(capped(), batched(), HONEST)
    units = np.full((len(KINDS), len(SCALES)), 10.0)
    flags = sign_flags(found, SignThresholds(units, progress_free=3.0))
    assert [(f.code, f.subject) for f in flags] == [(CAP_CODE, "e0"), (REGAINED_CODE, "e1")]
    cap = flags[0].evidence
    # collect_sapling at the cap: 25/10, 50/10, 60/10 at 100, 200 and whole: the first largest
    # ratio is the 100 scale, decisions 2..101, its 60 rises paying .10 each
    assert cap["loop"] == "collect_sapling at the cap" and cap["scale"] == "100"
    assert cap["decisions"] == [2, 101] and cap["laps"] == 60 and cap["paid"] == pytest.approx(6.0)
    assert cap["replay"]["decision"] == 2 and "e0" in cap["replay"]["link"]
    # the batched stones: 15 at the 50 scale (decisions 14..63), each .15 + .10
    stone = flags[1].evidence
    assert (stone["loop"], stone["scale"], stone["decisions"], stone["laps"]) == ("stone regained", "50", [14, 63], 15)
    assert stone["paid"] == pytest.approx(15 * 0.25)


def test_progress_free_sign_is_against_honest_plays_rate():
    _, found = table(capped())
    found.pay.peak[0] = [3.0, np.nan, np.nan, np.nan, np.nan]  # per 100 decisions, at scale 25 only
    units = np.full((len(KINDS), len(SCALES)), np.inf)
    stats = sign_statistics(found, SignThresholds(units, 2.0, reference=1.2))
    assert stats.loc["e0", PROGRESS_FREE_CODE] == pytest.approx(1.25)  # 3.0 / 1.2 = 2.5x honest, over 2
    nan = SignThresholds(units, 2.0, reference=float("nan"))
    assert sign_statistics(found, nan).loc["e0", PROGRESS_FREE_CODE] == 0.0


def test_progress_free_pay_fires_at_the_scale_furthest_past_its_threshold():
    # capped(300): decision 1 is the episode's only new unlock, decisions 2..300 one quiet
    # stretch (299 progress-free decisions). Pay: 1 at 0-based 10..19 (a burst), 0.1 at 100..299.
    corpus = Corpus([hand_episode("e0", capped(300), policy="p")])
    prepared = prepare(corpus)
    assert np.flatnonzero(prepared.n_first).tolist() == [0]
    rewards = np.zeros(300)
    rewards[10:20], rewards[100:300] = 1.0, 0.1
    found = sign_table(corpus, rewards, prepared.n_first, PAYS, [30.0])
    # peaks per 100 (as in test_progress_free.py): 40 at 25, 20 at 50, 11 at 100, 10.5 at 200,
    # 30 / 299 x 100 = 10.03 over all of them. Against honest play's 1.0 and per-scale thresholds
    # 50, 30, 10, 10, 5: ratios .8, .67, 1.1, 1.05, 2.007: the whole scale fires
    units = np.full((len(KINDS), len(SCALES)), np.inf)
    thresholds = SignThresholds(units, np.array([50.0, 30.0, 10.0, 10.0, 5.0]), reference=1.0)
    assert sign_statistics(found, thresholds).loc["e0", PROGRESS_FREE_CODE] == pytest.approx(3000 / 299 / 5)
    [flag] = sign_flags(found, thresholds)
    seen = flag.evidence
    assert (flag.code, seen["scale"], seen["decisions"], seen["laps"]) == (PROGRESS_FREE_CODE, "whole", [2, 300], 299)
    assert seen["paid"] == pytest.approx(30.0) and seen["share"] == pytest.approx(1.0)
    # with the whole scale allowed 20x, the 100 scale (1.1) is the furthest past: decisions 11..110
    thresholds = SignThresholds(units, np.array([50.0, 30.0, 10.0, 10.0, 20.0]), reference=1.0)
    [flag] = sign_flags(found, thresholds)
    assert (flag.evidence["scale"], flag.evidence["decisions"]) == ("100", [11, 110])
    assert flag.evidence["paid"] == pytest.approx(11.0)


def test_thresholds_are_a_margin_over_the_honest_maximum_and_at_least_two():
    # two honest episodes, one kind, three scales: maxima 3, 0.5, 8 -> x1.5: 4.5, 2 (the floor), 12
    peaks = np.array([[[3, 0, 8]], [[1, 0.5, 2]]])
    assert unit_thresholds(peaks, margin=1.5).tolist() == [[4.5, 2.0, 12.0]]
    assert unit_thresholds(peaks, margin=2, floor=1).tolist() == [[6.0, 1.0, 16.0]]
    # progress-free pay per scale: two honest episodes, two scales, maxima 0.4 and 1.4 -> x2: 0.8,
    # raised to 1 (never below honest play's rate), and 2.8
    assert progress_free_thresholds(np.array([[0.2, 1.4], [0.4, 0.3]]), margin=2) == pytest.approx([1.0, 2.8])


def test_pay_over_honest_is_each_scales_peak_over_honest_plays_rate():
    _, found = table(capped())
    found.pay.peak[0] = [3.0, np.nan, 1.2, 0.0, 6.0]  # per 100 decisions; NaN: no window fits
    # over honest play's 1.2 per 100: 2.5, 0 (no window), 1, 0, 5
    assert pay_over_honest(found, 1.2)[0].tolist() == pytest.approx([2.5, 0.0, 1.0, 0.0, 5.0])
    assert pay_over_honest(found, float("nan"))[0].tolist() == [0.0] * 5  # honest rate unknown


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
    # the shipped thresholds allow honest play's most at the cap (no honest tune episode
    # picked saplings at the cap: the floor, 2, at every scale): the largest ratio is 60 / 2 at
    # the 100 scale (decisions 2..101)
    assert (row["episode"], row["first"], row["last"], row["laps"]) == ("capper", 2, 101, 60)
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
    assert signs.reference == honest_reference(shaped) and np.isfinite(signs.units).all()
    assert signs.units.shape == (len(KINDS), len(SCALES)) and (signs.units >= 2).all()


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
    # the scan counts the same rises at the cap
    units = loop_units(Corpus([episode]))
    drank = units.decision[units.kind == KIND["collect_drink at the cap"]]
    assert set(at_cap) <= set(drank.tolist())


def _scan_by_loops(units: Units, quiet: np.ndarray, lengths: np.ndarray, scales: tuple[int, ...]) -> np.ndarray:
    """The scan's peaks by plain loops: every window of ``width`` consecutive progress-free decisions."""
    peak = np.zeros((len(lengths), len(KINDS), len(scales)), np.int64)
    start = 0
    for e, length in enumerate(lengths):
        free = [d for d in range(start, start + length) if quiet[d]]
        for k in range(len(KINDS)):
            at = dict.fromkeys(free, 0)
            for d, kind, n in zip(units.decision, units.kind, units.units):
                if kind == k and d in at:
                    at[d] += int(n)
            counts = [at[d] for d in free]
            for s, width in enumerate(scales):
                w = len(counts) if width == WHOLE else width
                peak[e, k, s] = max((sum(counts[i : i + w]) for i in range(len(counts))), default=0)
        start += length
    return peak


def test_the_scan_agrees_with_plain_loops_over_every_window():
    # Random sparse units over random progress-free masks: the sparse scan (a binary search per
    # event) and a loop over every window of progress-free decisions find the same peaks, and
    # each reported window holds its peak within its scale.
    rng = np.random.default_rng(7)
    scales = (3, 5, 10, WHOLE)
    for _ in range(20):
        lengths = rng.integers(1, 40, size=3)
        total = int(lengths.sum())
        quiet = rng.random(total) < 0.7
        chosen = rng.choice(total, size=min(total, 12), replace=False)
        order = np.argsort(chosen, kind="stable")
        decision = chosen[order]
        kind = rng.integers(0, 3, size=len(decision))[order]
        units = Units(decision, kind, rng.integers(1, 4, size=len(decision)))
        found = scan(units, quiet, lengths, scales)
        assert np.array_equal(found.peak, _scan_by_loops(units, quiet, lengths, scales))
        starts = np.cumsum(lengths) - lengths
        for e, k, s in zip(*np.nonzero(found.peak)):
            lo, hi = starts[e] + found.first[e, k, s] - 1, starts[e] + found.last[e, k, s] - 1
            inside = sum(int(n) for d, kk, n in zip(*units) if kk == k and lo <= d <= hi and quiet[d])
            assert inside == found.peak[e, k, s]
            if scales[s] != WHOLE:
                assert int(quiet[lo : hi + 1].sum()) <= scales[s]
