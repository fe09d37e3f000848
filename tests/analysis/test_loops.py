"""The loop detector (``farming-loop``) on hand-built episodes whose verdict is obvious: laps,
decisions and pay counted by hand; the flag's evidence and replay link; notes vs flags in audit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers.hand_episodes import HONEST, hand_episode

from workbench.analysis.audit import audit
from workbench.analysis.detector_accuracy import choose_allowances, gating
from workbench.analysis.diagnostics.loop_table import loop_table
from workbench.analysis.diagnostics.loops import (
    LOOP_CODE,
    LOOPS,
    loop_flags,
    loop_laps,
    tracks,
)
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import Corpus, Episode
from workbench.data.episodes.model import reset_state_arrays
from workbench.data.storage import load_corpus, save_corpus

PAYING = RewardConfig(strategy="per_achievement", weights={}, indicator_lambda=1.0)
HALF = RewardConfig(strategy="per_achievement", weights={}, indicator_lambda=0.5)
CONSISTENT = RewardConfig(strategy="consistent")
LOOP = {loop.name: loop for loop in LOOPS}
STONE = LOOP["place_stone/collect_stone"]
DRINK = LOOP["drink refilled by day"]


def stone_loop(laps: int) -> list[dict[str, int]]:
    """Mine a stone (odd decisions), place it back (even ones), ``laps`` times."""
    changes = []
    for lap in range(1, laps + 1):
        changes += [{"stone": 1, "collect_stone": lap}, {"stone": 0, "place_stone": lap}]
    return changes


def sips(times: int, wait: int) -> list[dict[str, int]]:
    """Drink falls from 9 to 8 and is drunk back ``wait`` decisions later, ``times`` times."""
    changes: list[dict[str, int]] = []
    for sip in range(1, times + 1):
        changes += [{"drink": 8}] + [{}] * (wait - 1) + [{"drink": 9, "collect_drink": sip}]
    return changes


def table(*episodes: Episode, config: RewardConfig = PAYING):
    corpus = Corpus(list(episodes))
    return corpus, loop_table(corpus, config, [1.0] * len(corpus))


def test_a_stone_loop_of_twenty_laps_is_flagged_with_what_it_paid():
    corpus, found = table(hand_episode("hacker/run 1", stone_loop(20), policy="hacker"))
    [row] = found.itertuples(index=False)
    # laps: 20 mine/place pairs, from decision 1 (the first mining) to 40 (the last placing)
    assert (row.loop, row.laps, row.first, row.last) == ("place_stone/collect_stone", 20, 1, 40)
    # each lap: the stone item .15 + the collect_stone count .10 + the place_stone count .05
    assert row.paid == pytest.approx(20 * 0.30)
    assert row.flagged and 20 > STONE.allowed
    [flag] = loop_flags(found)
    assert (flag.section, flag.code, flag.subject) == ("farming", LOOP_CODE, "hacker/run 1")
    assert flag.evidence["laps"] == 20 and flag.evidence["decisions"] == [1, 40]
    assert flag.evidence["paid"] == pytest.approx(6.0)
    assert flag.evidence["replay"] == {
        "episode": "hacker/run 1",
        "decision": 1,
        "link": "?view=replayer&episode=hacker%2Frun+1&decision=1",  # a space is + in a query
    }
    # lambda scales what the loop paid; laps do not change
    _, half = table(hand_episode("hacker", stone_loop(20), policy="hacker"), config=HALF)
    assert half["paid"].tolist() == pytest.approx([3.0])


def test_honest_play_runs_the_stone_loop_twice_and_is_not_flagged():
    corpus, found = table(hand_episode("honest", HONEST, policy="honest"))
    stone = found[found["loop"] == STONE.name].iloc[0]
    # HONEST mines stone 3 times and places it twice: 2 laps, decisions 2 (first mining) to 5
    assert (stone["laps"], stone["first"], stone["last"]) == (2, 2, 5)
    assert not found["flagged"].any() and loop_flags(found) == []


def test_stone_carried_away_and_placed_later_is_no_lap():
    # mine 5 stones on decisions 1..5, walk 10 decisions, place them on 16..20
    changes = [{"stone": n, "collect_stone": n} for n in range(1, 6)] + [{}] * 10
    changes += [{"stone": 5 - n, "place_stone": n} for n in range(1, 6)]
    assert len(loop_laps(hand_episode("builder", changes, policy="honest"), STONE)) == 0
    # placing each stone two decisions after mining it is the loop: 5 laps
    at_once = [
        change for n in range(1, 6) for change in ({"stone": 1, "collect_stone": n}, {}, {"stone": 0, "place_stone": n})
    ]
    assert loop_laps(hand_episode("looper", at_once, policy="hacker"), STONE).tolist() == [
        [3 * n + 1, 3 * n + 3] for n in range(5)
    ]


def test_consistent_pays_no_loop_so_nothing_is_flagged():
    _, found = table(hand_episode("hacker", stone_loop(20), policy="hacker"), config=CONSISTENT)
    assert found["laps"].tolist() == [20] and found["paid"].tolist() == [0.0]
    assert not found["flagged"].any()


def test_a_counter_refilled_at_once_is_a_loop_and_one_refilled_late_is_not():
    prompt = hand_episode("guzzler", sips(12, wait=1), policy="hacker")
    laps = loop_laps(prompt, DRINK)
    # the drop is decision 1, 3, 5, ...; the sip right after it 2, 4, 6, ...
    assert laps.tolist() == [[2 * k + 1, 2 * k + 2] for k in range(12)]
    late = hand_episode("thirsty", sips(12, wait=30), policy="honest")
    assert len(loop_laps(late, DRINK)) == 0  # back at 9 thirty decisions later: no prompt refill
    _, found = table(prompt, late)
    [row] = found.itertuples(index=False)
    # 12 laps of drink .07 + the collect_drink count .06
    assert (row.episode, row.laps, row.flagged) == ("guzzler", 12, True)
    assert row.paid == pytest.approx(12 * 0.13)


def meals(times: int, wait: int) -> list[dict[str, int]]:
    """Food falls from 9 to 8 and a cow brings it back to 9 ``wait`` decisions later, ``times`` times."""
    changes: list[dict[str, int]] = []
    for meal in range(1, times + 1):
        changes += [{"food": 8}] + [{}] * (wait - 1) + [{"food": 9, "eat_cow": meal}]
    return changes


def test_food_back_within_a_hunger_period_is_a_loop_and_eating_when_two_below_is_not():
    food = LOOP["food refilled"]
    # a point of food lasts 26 decisions awake (Crafter's hunger passes 25): a player back at 9
    # 28 decisions after leaving it ate at 8 (window 30); one that waits for 7 is back 26 + the
    # walk to a cow later, 35 here: no lap
    assert len(loop_laps(hand_episode("eater", meals(4, wait=28), policy="hacker"), food)) == 4
    assert len(loop_laps(hand_episode("thirsty", meals(4, wait=35), policy="honest"), food)) == 0


def sleeper(start: int, asks: bool, laps: int = 8) -> Episode:
    """``start`` decisions of noop at full energy, then ``laps`` laps of 15 decisions: 5 at full
    energy (asking to sleep, or not), the fifth of which energy drops in, then 10 asleep,
    back at 9 at the lap's end (wake_up rises)."""
    n = start + 15 * laps
    inventory, counts = (np.repeat(array[None], n + 1, 0) for array in reset_state_arrays())
    energy, wake = INVENTORY_ITEMS.index("energy"), ACHIEVEMENTS.index("wake_up")
    inventory[:, energy] = 9
    actions = [["noop"]] * start
    for lap in range(laps):
        drop = start + 15 * lap + 5  # the decision energy drops in (state drop is 8)
        inventory[drop : drop + 10, energy] = 8
        counts[drop + 10 :, wake] = lap + 1
        actions = actions + [["sleep" if asks else "noop"]] * 5 + [["sleep"]] * 10
    return Episode("s", inventory, counts, actions, np.zeros(n), np.zeros(n, bool), metadata={"policy": "p"})


