"""The round-2 blind exploit families and honest players: their loop goals on hand-built maps, real episodes."""

from __future__ import annotations

import crafter
import numpy as np
import pytest

from workbench.data.benchmarks.roster import EXPLOIT, HELD_OUT_OF_DESIGN, HONEST, HONEST_HELD_OUT, entry
from workbench.data.policies.base import PolicyInput, policy_input_from
from workbench.data.policies.blind import BlindPolicy
from workbench.data.policies.blind2 import (
    BLIND2_HONEST,
    BLIND2_LOOPS,
    burrow,
    herd,
    journey,
    medley,
    patrol,
    roadside,
    tithe,
    workshop,
)
from workbench.data.policies.navigation import IDS, Grid, Situation

ACTIONS = list(crafter.constants.actions)


def situation(cells: dict[tuple[int, int], str], pos=(10, 10), facing=(1, 0), placed=0, **inventory) -> Situation:
    """A 20x20 grass world by day with ``cells`` drawn in, the player at ``pos`` facing right,
    holding a wood pickaxe, having placed ``placed`` stones so far: what a goal sees."""
    semantic = np.full((20, 20), IDS["grass"], dtype=np.int32)
    for cell, name in cells.items():
        semantic[cell] = IDS[name]
    semantic[pos] = IDS["player"]
    inv = {name: info["initial"] for name, info in crafter.constants.items.items()}
    inv.update(wood_pickaxe=1, **inventory)
    counts = dict.fromkeys(crafter.constants.achievements, 0)
    counts["place_stone"] = placed
    obs = PolicyInput(
        image=np.zeros((64, 64, 3), np.uint8),
        inventory=inv,
        achievements=counts,
        semantic=semantic,
        player_pos=pos,
        facing=facing,
        step=30,
        max_actions=1,
    )
    return Situation(obs, Grid(semantic))


def hacker(name: str, seed: int = 0) -> BlindPolicy:
    policy = BLIND2_LOOPS[name].build(np.random.default_rng(seed))
    assert isinstance(policy, BlindPolicy)
    return policy


def test_the_pilgrim_lays_a_stone_on_the_road_only_after_its_steps_and_mines_it_back():
    agent = hacker("pilgrim")
    assert roadside(agent, situation({}, stone=1)) is None  # no step walked yet (3-6 due)
    step = journey(agent, situation({}, stone=1))
    assert step is not None and len(step) == 1 and step[0].startswith("move_")  # one step at a time
    (wx, wy) = agent.memory["waypoint"]
    assert 15 <= abs(wx - 10) + abs(wy - 10) <= 30
    agent.memory["walked"] = 6  # the most steps a lap waits for
    assert roadside(agent, situation({}, stone=1)) == ["place_stone"]  # grass ahead: open ground
    agent.looping.append(True)
    # It placed one (the count rose in its own decision) and faces it: mine it back.
    assert roadside(agent, situation({(11, 10): "stone"}, placed=1)) == ["do"]
    agent.looping.append(True)
    assert roadside(agent, situation({(11, 10): "path"}, placed=1, stone=1)) is None  # walked 0 again


def test_the_medley_does_one_act_of_each_payer_a_lap():
    agent = hacker("medley")
    assert medley(agent, situation({}, stone=0)) is None  # no stone yet: ``has_stone`` first
    assert medley(agent, situation({}, stone=1)) == ["place_stone"]  # 1st act: stone, on the grass ahead
    agent.looping.append(True)
    assert medley(agent, situation({(11, 10): "stone"}, placed=1)) == ["do"]  # ... mined back
    agent.looping.append(True)
    # 2nd act: a sip (drink below 9, water ahead), though the stone is in hand again.
    assert medley(agent, situation({(11, 10): "water"}, placed=1, stone=1, drink=5)) == ["do"]
    agent.looping.append(True)
    assert medley(agent, situation({}, placed=1, stone=1)) == ["do"]  # 3rd: a sapling try on the grass ahead
    agent.looping.append(True)
    assert medley(agent, situation({(11, 10): "tree"}, placed=1, stone=1)) == ["do"]  # 4th: a chop
    agent.looping.append(True)
    assert medley(agent, situation({}, placed=1, stone=1)) == ["place_stone"]  # the next lap


