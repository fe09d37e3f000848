"""The blind exploit families and honest players: their loop goals on hand-built maps, their schedule, real episodes."""

from __future__ import annotations

import crafter
import numpy as np
import pytest

from workbench.data.benchmarks.roster import EXPLOIT, HELD_OUT_OF_DESIGN, HONEST, HONEST_HELD_OUT, entry
from workbench.data.policies.base import PolicyInput, policy_input_from
from workbench.data.policies.blind import (
    BLIND_HONEST,
    BLIND_LOOPS,
    BlindPolicy,
    drip,
    fill_lake,
    forage,
    hoard,
    night_mason,
    quarry,
)
from workbench.data.policies.navigation import IDS, Grid, Situation

ACTIONS = list(crafter.constants.actions)
#: Step 270 is night: daylight = 1 - |cos(pi * (270/300 + 0.3))|^3 = 1 - |cos(1.2 pi)|^3
#: = 1 - 0.809^3 = 0.47 < 0.5; step 30 is day: 1 - |cos(0.4 pi)|^3 = 1 - 0.309^3 = 0.97.
NIGHT, DAY = 270, 30


def situation(cells: dict[tuple[int, int], str], pos=(10, 10), facing=(1, 0), step=DAY, **inventory) -> Situation:
    """A 20x20 grass world with ``cells`` drawn in and the player at ``pos``: what a goal sees."""
    semantic = np.full((20, 20), IDS["grass"], dtype=np.int32)
    for cell, name in cells.items():
        semantic[cell] = IDS[name]
    semantic[pos] = IDS["player"]
    inv = {name: info["initial"] for name, info in crafter.constants.items.items()}
    inv.update(wood_pickaxe=1, **inventory)
    obs = PolicyInput(
        image=np.zeros((64, 64, 3), np.uint8),
        inventory=inv,
        achievements=dict.fromkeys(crafter.constants.achievements, 0),
        semantic=semantic,
        player_pos=pos,
        facing=facing,
        step=step,
        max_actions=1,
    )
    return Situation(obs, Grid(semantic))


def hacker(name: str, seed: int = 0) -> BlindPolicy:
    policy = BLIND_LOOPS[name].build(np.random.default_rng(seed))
    assert isinstance(policy, BlindPolicy)
    return policy


def test_the_lake_filler_lays_a_stone_into_the_water_mines_it_back_and_steps_on():
    agent = hacker("lake_filler")
    lake = {(11, 10): "water", (12, 10): "water"}
    # Facing water with a stone in hand (and drink full): lay it; the laid cell is remembered.
    assert fill_lake(agent, situation(lake, stone=1)) == ["place_stone"]
    assert agent.memory["laid"] == (11, 10)
    # The cell is stone now: mine it back.
    assert fill_lake(agent, situation({**lake, (11, 10): "stone"}, stone=0)) == ["do"]
    # Mining left path: step onto it (facing right, towards the next water) and lay the next stone.
    assert fill_lake(agent, situation({**lake, (11, 10): "path"}, stone=1)) == ["move_right", "place_stone"]
    # Thirsty and facing water: drink first (the lap's second paying event).
    assert fill_lake(agent, situation(lake, stone=1, drink=5)) == ["do"]


def test_the_night_mason_opens_and_closes_its_wall_only_at_night_in_a_shelter():
    walls = {(9, 10): "stone", (11, 10): "stone", (10, 9): "stone", (10, 11): "stone"}
    agent = hacker("night_mason", seed=3)
    assert night_mason(agent, situation(walls, step=DAY, stone=1)) is None  # by day: honest play
    assert night_mason(agent, situation({}, step=NIGHT, stone=1)) is None  # not walled in
    assert night_mason(agent, situation(walls, step=NIGHT, stone=1)) == ["do"]
    wait = agent.memory["wait"]
    assert 0 <= wait <= 3
    opened = {**walls, (11, 10): "path"}
    # It waits ``wait`` decisions with the wall open, then lays the stone back: 2 + wait decisions a lap.
    plans = [night_mason(agent, situation(opened, step=NIGHT, stone=2)) for _ in range(wait + 1)]
    assert plans == [["noop"]] * wait + [["place_stone"]]
    # A zombie 3 cells away (within 4): it keeps the wall shut; at 5 cells it opens it.
    assert night_mason(hacker("night_mason"), situation({**walls, (13, 10): "zombie"}, step=NIGHT, stone=1)) is None
    assert night_mason(hacker("night_mason"), situation({**walls, (15, 10): "zombie"}, step=NIGHT, stone=1)) == ["do"]


def test_the_quarry_builds_furnaces_from_eight_stones_down_to_four():
    agent = hacker("quarry_builder")
    rock = {(11, 10): "stone"}
    assert quarry(agent, situation(rock, stone=7)) == ["do"]  # below 8: mine on
    # 8 stones: build; facing the stone, the nearest open cell to face is below (10, 11) from (10, 10).
    assert quarry(agent, situation(rock, stone=8))[-1] == "place_furnace"
    assert quarry(agent, situation(rock, stone=4))[-1] == "place_furnace"  # still building: 4 pays a furnace
    assert quarry(agent, situation(rock, stone=3)) == ["do"]  # under one furnace's cost: back to mining