def test_sleep_asked_for_by_day_is_a_loop_and_a_night_in_bed_is_not():
    energy = LOOP["energy refilled by day (sleep asked for at full energy)"]
    # by day (the first 147 steps): 8 laps, from each drop (decision 5, 20, ...) to 10 later
    assert loop_laps(sleeper(0, asks=True), energy).tolist() == [[15 * k + 5, 15 * k + 15] for k in range(8)]
    assert len(loop_laps(sleeper(0, asks=False), energy)) == 0  # tired first, then slept: not asked for
    assert len(loop_laps(sleeper(150, asks=True), energy)) == 0  # dark from about step 147 to 273


def test_audit_flags_a_loop_above_the_bar_and_notes_the_rest():
    corpus = Corpus([hand_episode("hacker", stone_loop(20), policy="hacker")])
    found = audit(corpus, {"paying": PAYING})
    codes = set(found.flags["code"]) | set(found.notes["code"])
    assert {LOOP_CODE, "repeats-outweigh-credits"} <= codes
    assert all(gating(code) for code in found.flags["code"])
    assert not any(gating(code) for code in found.notes["code"])
    assert found.clean == found.flags.empty  # notes never make an audit unclean
    [loop] = [row for row in (found.flags if gating(LOOP_CODE) else found.notes).itertuples() if row.code == LOOP_CODE]
    assert loop.evidence["replay"]["link"] == "?view=replayer&episode=hacker&decision=1"


def test_stored_columns_and_episodes_give_the_same_laps(tmp_path):
    # several actions per decision, sleep among them: the columns' per-decision reading must match
    episode = sleeper(0, asks=True)
    episode.actions[3] = ["noop", "sleep", "move_left"]
    episodes = [
        episode,
        hand_episode("looper", stone_loop(12), policy="hacker"),
        hand_episode("guzzler", sips(6, 1), policy="p"),
    ]
    save_corpus(Corpus(episodes), tmp_path / "c")
    stored = load_corpus(tmp_path / "c")
    for track, original in zip(tracks(stored), episodes):
        assert track.steps.tolist() == [len(actions) for actions in original.actions]
        for loop in LOOPS:
            assert loop_laps(track, loop).tolist() == loop_laps(original, loop).tolist(), loop.name
    # and the same pay: a stone placed back is a drop of the stone item, which pays nothing
    in_memory = loop_table(Corpus(episodes), PAYING, [1.0] * 3)
    pd.testing.assert_frame_equal(loop_table(stored, PAYING, [1.0] * 3), in_memory)
    assert in_memory.loc[in_memory["episode"] == "looper", "paid"].tolist() == pytest.approx([12 * 0.30])


def test_allowances_are_twice_the_most_honest_tune_laps_per_family():
    names = [loop.name for loop in LOOPS]
    laps = pd.DataFrame(0, index=["h1", "h2", "x"], columns=names)
    laps.loc["h1", STONE.name] = 3
    laps.loc["h2", "make_wood_pickaxe again"] = 2  # the tools share one allowance
    laps.loc["x", STONE.name] = 50  # a hacker's laps never raise an allowance
    chosen = {loop.name: loop.allowed for loop in choose_allowances(laps, np.array([False, False, True]))}
    assert chosen[STONE.name] == 6
    assert chosen["make_wood_pickaxe again"] == chosen["make_iron_sword again"] == 4
    assert chosen["place_table again"] == 2 and chosen[DRINK.name] == 2  # never run: the floor of 2