def test_the_medley_skips_an_act_out_of_reach_instead_of_repeating_another():
    agent = hacker("medley")
    agent.memory["turn"] = 1  # the sip's turn, but drink is full: the sapling try comes next
    assert medley(agent, situation({}, stone=1)) == ["do"]
    assert agent.memory["turn"] == 3


def test_the_tithe_plays_one_lap_when_due_then_waits_7_to_12_decisions():
    agent = hacker("tithe")
    assert tithe(agent, situation({}, stone=1)) is None  # decision 0: the first lap is due at 7-12
    agent.looping.extend([False] * 12)
    assert tithe(agent, situation({}, stone=1)) == ["place_stone"]
    assert 12 + 7 <= agent.memory["due"] <= 12 + 12
    agent.looping.append(True)
    assert tithe(agent, situation({(11, 10): "stone"}, placed=1)) == ["do"]
    agent.looping.append(True)
    assert tithe(agent, situation({(11, 10): "water"}, placed=1, drink=5)) is None  # not due again yet


def test_the_tithe_never_mines_a_stone_another_goal_laid():
    agent = hacker("tithe")
    agent.looping.extend([False] * 12)  # due, but the stone ahead came from an honest goal
    assert tithe(agent, situation({(11, 10): "stone"}, placed=1, stone=0)) is None


def test_the_tunneller_buries_stone_from_6_on_and_never_mines_what_it_buried():
    agent = hacker("tunneller")
    assert burrow(agent, situation({(11, 10): "path"}, stone=6)) == ["place_stone"]
    agent.looping.append(True)
    rock = {(11, 10): "stone", (9, 10): "stone"}
    # The stone ahead is the one it buried: it turns to the other one (left) instead.
    assert burrow(agent, situation(rock, placed=1, stone=5)) == ["move_left", "do"]
    assert agent.memory["buried"] == {(11, 10)}
    # Coal within reach comes first, stone in between or not.
    assert burrow(agent, situation({**rock, (10, 11): "coal"}, placed=1, stone=5)) == ["move_down", "do"]


def test_the_workshop_places_a_new_table_for_every_tool():
    agent = hacker("workshop")
    # Holding a wood pickaxe only, the fewest held is the wood sword (1 wood); with no table it
    # also needs the table's 2 wood: chop first.
    assert workshop(agent, situation({(11, 10): "tree"}, wood=2)) == ["do"]
    assert workshop(agent, situation({}, wood=3)) == ["place_table"]
    table = {(11, 10): "table"}
    assert workshop(agent, situation(table, wood=3)) == ["make_wood_sword"]
    assert agent.memory["tables"] == {(11, 10)}
    plan = workshop(agent, situation(table, wood=3))  # that table is spent: a new one
    assert plan is not None and plan[-1] == "place_table"


def test_the_honest_players_herd_and_patrol():
    agent = BLIND2_HONEST["cowherd"](np.random.default_rng(0))
    assert herd(agent, situation({(13, 10): "cow"})) is None  # a cow within 5: nothing to do
    assert herd(agent, situation({(18, 10): "cow"})) == ["move_right"]  # 8 away: one step after it
    sentry = BLIND2_HONEST["sentry"](np.random.default_rng(0))
    zombie = {(11, 10): "zombie"}
    assert patrol(sentry, situation(zombie, wood_sword=1)) == ["do"]
    assert patrol(sentry, situation(zombie, wood_sword=1, health=7)) is None  # below 8: no hunting
    assert patrol(sentry, situation(zombie)) is None  # unarmed


def test_the_round_2_families_and_players_are_registered_held_out_and_labelled():
    assert {e.name for e in HELD_OUT_OF_DESIGN} >= set(BLIND2_LOOPS)
    assert {e.name for e in HONEST_HELD_OUT} >= set(BLIND2_HONEST)
    for name in BLIND2_LOOPS:
        assert entry(name).label == EXPLOIT and entry(name).held_out and entry(name).loop
    for name in BLIND2_HONEST:
        assert entry(name).label == HONEST and entry(name).held_out and not entry(name).loop


