"""workbench.analysis.learner: group advantages and GAE against hand arithmetic and plain loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.analysis.decision_kinds import kind_rewards
from workbench.analysis.learner import (
    discordant_pairs,
    discounted_sums,
    dr_grpo,
    gae,
    gdpo,
    group_labels,
    grpo,
    learner_view,
    rloo,
)
from workbench.core.config import RewardConfig
from workbench.data.sample import sample_corpus
from workbench.errors import AnalysisError, WorkbenchError
from workbench.scoring import prepare, score

SHAPED = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")


# -- independent plain-loop implementations -----------------------------------------------------
def loop_groups(rewards, group):
    members: dict[int, list[int]] = {}
    for i, g in enumerate(group):
        members.setdefault(int(g), []).append(i)
    return members


def loop_mean_std(values, ddof):
    n = len(values)
    mean = sum(values) / n
    if n <= ddof:
        return mean, 0.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - ddof))


def loop_grpo(rewards, group, eps, ddof):
    out = [0.0] * len(rewards)
    for members in loop_groups(rewards, group).values():
        if len(members) < 2:
            continue
        mean, std = loop_mean_std([rewards[i] for i in members], ddof)
        for i in members:
            out[i] = (rewards[i] - mean) / (std + eps) if std + eps > 0 else 0.0  # 0 / 0: no gradient
    return out


def loop_rloo(rewards, group):
    out = [0.0] * len(rewards)
    for members in loop_groups(rewards, group).values():
        for i in members:
            others = [rewards[j] for j in members if j != i]
            out[i] = rewards[i] - sum(others) / len(others) if others else 0.0
    return out


def loop_gae(rewards, lengths, gamma, lam, values, last):
    out, start = [], 0
    for e, length in enumerate(lengths):
        advantages = [0.0] * length
        running = 0.0
        for t in reversed(range(length)):
            following = values[start + t + 1] if t + 1 < length else last[e]
            delta = rewards[start + t] + gamma * following - values[start + t]
            running = delta + gamma * lam * running
            advantages[t] = running
        out += advantages
        start += length
    return out


# -- hand-computed cases ------------------------------------------------------------------------
def test_group_estimators_by_hand():
    # group 0 returns 1, 2, 3: mean 2; sample std sqrt((1 + 0 + 1) / 2) = 1; population sqrt(2/3).
    # group 1 returns 5, 5: zero variance. group 2: one rollout.
    rewards = np.array([1.0, 2.0, 3.0, 5.0, 5.0, 7.0])
    group = np.array([0, 0, 0, 1, 1, 2])
    np.testing.assert_allclose(grpo(rewards, group, eps=0.0), [-1, 0, 1, 0, 0, 0])
    np.testing.assert_allclose(grpo(rewards, group, eps=0.5), [-1 / 1.5, 0, 1 / 1.5, 0, 0, 0])
    pop = math.sqrt(2 / 3)
    np.testing.assert_allclose(grpo(rewards, group, eps=0.0, ddof=0), [-1 / pop, 0, 1 / pop, 0, 0, 0])
    # Dr.GRPO: r - mean.
    np.testing.assert_allclose(dr_grpo(rewards, group), [-1, 0, 1, 0, 0, 0])
    # RLOO: 1 - (2+3)/2 = -1.5; 2 - (1+3)/2 = 0; 3 - (1+2)/2 = 1.5; 5 - 5 = 0; alone: 0.
    np.testing.assert_allclose(rloo(rewards, group), [-1.5, 0, 1.5, 0, 0, 0])


def test_gdpo_by_hand_keeps_what_the_sum_collapses():
    # One group of two rollouts, two components: (1, 0) and (0, 0.1).
    # Summed: 1 and 0.1, mean 0.55, sample std sqrt(2 * 0.45^2) = 0.6364: GRPO +-0.7071.
    # Per component: (1, 0) -> mean 0.5, std sqrt(0.5): +0.7071, -0.7071;
    #                (0, 0.1) -> mean 0.05, std sqrt(0.005): -0.7071, +0.7071; sums 0 and 0.
    components = np.array([[1.0, 0.0], [0.0, 0.1]])
    group = np.array([0, 0])
    advantage, terms = gdpo(components, group, eps=0.0, batch_normalise=False)
    h = 1 / math.sqrt(2)
    np.testing.assert_allclose(terms, [[h, -h], [-h, h]])
    np.testing.assert_allclose(advantage, [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(grpo(components.sum(1), group, eps=0.0), [h, -h])
    # Batch normalisation: two groups, sums (1, -1) and (2, -2) before it: batch mean 0,
    # sample std sqrt((1 + 1 + 4 + 4) / 3) = sqrt(10/3).
    components = np.array([[1.0, 0.0], [0.0, 0.0], [3.0, 1.0], [1.0, 0.0]])
    advantage, terms = gdpo(components, np.array([0, 0, 1, 1]), eps=0.0)
    np.testing.assert_allclose(terms.sum(1), [h, -h, 2 * h, -2 * h])
    sums = np.array([h, -h, 2 * h, -2 * h])
    np.testing.assert_allclose(advantage, sums / math.sqrt((h * h * 2 + 8 * h * h) / 3))


def test_gae_by_hand():
    # Episode 1 rewards 1, 0, 2; episode 2: 3. No critic, gamma 0.5, lambda 1:
    # A = 1 + 0.5 * 0 + 0.25 * 2 = 1.5; 0 + 0.5 * 2 = 1; 2; and 3.
    advantages, returns = gae(np.array([1.0, 0.0, 2.0, 3.0]), np.array([3, 1]), gamma=0.5, lam=1.0)
    np.testing.assert_allclose(advantages, [1.5, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(returns, advantages)
    # With V = 1 everywhere and final values 0, gamma = lambda = 0.5 (gamma lambda = 0.25):
    # deltas 1 + 0.5 - 1 = 0.5, 0 + 0.5 - 1 = -0.5, 2 + 0 - 1 = 1; 3 + 0 - 1 = 2.
    # A_2 = 1, A_1 = -0.5 + 0.25 = -0.25, A_0 = 0.5 - 0.0625 = 0.4375; returns A + 1.
    advantages, returns = gae(np.array([1.0, 0.0, 2.0, 3.0]), np.array([3, 1]), gamma=0.5, lam=0.5, values=np.ones(4))
    np.testing.assert_allclose(advantages, [0.4375, -0.25, 1.0, 2.0])
    np.testing.assert_allclose(returns, [1.4375, 0.75, 2.0, 3.0])


def test_discordant_pairs_by_hand():
    # Group 0: advantages 3, 2, 1 with progress 1, 2, 2: pairs (0,1), (0,2) discordant, (1,2) a
    # progress tie (not comparable). Group 1: agrees.
    advantage = np.array([3.0, 2.0, 1.0, 1.0, 2.0])
    progress = np.array([1.0, 2.0, 2.0, 0.0, 1.0])
    bad, comparable, example = discordant_pairs(advantage, progress, np.array([0, 0, 0, 1, 1]), 2)
    assert bad.tolist() == [2, 0]
    assert comparable.tolist() == [2, 1]
    favoured, better = divmod(int(example[0]), 5)
    assert favoured == 0 and better in (1, 2)
    assert example[1] == -1


# -- plain loops and properties -----------------------------------------------------------------
returns_and_groups = st.integers(1, 30).flatmap(
    lambda n: st.tuples(
        # quarter-integers: equal returns are exactly equal (no 1-ulp "variance" to divide by)
        st.lists(st.integers(-200, 200).map(lambda k: k / 4), min_size=n, max_size=n),
        st.lists(st.integers(0, 5), min_size=n, max_size=n),
    )
)


def _relabel(group):
    _, inverse = np.unique(group, return_inverse=True)
    return inverse.ravel().astype(np.int64)


@settings(max_examples=150, deadline=None)
@given(returns_and_groups, st.sampled_from([0, 1]), st.sampled_from([0.0, 1e-6, 1e-4]))
def test_estimators_match_plain_loops(data, ddof, eps):
    rewards, group = np.array(data[0]), _relabel(data[1])
    np.testing.assert_allclose(
        grpo(rewards, group, eps=eps, ddof=ddof), loop_grpo(rewards, group, eps, ddof), atol=1e-6
    )
    np.testing.assert_allclose(rloo(rewards, group), loop_rloo(rewards, group), atol=1e-9)
    members = loop_groups(rewards, group)
    expected = [0.0] * len(rewards)
    for ms in members.values():
        mean = sum(rewards[i] for i in ms) / len(ms)
        for i in ms:
            expected[i] = rewards[i] - mean
    np.testing.assert_allclose(dr_grpo(rewards, group), expected, atol=1e-9)


@settings(max_examples=150, deadline=None)
@given(returns_and_groups, st.floats(-1e3, 1e3), st.floats(0.01, 100))
def test_a_constant_or_a_scale_leaves_grpo_unchanged(data, shift, scale):
    rewards, group = np.array(data[0]), _relabel(data[1])
    base = grpo(rewards, group, eps=0.0)
    np.testing.assert_allclose(grpo(rewards + shift, group, eps=0.0), base, atol=1e-6)
    np.testing.assert_allclose(grpo(rewards * scale, group, eps=0.0), base, atol=1e-6)
    # A constant vanishes from every estimator (Dr.GRPO and RLOO keep the scale).
    np.testing.assert_allclose(dr_grpo(rewards + shift, group), dr_grpo(rewards, group), atol=1e-8)
    np.testing.assert_allclose(rloo(rewards + shift, group), rloo(rewards, group), atol=1e-8)
    components = np.column_stack([rewards, rewards[::-1]])
    # (with the default eps: at eps = 0 the batch step would divide rounding noise by itself)
    np.testing.assert_allclose(gdpo(components + shift, group)[0], gdpo(components, group)[0], atol=1e-6)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 12), min_size=1, max_size=8),
    st.floats(0, 1),
    st.floats(0, 1),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_gae_matches_a_plain_loop(lengths, gamma, lam, critic, rnd):
    n = sum(lengths)
    rewards = [rnd.uniform(-2, 2) for _ in range(n)]
    values = [rnd.uniform(-2, 2) if critic else 0.0 for _ in range(n)]
    last = [rnd.uniform(-2, 2) if critic else 0.0 for _ in lengths]
    advantages, returns = gae(
        np.array(rewards), np.array(lengths), gamma=gamma, lam=lam, values=np.array(values), last_values=np.array(last)
    )
    expected = loop_gae(rewards, lengths, gamma, lam, values, last)
    np.testing.assert_allclose(advantages, expected, atol=1e-9)
    np.testing.assert_allclose(returns, np.array(expected) + np.array(values), atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(returns_and_groups, st.randoms(use_true_random=False))
def test_discordant_pairs_match_a_plain_loop(data, rnd):
    advantage, group = np.array(data[0]), _relabel(data[1])
    progress = np.array([float(rnd.randint(0, 3)) for _ in advantage])
    n_groups = int(group.max()) + 1
    bad, comparable, _ = discordant_pairs(advantage, progress, group, n_groups)
    expected_bad, expected_comparable = [0] * n_groups, [0] * n_groups
    for i in range(len(group)):
        for j in range(i + 1, len(group)):
            if group[i] == group[j] and progress[i] != progress[j]:
                expected_comparable[group[i]] += 1
                expected_bad[group[i]] += (advantage[i] - advantage[j]) * (progress[i] - progress[j]) < 0
    assert bad.tolist() == expected_bad
    assert comparable.tolist() == expected_comparable


def test_long_episodes_do_not_overflow():
    # 5,000 decisions of reward 1 at factor 0.9: the sum to the end is (1 - 0.9^k) / 0.1 with k left.
    sums = discounted_sums(np.ones(5000), np.array([5000]), 0.9)
    k = np.arange(5000, 0, -1)
    np.testing.assert_allclose(sums, (1 - 0.9**k) / 0.1)


def test_bad_input_names_the_problem():
    with pytest.raises(AnalysisError, match="one label per rollout"):
        grpo(np.ones(3), np.zeros(2, dtype=int))
    with pytest.raises(AnalysisError, match="non-negative integers"):
        grpo(np.ones(2), np.array([0.5, 1.0]))
    with pytest.raises(AnalysisError, match="finite"):
        rloo(np.array([1.0, np.nan]), np.array([0, 0]))
    with pytest.raises(AnalysisError, match="gamma and lambda"):
        gae(np.ones(2), np.array([2]), gamma=1.5)
    with pytest.raises(AnalysisError, match="sum to the number"):
        discounted_sums(np.ones(3), np.array([2]), 0.5)
    with pytest.raises(AnalysisError, match="components must be"):
        gdpo(np.ones(3), np.zeros(3, dtype=int))
    assert issubclass(AnalysisError, WorkbenchError)


# -- on the sample --------------------------------------------------------------------------------
def test_kind_rewards_add_up_to_the_scored_reward():
    prepared = prepare(sample_corpus())
    for config in (SHAPED, RewardConfig(enabled=True, mode="decision_stepwise", strategy="consistent")):
        parts = kind_rewards(prepared, config)
        np.testing.assert_allclose(parts.sum(1), score(prepared, config).reward, atol=1e-12)


def test_learner_view_on_the_sample():
    corpus = sample_corpus()
    view = learner_view(corpus, SHAPED)
    episodes = view.episodes
    # Seeds: three seeds shared by scripted, farmer and random; a fourth has one scripted episode.
    sizes = episodes.groupby("seed")["episode"].count()
    assert sorted(sizes.tolist()) == [1, 3, 3, 3]
    np.testing.assert_allclose(episodes[["credit", "inventory", "achievement_count"]].sum(axis=1), episodes["return"])
    for _, rows in episodes.groupby("group"):
        r = rows["return"].to_numpy()
        if len(r) > 1:
            np.testing.assert_allclose(rows["dr_grpo"], r - r.mean())
            np.testing.assert_allclose(rows["grpo"], (r - r.mean()) / (r.std(ddof=1) + 1e-6))
    codes = set(view.flags["code"])
    assert "no-group" in codes
    # decisions: the credit at gamma = lambda = 1 is the shaped reward to go, summing to the return.
    first = view.decisions.groupby("episode", observed=True)["reward_to_go"].first()
    np.testing.assert_allclose(first.loc[episodes["episode"]].to_numpy(), episodes["return"])


def test_grouping_keeps_missing_keys_apart():
    import pandas as pd

    index = pd.DataFrame({"seed": [1, None, 1, None, 2]})
    group, keys = group_labels(index, ("seed",))
    assert group.tolist() == [0, 1, 0, 2, 3]
    assert len(keys) == 4
    with pytest.raises(AnalysisError, match="no index column 'version'"):
        group_labels(index, ("version",))


def test_an_equal_group_is_zero_variance_after_rounding():
    # hypothesis found it: 2.25 * 0.01 three times has a rounding-sized std, not 0
    rewards = np.array([2.25, 0.0, 2.25, 2.25]) * 0.01
    group = np.array([1, 0, 1, 1])
    np.testing.assert_array_equal(grpo(rewards, group, eps=0.0), [0.0, 0.0, 0.0, 0.0])