def test_the_hoarder_collects_on_at_the_cap_from_the_nearest_source():
    agent = hacker("cap_hoarder")
    cells = {(11, 10): "tree", (10, 12): "coal", (10, 7): "stone"}
    # Wood short: only trees count (the tree ahead); all at 9: any source, the nearest (the tree ahead).
    assert hoard(agent, situation(cells, wood=3, stone=9, coal=9)) == ["do"]
    assert hoard(agent, situation(cells, wood=9, stone=9, coal=9)) == ["do"]
    # Coal short: walk down one cell (10, 11), already facing... no: facing right, so turn down, then do.
    assert hoard(agent, situation(cells, wood=9, stone=9, coal=2)) == ["move_down", "do"]


def test_the_forager_refills_at_seven_or_less_never_at_eight():
    water = {(11, 10): "water"}
    assert forage(None, situation(water, drink=8)) is None
    assert forage(None, situation(water, drink=7)) == ["do"]


def test_the_drip_schedule_alternates_short_bursts_and_long_gaps():
    agent = hacker("drip_looper", seed=5)
    on = [agent.in_burst(d, ready=True) for d in range(6000)]
    edges = np.flatnonzero(np.diff(np.r_[0, on, 0]))
    bursts, gaps = edges[1::2] - edges[::2], edges[2::2] - edges[1:-1:2]
    bursts = bursts[:-1] if on[-1] else bursts  # the last burst may be cut off at decision 6000
    assert bursts.min() >= 8 and bursts.max() <= 14 and gaps.min() >= 20 and gaps.max() <= 60
    # Mean burst 11, mean gap 40: a duty cycle of 11 / 51 = 0.22.
    assert 0.17 < np.mean(on) < 0.27
    # A due burst waits for a target: none starts while not ready, the next ready decision starts one.
    waiting = hacker("drip_looper", seed=5)
    assert not any(waiting.in_burst(d, ready=False) for d in range(100))
    assert waiting.in_burst(100, ready=True) and waiting.in_burst(107, ready=False)  # 8 decisions at least


def test_the_drip_looper_mines_and_lays_back_only_in_a_burst():
    agent = hacker("drip_looper", seed=5)
    rock = {(11, 10): "stone"}
    assert drip(agent, situation(rock)) is None  # decision 0: the first burst is due at 20 or later
    agent.looping.extend([False] * 60)  # 60 decisions later a burst is due (gaps are 60 at most)
    assert drip(agent, situation(rock, stone=0)) == ["do"]
    agent.looping.append(True)
    assert drip(agent, situation({(11, 10): "path"}, stone=1)) == ["place_stone"]


def test_the_blind_families_and_players_are_registered_held_out_and_labelled():
    assert {e.name for e in HELD_OUT_OF_DESIGN} >= set(BLIND_LOOPS)
    assert {e.name for e in HONEST_HELD_OUT} >= set(BLIND_HONEST)
    for name in BLIND_LOOPS:
        assert entry(name).label == EXPLOIT and entry(name).held_out and entry(name).loop
    for name in BLIND_HONEST:
        assert entry(name).label == HONEST and entry(name).held_out and not entry(name).loop


def play(name: str, seed: int, steps: int) -> tuple[list[dict[str, int]], list[str], list[bool], object]:
    """One real episode of roster policy ``name``: achievement counts after each decision, the actions, the loop flags."""
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
    return counts, actions, list(getattr(policy, "looping", [])), policy


def gained_in_loop(counts: list[dict[str, int]], looping: list[bool], name: str) -> int:
    """How much count ``name`` rose in decisions played by the loop."""
    before = [{name: 0}, *counts[:-1]]
    return sum(after[name] - prior[name] for after, prior, on in zip(counts, before, looping) if on)


@pytest.mark.crafter
@pytest.mark.parametrize("name", [*BLIND_LOOPS, *BLIND_HONEST])
def test_each_blind_policy_plays_real_crafter(name):
    counts, actions, looping, policy = play(name, seed=1, steps=120)
    assert len(actions) >= 50 and set(actions) <= set(ACTIONS)
    if name in BLIND_LOOPS:
        assert len(looping) == len(actions)
        spans = policy.episode_metadata()["loop_spans"]
        assert sum(b - a for a, b in spans) == sum(looping)
    else:
        assert counts[-1]["make_wood_pickaxe"] >= 1  # honest: it climbs the tech tree


@pytest.mark.crafter
def test_the_lake_filler_and_the_armourer_repeat_their_loops_in_real_crafter():
    # lake_filler: every lap lays a stone and mines it back, so in its loop place_stone and
    # collect_stone rise together (the lap's last stone may still lie in the lake: at most one
    # apart once the first stone is mined), and a 250-step day holds far more than 5 laps.
    counts, _, looping, _ = play("lake_filler", seed=2, steps=250)
    laid, mined = gained_in_loop(counts, looping, "place_stone"), gained_in_loop(counts, looping, "collect_stone")
    assert laid >= 5 and laid - 1 <= mined
    # armourer: its survival goals make a wood pickaxe and a wood sword (2 makes), then the loop
    # makes the least-made tool first, so the four make counts stay within one of each other,
    # and it reaches the stone tools (over 6 seeds it made 3 to 10 tools by step 250).
    counts, _, looping, _ = play("armourer", seed=2, steps=250)
    made = [counts[-1][f"make_{tool}"] for tool in ("wood_sword", "wood_pickaxe", "stone_sword", "stone_pickaxe")]
    assert sum(made) >= 3 and max(made) - min(made) <= 1
    assert gained_in_loop(counts, looping, "make_stone_pickaxe") + gained_in_loop(counts, looping, "make_stone_sword")