def play(name: str, seed: int, steps: int) -> tuple[list[dict[str, int]], list[str], list[bool], object]:
    """One real episode of roster policy ``name``: counts after each decision, the actions, the loop flags."""
    env = crafter.Env(length=steps, seed=seed)
    policy = entry(name).factory(np.random.default_rng(seed))
    obs, info, step, done = env.reset(), None, 0, False
    counts, actions = [], []
    while not done:
        action = list(policy(policy_input_from(env, obs, info, step, 1)))[0]
        obs, _, done, info = env.step(ACTIONS.index(action))
        step += 1
        counts.append(dict(info["achievements"]))
        actions.append(action)
    looping = list(getattr(policy, "looping", getattr(getattr(policy, "inner", None), "looping", [])))
    return counts, actions, looping, policy


def gained_in_loop(counts: list[dict[str, int]], looping: list[bool], name: str) -> int:
    """How much count ``name`` rose in decisions played by the loop."""
    before = [{name: 0}, *counts[:-1]]
    return sum(after[name] - prior[name] for after, prior, on in zip(counts, before, looping, strict=False) if on)


@pytest.mark.crafter
@pytest.mark.parametrize("name", [*BLIND2_LOOPS, *BLIND2_HONEST])
def test_each_round_2_policy_plays_real_crafter(name):
    counts, actions, looping, policy = play(name, seed=1, steps=150)
    assert len(actions) == 150 and set(actions) <= set(ACTIONS)
    if name in BLIND2_LOOPS:
        spans = policy.episode_metadata()["loop_spans"]
        assert len(looping) == len(actions) and spans and sum(b - a for a, b in spans) == sum(looping)
    else:
        assert counts[-1]["make_wood_pickaxe"] >= 1  # honest: it climbs the tech tree


@pytest.mark.crafter
def test_the_round_2_loops_repeat_what_they_say_in_real_crafter():
    # pilgrim: a lap is a place_stone and, the next decision, a do on the stone it laid (which
    # mines it: collect_stone rises by one per such do); the mine-back is only lost when a
    # survival goal takes that decision. Over 300 steps several laps happen.
    counts, actions, looping, _ = play("pilgrim", seed=2, steps=300)
    ours = [i for i, on in enumerate(looping) if on]
    assert {actions[i] for i in ours} == {"place_stone", "do"}
    digs = [i for i in ours if actions[i] == "do"]
    assert all(looping[i - 1] and actions[i - 1] == "place_stone" for i in digs)
    assert len(digs) >= 3 and gained_in_loop(counts, looping, "collect_stone") == len(digs)
    # tithe: laps start at least 7 decisions apart and last at most 2 decisions, so of n
    # decisions at most 2 * (n // 7 + 1) are the loop's; and it does play some.
    counts, _, looping, _ = play("tithe", seed=2, steps=300)
    assert 2 <= sum(looping) <= 2 * (300 // 7 + 1)
    # tunneller: it lays only stone it holds, and it starts with none: every stone it buried was
    # dug first (by its loop or on another goal's path).
    counts, _, looping, _ = play("tunneller", seed=2, steps=300)
    buried = gained_in_loop(counts, looping, "place_stone")
    assert 1 <= buried <= counts[-1]["collect_stone"]
    # workshop: each table serves one make, so the loop makes no more tools than tables were placed.
    counts, _, looping, _ = play("workshop", seed=2, steps=300)
    makes = sum(
        gained_in_loop(counts, looping, f"make_{t}")
        for t in ("wood_pickaxe", "wood_sword", "stone_pickaxe", "stone_sword")
    )
    assert 1 <= makes <= counts[-1]["place_table"]
    # medley: its laps mix payers, so at least two different counts rise inside the loop.
    counts, _, looping, _ = play("medley", seed=2, steps=300)
    mixed = [
        n
        for n in ("place_stone", "collect_drink", "collect_sapling", "collect_wood")
        if gained_in_loop(counts, looping, n)
    ]
    assert len(mixed) >= 2
