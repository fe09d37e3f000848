"""workbench.analysis.distances: EPIC, STARC and SRRD on hand cases, plain loops, shaping invariance and the sample."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import REPO
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench.analysis.distances import (
    distance_spread,
    epic_canonical,
    pair_reward,
    pearson_distance,
    reward_distance,
    srrd_canonical,
    starc_canonical,
    starc_distance,
    successor_samples,
)
from workbench.core.config import RewardConfig
from workbench.data.sample import sample_corpus
from workbench.errors import AnalysisError
from workbench.scoring import score
from workbench.scoring.potential import decision_rows

SHAPED = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")
RECOMMENDED = RewardConfig.from_file(REPO / "configs" / "recommended.yaml")
CONSISTENT = RewardConfig.from_file(REPO / "configs" / "consistent.yaml")


def gain(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pays every rise of the first feature (the task app's resource shaping in one feature)."""
    return np.maximum(y[:, 0] - x[:, 0], 0).astype(np.float64)


# -- hand cases -----------------------------------------------------------------------------------
def test_pearson_and_starc_distances_by_hand():
    assert pearson_distance(np.array([1.0, 2, 3]), np.array([3.0, 2, 1])) == pytest.approx(1.0)  # rho -1
    # rho 1 (to rounding: sqrt(1 - rho) turns a 1e-16 rounding of rho into 1e-8)
    assert pearson_distance(np.array([1.0, 2, 3]), np.array([2.0, 4, 6])) == pytest.approx(0.0, abs=1e-7)
    assert pearson_distance(np.ones(3), np.ones(3)) == 0.0
    # (3, 4) / 5 = (0.6, 0.8); (4, 3) / 5 = (0.8, 0.6); difference (-0.2, 0.2), norm 0.2828, half 0.1414
    assert starc_distance(np.array([3.0, 4]), np.array([4.0, 3])) == pytest.approx(np.sqrt(0.08) / 2)
    assert starc_distance(np.zeros(2), np.array([1.0, 0])) == 0.5


def test_epic_canonical_by_hand():
    # One feature, transitions 0 -> 1 and 1 -> 0, draws S = (0, 1), gamma 1. R = gain.
    # E[R(S, S')] pairs each draw with the other: R(0, 1) = 1, R(1, 0) = 0: 0.5.
    # 0 -> 1: R 1 + mean(R(1, 0), R(1, 1)) = 0 - mean(R(0, 0), R(0, 1)) = 0.5 - 0.5 = 0.
    # 1 -> 0: R 0 + mean(R(0, .)) = 0.5 - mean(R(1, .)) = 0 - 0.5 = 0.
    before, after, states = np.array([[0], [1]]), np.array([[1], [0]]), np.array([[0], [1]])
    np.testing.assert_allclose(epic_canonical(gain, before, after, states, 1.0), [0.0, 0.0], atol=1e-15)


def test_starc_lstd_by_hand():
    # One feature x; transitions 1 -> 2 (r 1) and 2 -> 1 (r 0), gamma 0.5.
    # LSTD: A = 1 (1 - 0.5 * 2) + 2 (2 - 0.5 * 1) = 0 + 3 = 3, b = 1 * 1 + 2 * 0 = 1: w = 1/3.
    # C = r + 0.5 V(s') - V(s): 1 + 0.5 * 2/3 - 1/3 = 1; 0 + 0.5 * 1/3 - 2/3 = -0.5.
    features, following = np.array([[1.0], [2.0]]), np.array([[2.0], [1.0]])
    canonical = starc_canonical(np.array([1.0, 0.0]), features, following, 0.5, np.array([False, False]))
    np.testing.assert_allclose(canonical, [1.0, -0.5])


# -- plain loops and properties -------------------------------------------------------------------
def loop_epic(reward, before, after, states, gamma):
    out = []
    m = len(states)
    for s, s2 in zip(before, after):
        value = reward(s[None], s2[None])[0]
        value += gamma * sum(reward(s2[None], states[j][None])[0] for j in range(m)) / m
        value -= sum(reward(s[None], states[j][None])[0] for j in range(m)) / m
        value -= gamma * sum(reward(states[j][None], states[j - 1][None])[0] for j in range(m)) / m
        out.append(value)
    return out


