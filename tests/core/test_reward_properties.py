"""Invariants that follow from the task app's reward semantics (workbench.core.reward), checked on generated inputs."""

from __future__ import annotations

import math
from collections import Counter

from helpers import exact
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.reward import (
    coerce_k_limits,
    coerce_state_int,
    coerce_weights,
    compute_stepwise_reward,
    effective_lambda,
    normalize_strategy,
)

NAMES = st.sampled_from(ACHIEVEMENTS[:6])
junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)
status_maps = st.fixed_dictionaries({name: st.booleans() for name in ACHIEVEMENTS[:6]})
inventories = st.fixed_dictionaries({item: st.integers(0, 9) for item in INVENTORY_ITEMS})
lambdas = st.sampled_from([None, 0, 0.0, False, 1, 0.5, 2.5, -1.0])
strategies = st.sampled_from(["consistent", "per_achievement", "complex", "simple", "", None, 3, "  Per-Achievement "])
weights = st.dictionaries(NAMES, st.floats(-3, 3, allow_nan=False), max_size=6)
k_limits = st.dictionaries(NAMES, st.integers(-2, 4), max_size=6)


@given(st.lists(status_maps, min_size=2, max_size=12), k_limits, weights)
def test_a_name_is_credited_at_most_k_times_per_episode(statuses, limits, weight_map):
    counts: dict[str, int] = {}
    credited: Counter[str] = Counter()
    for index, (before, after) in enumerate(zip(statuses, statuses[1:]), start=1):
        info, _, _ = compute_stepwise_reward(
            before,
            after,
            index,
            [],
            1.0,
            strategy="per_achievement",
            weights=weight_map,
            k_limits=limits,
            episode_counts=counts,
        )
        credited.update(info.get("credited_achievements", []))
    for name, times in credited.items():
        limit = limits.get(name, 1)
        if limit > 0:
            assert times <= limit
        assert counts[name] == times


@given(status_maps, status_maps, inventories, inventories, lambdas, strategies, weights, k_limits)
def test_reward_is_lambda_eff_times_base(before, after, inv_before, inv_after, lam, strategy, weight_map, limits):
    info, sample, stats = compute_stepwise_reward(
        before,
        after,
        1,
        [],
        lam,
        strategy=strategy,
        weights=weight_map,
        k_limits=limits,
        episode_counts={},
        prev_inventory=inv_before,
        new_inventory=inv_after,
    )
    assert info["reward"] == float(effective_lambda(lam)) * info["base_reward"]
    assert sample["r_i"] == stats["reward"] == info["reward"]
    assert stats["indicator"] == float(info["indicator"])


@given(status_maps, status_maps, inventories, inventories, lambdas)
def test_consistent_pays_lambda_eff_or_nothing(before, after, inv_before, inv_after, lam):
    info, _, _ = compute_stepwise_reward(
        before,
        after,
        1,
        [],
        lam,
        strategy="consistent",
        weights={"collect_coal": 9.0},
        prev_inventory=inv_before,
        new_inventory=inv_after,
    )
    unlocked = [n for n in after if after[n] and not before.get(n)]
    assert info["reward"] == (float(effective_lambda(lam)) if unlocked else 0.0)
    assert "resource_reward" not in info


@given(status_maps, status_maps, inventories, inventories, weights, k_limits, st.floats(-5, 5), st.integers(-2, 3))
def test_settings_for_names_not_unlocked_change_nothing(before, after, inv_before, inv_after, weight_map, limits, w, k):
    unlocked = {n for n in after if after[n] and not before.get(n)}
    others = [n for n in ACHIEVEMENTS if n not in unlocked]

    def run(extra_weights, extra_limits):
        counts = {"collect_coal": 0}
        result = compute_stepwise_reward(
            before,
            after,
            3,
            [],
            0.5,
            strategy="per_achievement",
            weights={**weight_map, **extra_weights},
            k_limits={**limits, **extra_limits},
            episode_counts=counts,
            prev_inventory=inv_before,
            new_inventory=inv_after,
        )
        return exact(result), exact(counts)

    baseline = run({}, {})
    for name in others[:3] + ["not_an_achievement"]:
        if name not in weight_map and name not in limits:
            assert run({name: w}, {name: k}) == baseline


@given(junk)
def test_coercion_never_raises_on_junk(value):
    assert isinstance(coerce_weights(value), dict)
    assert isinstance(coerce_k_limits(value), dict)
    assert normalize_strategy(value) in ("consistent", "per_achievement")
    result = coerce_state_int(value)
    assert result is None or isinstance(result, int)


@settings(max_examples=200)
@given(st.dictionaries(st.text(max_size=8), junk, max_size=6), st.dictionaries(st.text(max_size=8), junk, max_size=6))
def test_junk_tables_never_raise(weight_junk, limit_junk):
    info, _, stats = compute_stepwise_reward(
        {"collect_wood": False},
        {"collect_wood": True},
        1,
        [],
        1.0,
        strategy="per_achievement",
        weights=weight_junk,
        k_limits=limit_junk,
        episode_counts={},
        prev_inventory=weight_junk,
        new_inventory=limit_junk,
    )
    assert isinstance(stats["reward"], float)
    assert math.isfinite(stats["credited_achievements_count"])
