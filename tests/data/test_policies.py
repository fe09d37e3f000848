"""The recording policies, played on real Crafter.

Crafter is not reproducible from seed and actions (set iteration order), so the thresholds
on played episodes are well below what was measured over 20-30 seeds (see each test).
"""

from __future__ import annotations

import crafter
import numpy as np
import pytest

from workbench.data.policies import BUILTIN_POLICIES, PolicyInput, policy_input_from, resolve_policy
from workbench.data.policies.farmer import farmer_policy
from workbench.data.policies.navigation import MATERIAL_IDS, OBJECT_IDS
from workbench.data.policies.random_policy import random_policy
from workbench.data.policies.scripted import scripted_policy
from workbench.errors import RecordingError

pytestmark = pytest.mark.crafter

ACTIONS = list(crafter.constants.actions)
TECH_BEYOND_WOOD = (
    "make_stone_pickaxe",
    "make_stone_sword",
    "place_furnace",
    "collect_iron",
    "make_iron_pickaxe",
    "make_iron_sword",
    "collect_diamond",
)


def play(factory, seed: int, steps: int, max_actions: int = 1) -> tuple[dict[str, int], list]:
    """One episode of at most ``steps`` env steps: final achievement counts and the decisions."""
    env = crafter.Env(length=steps, seed=seed)
    policy = factory(np.random.default_rng(seed))
    obs, info, step, done, decisions = env.reset(), None, 0, False, []
    while not done:
        decision = list(policy(policy_input_from(env, obs, info, step, max_actions)))
        decisions.append(decision)
        for action in decision:
            obs, _, done, info = env.step(ACTIONS.index(action))
            step += 1
            if done:
                break
    return dict(env._player.achievements), decisions


@pytest.fixture(scope="module")
def env_after_reset():
    env = crafter.Env(seed=3)
    return env, env.reset()


def test_policy_input_after_reset_matches_what_step_reports(env_after_reset):
    env, obs = env_after_reset
    first = policy_input_from(env, obs, None, 0, 2)
    assert first.image.shape == (64, 64, 3) and first.image.dtype == np.uint8
    assert list(first.inventory) == list(crafter.constants.items)
    assert first.inventory["health"] == 9 and first.inventory["wood"] == 0
    assert list(first.achievements) == list(crafter.constants.achievements)
    assert set(first.achievements.values()) == {0}
    assert first.semantic.shape == (64, 64)
    assert first.player_pos == (32, 32) and first.facing == (0, 1)
    assert (first.step, first.max_actions) == (0, 2)

    obs, _, _, info = env.step(ACTIONS.index("noop"))
    after = policy_input_from(env, obs, info, 1, 2)
    assert np.array_equal(after.semantic, info["semantic"])
    assert after.player_pos == tuple(int(v) for v in info["player_pos"])
    assert dict(after.inventory) == info["inventory"]
    counts = {name: 0 for name in crafter.constants.achievements} | {"collect_wood": 4}
    assert policy_input_from(env, obs, info, 1, 2, achievements=counts).achievements == counts


def test_semantic_ids_mirror_crafter(env_after_reset):
    env, _ = env_after_reset
    assert MATERIAL_IDS == {k: v for k, v in env._world._mat_ids.items() if k is not None}
    assert OBJECT_IDS == {cls.__name__.lower(): i for cls, i in env._sem_view._obj_ids.items()}


@pytest.mark.parametrize("max_actions", [1, 3, 8])
def test_random_policy_returns_max_actions_valid_names(env_after_reset, max_actions):
    env, obs = env_after_reset
    policy = random_policy(np.random.default_rng(0))
    seen = set()
    for step in range(50):
        actions = policy(policy_input_from(env, obs, None, step, max_actions))
        assert len(actions) == max_actions
        assert set(actions) <= set(ACTIONS)
        seen.update(actions)
    assert len(seen) > 10  # uniform over the 17 actions, not stuck on a few


def test_resolve_policy_builtins_and_module_function():
    assert set(BUILTIN_POLICIES) == {"random", "scripted", "farmer"}
    for name, factory in BUILTIN_POLICIES.items():
        assert resolve_policy(name) is factory
    assert resolve_policy("workbench.data.policies.random_policy:random_policy") is random_policy
    assert resolve_policy("workbench.data.policies.scripted:scripted_policy") is scripted_policy


@pytest.mark.parametrize(
    "spec, message",
    [
        ("greedy", "unknown policy 'greedy'.*random, scripted, farmer"),
        ("no_such_module_xyz:policy", "cannot import module 'no_such_module_xyz'"),
        ("workbench.data.policies.random_policy:nope", "has no attribute 'nope'"),
        ("workbench.data.policies:BUILTIN_POLICIES", "is a dict, not callable"),
        ("workbench.data.policies.random_policy:", "unknown policy"),
        (":random_policy", "unknown policy"),
    ],
)
def test_resolve_policy_rejects_bad_specs_clearly(spec, message):
    with pytest.raises(RecordingError, match=message):
        resolve_policy(spec)


def test_scripted_unlocks_the_early_tech_tree():
    # Measured over seeds 0..19 at 1500 steps: 11 to 21 distinct achievements, median 20.
    counts, decisions = play(scripted_policy, seed=7, steps=1500)
    unlocked = {name for name, count in counts.items() if count}
    assert len(unlocked) >= 8, unlocked
    assert {"collect_wood", "place_table", "make_wood_pickaxe"} <= unlocked
    assert all(len(d) == 1 and d[0] in ACTIONS for d in decisions)


def test_scripted_plays_with_multi_action_decisions():
    # Measured over seeds 0..19 at 500 steps with max_actions=4: 13 to 18 achievements.
    counts, decisions = play(scripted_policy, seed=11, steps=500, max_actions=4)
    assert sum(count > 0 for count in counts.values()) >= 6
    assert all(1 <= len(d) <= 4 and set(d) <= set(ACTIONS) for d in decisions)
    assert max(len(d) for d in decisions) > 1  # walks come as several moves per decision


def test_farmer_repeats_cheap_events_instead_of_progressing():
    # Measured over seeds 0..29 at 500 steps, summed over three episodes: collect_sapling
    # >= 15, collect_drink >= 33, collect_stone >= 168, place_stone >= 156 (an episode may
    # still end early in a skeleton's line of fire).
    totals: dict[str, int] = {}
    for seed in (0, 1, 2):
        counts, decisions = play(farmer_policy, seed=seed, steps=500)
        assert not any(counts[name] for name in TECH_BEYOND_WOOD), counts
        assert all(len(d) == 1 and d[0] in ACTIONS for d in decisions)
        for name, count in counts.items():
            totals[name] = totals.get(name, 0) + count
    assert totals["collect_sapling"] >= 8 and totals["place_plant"] >= 8
    assert totals["collect_drink"] >= 15
    assert totals["collect_stone"] >= 80 and totals["place_stone"] >= 70


def test_policy_input_is_frozen(env_after_reset):
    env, obs = env_after_reset
    policy_input = policy_input_from(env, obs, None, 0, 1)
    assert isinstance(policy_input, PolicyInput)
    with pytest.raises(AttributeError):
        policy_input.step = 5