small_mdp = st.integers(2, 12).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 5), min_size=n, max_size=n),
        st.lists(st.integers(0, 5), min_size=n, max_size=n),
        st.lists(st.floats(-3, 3), min_size=6, max_size=6),
        st.sampled_from([1.0, 0.9, 0.5]),
    )
)


@settings(max_examples=60, deadline=None)
@given(small_mdp)
def test_epic_matches_a_plain_loop(data):
    starts, ends, _, gamma = data
    before, after = np.array(starts)[:, None], np.array(ends)[:, None]
    states = np.array(sorted(set(starts)))[:, None]
    np.testing.assert_allclose(
        epic_canonical(gain, before, after, states, gamma), loop_epic(gain, before, after, states, gamma), atol=1e-12
    )


@settings(max_examples=60, deadline=None)
@given(small_mdp)
def test_potential_shaping_leaves_every_distance_zero(data):
    # States 0..5 in one feature; Phi any table over them (EPIC, SRRD) or linear (STARC-LSTD).
    starts, ends, phi, gamma = data
    table = np.array(phi)

    def shaped(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return gain(x, y) + gamma * table[y[:, 0]] - table[x[:, 0]]

    before, after = np.array(starts)[:, None], np.array(ends)[:, None]
    states = np.arange(6)[:, None]
    epic = [epic_canonical(r, before, after, states, gamma) for r in (gain, shaped)]
    np.testing.assert_allclose(epic[0], epic[1], atol=1e-9)
    srrd = [srrd_canonical(r, states, np.array(starts), np.array(ends), gamma, k=4, seed=3) for r in (gain, shaped)]
    np.testing.assert_allclose(srrd[0], srrd[1], atol=1e-9)
    # a reward that is pure shaping has canonical reward 0
    pure = lambda x, y: gamma * table[y[:, 0]] - table[x[:, 0]]  # noqa: E731
    np.testing.assert_allclose(srrd_canonical(pure, states, np.array(starts), np.array(ends), gamma, k=4), 0, atol=1e-9)
    np.testing.assert_allclose(epic_canonical(pure, before, after, states, gamma), 0, atol=1e-9)
    # STARC with LSTD: linear Phi = phi[0] * x; LSTD identifies V (and so cancels Phi) when its
    # matrix sum phi (phi - gamma phi')' is not 0 (with x = 0 at every start it is, and V cannot move)
    features, following = before.astype(float), after.astype(float)
    assume(gamma < 1.0)  # STARC refuses gamma = 1 (test_starc_refuses_gamma_1_and_a_system_without_solution)
    assume(abs(float(features[:, 0] @ (features[:, 0] - gamma * following[:, 0]))) > 1e-6)
    r = gain(before, after)
    terminal = np.zeros(len(r), dtype=bool)
    moved = r + gamma * phi[0] * following[:, 0] - phi[0] * features[:, 0]
    np.testing.assert_allclose(
        starc_canonical(r, features, following, gamma, terminal),
        starc_canonical(moved, features, following, gamma, terminal),
        atol=1e-8,
    )


@settings(max_examples=60, deadline=None)
@given(small_mdp, st.integers(0, 5))
def test_successor_draws_are_observed_successors(data, seed):
    starts, ends, _, _ = data
    state_id, next_id = np.array(starts), np.array(ends)
    of = np.arange(6)
    drawn = successor_samples(state_id, next_id, of, 5, np.random.default_rng(seed))
    for u in range(6):
        observed = {e for s, e in zip(starts, ends) if s == u}
        assert set(drawn[u].tolist()) <= (observed or {u})


# -- on the sample ---------------------------------------------------------------------------------
def test_pair_reward_is_what_scoring_pays():
    corpus = sample_corpus()
    arrays = corpus.decision_arrays()
    rows = np.concatenate([arrays.inventory, arrays.achievement_counts], axis=1).astype(np.int64)
    before, after = decision_rows(arrays)
    for config in (SHAPED, RECOMMENDED, CONSISTENT):
        np.testing.assert_allclose(
            pair_reward(config)(rows[before], rows[after]), score(corpus, config).reward, atol=1e-12
        )
        # SRRD hands it int16 states: the very same floats as from int64 ones
        narrow = pair_reward(config)(rows[before].astype(np.int16), rows[after].astype(np.int16))
        assert np.array_equal(narrow, pair_reward(config)(rows[before], rows[after]))


@pytest.mark.parametrize("kind", ["epic", "starc", "srrd"])
def test_distances_on_the_sample(kind):
    corpus = sample_corpus()
    same = reward_distance(corpus, SHAPED, SHAPED, kind, max_transitions=1500, samples=8)
    assert same.value == pytest.approx(0.0, abs=1e-7)
    # lambda only scales: every distance ignores a positive scale
    scaled = reward_distance(
        corpus, SHAPED, SHAPED.with_changes(indicator_lambda=2.0), kind, max_transitions=1500, samples=8
    )
    assert scaled.value == pytest.approx(0.0, abs=1e-7)
    different = reward_distance(corpus, SHAPED, CONSISTENT, kind, max_transitions=1500, samples=8)
    assert 0.0 < different.value <= 1.0
    assert different.coverage.transitions == 1500 and different.coverage.states > 50


def test_thin_coverage_is_warned_and_bad_input_refused():
    thin = reward_distance(sample_corpus()[:1], SHAPED, CONSISTENT, "srrd")
    assert thin.coverage.transitions < 500 and thin.coverage.warning.startswith("thin coverage")
    epic = reward_distance(sample_corpus(), SHAPED, CONSISTENT, "epic", max_transitions=800, samples=8)
    assert "EPIC's expectations pair states" in epic.coverage.warning
    with pytest.raises(AnalysisError, match="distance must be one of"):
        reward_distance(sample_corpus(), SHAPED, CONSISTENT, "dard")
    with pytest.raises(AnalysisError, match="gamma must be within"):
        reward_distance(sample_corpus(), SHAPED, CONSISTENT, "epic", gamma=2.0)


def test_starc_refuses_gamma_1_and_a_system_without_solution():
    # One feature; a state x = 1 that stays x = 1 paying 1 every decision: its value at gamma is
    # 1 / (1 - gamma). At gamma 0.5 LSTD: A = 1 (1 - 0.5) = 0.5, b = 1: w = 2, V(1) = 2, and
    # C = 1 + 0.5 * 2 - 2 = 0. At gamma 1: A = 1 (1 - 1) = 0, b = 1: no w solves it (the value
    # is infinite), which is what episodes cut at a step limit do to an undiscounted value.
    stay = np.array([[1.0]])
    np.testing.assert_allclose(starc_canonical(np.array([1.0]), stay, stay, 0.5, np.array([False])), [0.0])
    with pytest.raises(AnalysisError, match="STARC needs gamma < 1"):
        starc_canonical(np.array([1.0]), stay, stay, 1.0, np.array([False]))
    # x = 1 -> 2 paying 1 at gamma 0.5: A = 1 (1 - 0.5 * 2) = 0, b = 1: no solution at gamma < 1 either
    with pytest.raises(AnalysisError, match="no solution"):
        starc_canonical(np.array([1.0]), stay, np.array([[2.0]]), 0.5, np.array([False]))
    # the corpus API: STARC's default gamma is 0.99, 1 is refused
    assert reward_distance(sample_corpus(), SHAPED, CONSISTENT, "starc", max_transitions=800).gamma == 0.99
    assert reward_distance(sample_corpus(), SHAPED, CONSISTENT, "epic", max_transitions=800, samples=4).gamma == 1.0
    with pytest.raises(AnalysisError, match="STARC needs gamma < 1"):
        reward_distance(sample_corpus(), SHAPED, CONSISTENT, "starc", gamma=1.0)


def test_the_spread_over_seeds_is_each_seed_run_alone():
    corpus = sample_corpus()
    spread = distance_spread(corpus, SHAPED, CONSISTENT, "epic", seeds=3, first_seed=4, max_transitions=800, samples=4)
    alone = [
        reward_distance(corpus, SHAPED, CONSISTENT, "epic", max_transitions=800, samples=4, seed=seed).value
        for seed in (4, 5, 6)
    ]
    assert spread.values.tolist() == alone
    assert [run.seed for run in spread.runs] == [4, 5, 6] and {run.samples for run in spread.runs} == {4}
    assert spread.low == min(alone) and spread.high == max(alone) and spread.median == sorted(alone)[1]
    # the draws matter: with 4 draws the seeds do not all agree
    assert spread.high > spread.low
    with pytest.raises(AnalysisError, match="seeds must be at least 1"):
        distance_spread(corpus, SHAPED, CONSISTENT, "epic", seeds=0)
    with pytest.raises(AnalysisError, match="samples must be at least 1"):
        reward_distance(corpus, SHAPED, CONSISTENT, "epic", samples=0)
