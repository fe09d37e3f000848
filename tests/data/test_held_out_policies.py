"""The hackers first held out of design (``policies.held_out``) run their loops in real Crafter.

Each assertion is read off the game's own inventory and achievement counts step by step, with
Crafter's rules (``crafter.constants``: a table costs 2 wood, an item stops at 9), never from a
detector.
"""

from __future__ import annotations

import crafter
import numpy as np
import pytest

from workbench.data.benchmarks.roster import HELD_OUT_OF_DESIGN, ROSTER, entry
from workbench.data.policies import policy_input_from, resolve_policy
from workbench.data.policies.blind import BLIND_LOOPS
from workbench.data.policies.blind2 import BLIND2_LOOPS
from workbench.data.policies.exploits import LoopPolicy
from workbench.data.policies.held_out import HELD_OUT_LOOPS, SPREAD, spread_sapling, table_lap
from workbench.data.policies.scripted import is_night, wander

pytestmark = pytest.mark.crafter

ACTIONS = list(crafter.constants.actions)
CAP = crafter.constants.items["drink"]["max"]  # 9
TABLE_WOOD = crafter.constants.place["table"]["uses"]["wood"]  # 2


def play(policy, seed: int, steps: int) -> list[dict]:
    """One episode: per step the action, then the inventory and counts before and after it."""
    env = crafter.Env(length=steps, seed=seed)
    obs, info, step, done, trace = env.reset(), None, 0, False, []
    player = env._player
    while not done:
        for action in policy(policy_input_from(env, obs, info, step, 1)):
            before = (dict(player.inventory), dict(player.achievements))
            obs, _, done, info = env.step(ACTIONS.index(action))
            trace.append(
                {
                    "step": step,
                    "action": action,
                    "before": before,
                    "after": (dict(info["inventory"]), dict(info["achievements"])),
                }
            )
            step += 1
            if done:
                break
    return trace


def rises(trace: list[dict], name: str) -> list[int]:
    """The steps at which achievement count ``name`` rose."""
    return [t["step"] for t in trace if t["after"][1][name] > t["before"][1][name]]


def test_the_former_held_out_families_are_in_the_design_roster():
    names = set(HELD_OUT_LOOPS)
    # seen by the v2 detectors' design: folded into the leave-one-family-out roster; the families
    # held out of design are the two blind rounds' (test_blind_policies, test_blind2_policies)
    assert names <= {e.name for e in ROSTER} and {e.name for e in HELD_OUT_OF_DESIGN} == set(BLIND_LOOPS) | set(
        BLIND2_LOOPS
    )
    assert all(entry(name).label == "exploit" and not entry(name).held_out for name in names)
    # `workbench record --policy workbench.data.policies.held_out:NAME_policy` finds each one
    for name in names:
        policy = resolve_policy(f"workbench.data.policies.held_out:{name}_policy")(np.random.default_rng(0))
        assert isinstance(policy, LoopPolicy) and policy.loop == frozenset(HELD_OUT_LOOPS[name].loop)


def test_spread_sapling_looper_plants_its_saplings_with_walks_between_laps():
    # The loop goal alone, by day (steps < 150 are day in Crafter's cycle of 300).
    policy = LoopPolicy(np.random.default_rng(5), (spread_sapling, wander), (spread_sapling,))
    trace = play(policy, seed=5, steps=150)
    planted = rises(trace, "place_plant")
    assert len(rises(trace, "collect_sapling")) >= 2 and len(planted) >= 2
    # After each planting the next SPREAD[0] steps are a random walk: moves (or noops), no 'do'.
    for at in planted:
        after = [t["action"] for t in trace if at < t["step"] <= at + SPREAD[0]]
        assert all(a.startswith("move_") or a == "noop" for a in after), after


def test_table_rebuilder_spends_the_wood_it_chopped_on_tables_spaced_apart():
    policy = LoopPolicy(np.random.default_rng(2), (table_lap, wander), (table_lap,))
    trace = play(policy, seed=2, steps=150)
    tables = rises(trace, "place_table")
    assert len(tables) >= 2
    # every table costs TABLE_WOOD wood, all chopped in this episode (it starts with none)
    assert len(rises(trace, "collect_wood")) >= TABLE_WOOD * len(tables)
    # between two tables: a walk of at least SPREAD[0] steps, then TABLE_WOOD chops
    assert all(b - a >= SPREAD[0] + TABLE_WOOD for a, b in zip(tables, tables[1:], strict=False))


def test_night_drinker_drinks_at_the_cap_at_night_only():
    policy = HELD_OUT_LOOPS["night_drinker"].build(np.random.default_rng(0))
    trace = play(policy, seed=0, steps=300)
    at_cap = [
        t
        for t in trace
        if t["before"][0]["drink"] == CAP and t["after"][1]["collect_drink"] > t["before"][1]["collect_drink"]
    ]
    # collect_drink rises with the drink already at 9: paid for nothing, and only at night
    assert len(at_cap) >= 10
    assert all(is_night(t["step"]) for t in at_cap)
