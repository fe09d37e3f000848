"""workbench.analysis.shaping and workbench.scoring.potential: the shaping certificate on hand MDPs and the shipped corpora."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import REPO
from helpers.hand_episodes import hand_episode
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.analysis.shaping import (
    certify,
    fit_potential,
    positive_cycles,
    previous_visits,
    segment_or,
    shaping_design,
)
from workbench.analysis.shaping.cycles import paid_once
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus, search_corpus
from workbench.errors import AnalysisError, ConfigError
from workbench.scoring import score
from workbench.scoring.potential import potential_shaping, shaping_payments

SHAPED = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")


# -- hand-made MDPs -------------------------------------------------------------------------------
def test_a_farming_loop_is_unexplained_by_hand():
    # One feature (stones held). Mine, place, mine, place: 0 -> 1 -> 0 -> 1 -> 0; the task app pays
    # 0.15 per stone gained and nothing for placing it. gamma = 1: design rows +1, -1, +1, -1.
    # theta = sum(d r) / sum(d^2) = (0.15 + 0.15) / 4 = 0.075; fitted shaping +-0.075;
    # residual 0.075 on every step: |e|^2 = 4 * 0.075^2 = 0.0225, |r|^2 = 2 * 0.15^2 = 0.045,
    # so |e| / |r| = sqrt(1/2); paid 0.3, explained 0.075 - 0.075 + 0.075 - 0.075 = 0, unexplained 0.3.
    before = np.array([[0.0], [1.0], [0.0], [1.0]])
    after = np.array([[1.0], [0.0], [1.0], [0.0]])
    fit = fit_potential(shaping_design(before, after, 1.0), np.array([[0.15], [0.0], [0.15], [0.0]]))
    assert fit.theta[0, 0] == pytest.approx(0.075)
    assert fit.residual[0] == pytest.approx(0.0225)
    assert fit.unexplained_signal[0] == pytest.approx(np.sqrt(0.5))
    assert fit.paid[0] == pytest.approx(0.3) and fit.explained[0] == pytest.approx(0.0, abs=1e-15)
    assert fit.unexplained[0] == pytest.approx(0.3)
    # The same states as a cycle: the loop back to 0 stones (rows 0, 2, 4) paid 0.15 twice.
    states = np.array([[0], [1], [0], [1], [0]])
    start, stop, paid = positive_cycles(states, np.zeros(5, dtype=int), np.array([0.0, 0.15, 0.0, 0.15, 0.0]))
    # Row 2 revisits row 0 (paid 0.15 + 0), row 3 revisits row 1 (0 + 0.15), row 4 revisits row 2.
    assert start.tolist() == [0, 1, 2] and stop.tolist() == [2, 3, 4]
    np.testing.assert_allclose(paid, [0.15, 0.15, 0.15])


def test_pure_potential_shaping_leaves_nothing_unexplained_by_hand():
    # Phi(s) = 2 * x0 - x1, gamma 0.5, three transitions; r = 0.5 Phi(s') - Phi(s):
    # (1,0)->(0,1): 0.5 * -1 - 2 = -2.5; (0,1)->(2,2): 0.5 * 2 + 1 = 2; (2,2)->(terminal): 0 - 2 = -2.
    before = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    after = np.array([[0.0, 1.0], [2.0, 2.0], [5.0, 5.0]])
    terminal = np.array([False, False, True])
    rewards = np.array([[-2.5], [2.0], [-2.0]])
    fit = fit_potential(shaping_design(before, after, 0.5, terminal), rewards)
    np.testing.assert_allclose(fit.theta[:, 0], [2.0, -1.0])
    assert fit.residual[0] == pytest.approx(0.0, abs=1e-20)
    assert fit.unexplained[0] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(potential_shaping(before, after, np.array([2.0, -1.0]), 0.5, terminal), rewards[:, 0])


def test_cycles_compare_with_the_latest_visit_and_stay_in_their_episode():
    # Episode 0 visits A, B, A, C, A; rewards of the decisions leading to rows: 0, .15, 0, .2, -.5.
    # Row 2 revisits row 0 having paid .15 (positive); row 4 revisits row 2 having paid -.3.
    # Episode 1 starts in A again: not a revisit of episode 0's A.
    states = np.array([[0, 0], [1, 0], [0, 0], [0, 1], [0, 0], [0, 0]])
    episode = np.array([0, 0, 0, 0, 0, 1])
    start, stop, paid = positive_cycles(states, episode, np.array([0.0, 0.15, 0.0, 0.2, -0.5, 0.0]))
    assert (start.tolist(), stop.tolist()) == ([0], [2])
    np.testing.assert_allclose(paid, [0.15])
    assert previous_visits(states, episode).tolist() == [-1, -1, 0, -1, 2, -1]


# -- plain loops and properties -------------------------------------------------------------------
def loop_fit(before, after, gamma, rewards):
    """Normal equations built entry by entry, solved by numpy's SVD least squares (not pinv)."""
    n, f = len(before), len(before[0])
    design = [[gamma * after[t][j] - before[t][j] for j in range(f)] for t in range(n)]
    theta = np.linalg.lstsq(np.array(design), rewards, rcond=None)[0]
    residual = [sum((rewards[t][0] - sum(design[t][j] * theta[j][0] for j in range(f))) ** 2 for t in range(n))]
    return theta, residual


transitions = st.integers(2, 25).flatmap(
    lambda n: st.tuples(
        st.lists(st.lists(st.integers(0, 4), min_size=3, max_size=3), min_size=n, max_size=n),
        st.lists(st.lists(st.integers(0, 4), min_size=3, max_size=3), min_size=n, max_size=n),
        st.lists(st.floats(-1, 1), min_size=n, max_size=n),
    )
)


@settings(max_examples=100, deadline=None)
@given(transitions, st.sampled_from([1.0, 0.9, 0.5]), st.lists(st.floats(-2, 2), min_size=3, max_size=3))
def test_fit_matches_a_plain_loop_and_potentials_leave_the_residual_unchanged(data, gamma, phi):
    before, after = np.array(data[0], dtype=float), np.array(data[1], dtype=float)
    rewards = np.array(data[2])[:, None]
    design = shaping_design(before, after, gamma)
    fit = fit_potential(design, rewards)
    _, residual = loop_fit(before.tolist(), after.tolist(), gamma, rewards)
    assert fit.residual[0] == pytest.approx(residual[0], abs=1e-9)
    # Adding gamma Phi(s') - Phi(s) for a random linear Phi changes neither the residual nor the
    # unexplained total (the fit absorbs it).
    shaped = rewards + potential_shaping(before, after, np.array(phi), gamma)[:, None]
    moved = fit_potential(design, shaped)
    assert moved.residual[0] == pytest.approx(fit.residual[0], abs=1e-8)
    assert moved.unexplained[0] == pytest.approx(fit.unexplained[0], abs=1e-8)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=30), st.integers(1, 3))
def test_previous_visits_match_a_plain_loop(rows, n_episodes):
    states = np.array(rows)
    episode = np.sort(np.arange(len(rows)) % n_episodes)
    expected = []
    for r in range(len(rows)):
        earlier = [q for q in range(r) if episode[q] == episode[r] and rows[q] == rows[r]]
        expected.append(earlier[-1] if earlier else -1)
    assert previous_visits(states, episode).tolist() == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2**38), min_size=1, max_size=20), st.data())
def test_segment_or_matches_a_plain_loop(values, data):
    bits = np.array(values, dtype=np.uint64)
    n = len(values)
    ranges = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=10))
    start = np.array([min(a, b) for a, b in ranges], dtype=np.int64)
    stop = np.array([max(a, b) for a, b in ranges], dtype=np.int64)
    expected = []
    for a, b in zip(start, stop):
        acc = 0
        for v in values[a:b]:
            acc |= v
        expected.append(acc)
    assert segment_or(bits, start, stop).tolist() == expected


def test_bad_input_names_the_problem():
    with pytest.raises(AnalysisError, match="gamma must be within"):
        shaping_design(np.zeros((2, 1)), np.zeros((2, 1)), 1.5)
    with pytest.raises(AnalysisError, match="one shape"):
        shaping_design(np.zeros((2, 1)), np.zeros((3, 1)), 1.0)
    with pytest.raises(AnalysisError, match="rewards must be"):
        fit_potential(np.zeros((2, 1)), np.zeros((3, 1)))
    with pytest.raises(ConfigError, match="gamma must be within"):
        shaping_payments(sample_corpus().decision_arrays(), SHAPED, -0.1)
    with pytest.raises(AnalysisError, match="no index column"):
        certify(sample_corpus(), SHAPED, by="team")


# -- the shipped corpora --------------------------------------------------------------------------
SPEC_ITEMS = {"wood": 0.10, "sapling": 0.08, "stone": 0.15, "coal": 0.18, "iron": 0.22, "food": 0.07, "drink": 0.07}
SPEC_ITEMS |= {"energy": 0.04, "wood_pickaxe": 0.40, "stone_pickaxe": 0.55, "iron_pickaxe": 0.75, "wood_sword": 0.35}
SPEC_ITEMS |= {"stone_sword": 0.50, "iron_sword": 0.70}
SPEC_COUNTS = {"collect_wood": 0.08, "collect_sapling": 0.06, "collect_stone": 0.10, "collect_coal": 0.12}
SPEC_COUNTS |= {"collect_iron": 0.14, "collect_drink": 0.06, "collect_food": 0.06, "collect_plant": 0.06}


def test_the_counterpart_telescopes_to_phi_end_minus_phi_reset():
    # At gamma = 1 an episode's shaping sums to Phi(last state) - Phi(reset state), Phi(last) = 0
    # after a death; Phi by hand: lambda 0.5 times the spec's tables (reward.md), plain loops.
    def phi(inventory, counts):
        total = sum(SPEC_ITEMS.get(item, 0.05) * int(n) for item, n in zip(INVENTORY_ITEMS, inventory))
        return 0.5 * (total + sum(SPEC_COUNTS.get(a, 0.05) for a, n in zip(ACHIEVEMENTS, counts) if n > 0))

    corpus = sample_corpus()
    payments = shaping_payments(corpus.decision_arrays(), SHAPED, 1.0)
    start = 0
    for episode in corpus:
        paid = payments[start : start + episode.n_decisions].sum()
        start += episode.n_decisions
        died = episode.inventory[-1][INVENTORY_ITEMS.index("health")] == 0
        end = 0.0 if died else phi(episode.inventory[-1], episode.achievement_counts[-1])
        assert paid == pytest.approx(end - phi(episode.inventory[0], episode.achievement_counts[0]), abs=1e-9)


@pytest.mark.parametrize("corpus", [sample_corpus, search_corpus], ids=["sample", "search_corpus"])
def test_upstream_shaped_certificate_names_the_farmers_loops(corpus):
    corpus = corpus()
    certificate = certify(corpus, SHAPED)
    loops = certificate.loops.set_index("loop")
    stone = "collect_stone / place_stone (+stone)"
    sapling = "collect_sapling / place_plant (+sapling)"
    assert stone in loops.index and sapling in loops.index
    # a stone lap pays lambda (0.15 stone + 0.10 collect_stone + 0.05 place_stone) = 0.15; a
    # sapling lap lambda (0.08 sapling + 0.06 collect_sapling + 0.05 place_plant) = 0.095 (a
    # shortest cycle may hold two laps when they interleave: the typical cycle is one lap)
    cycles = certificate.cycles
    assert cycles.loc[cycles["loop"] == stone, "paid"].median() == pytest.approx(0.15)
    assert cycles.loc[cycles["loop"] == sapling, "paid"].median() == pytest.approx(0.095)
    farmer = set(corpus.index.loc[corpus.index["policy"] == "farmer", "episode"])
    assert farmer & set(cycles.loc[cycles["loop"] == sapling, "episode"])
    # each cycle's pay is the scored reward of its decisions
    reward = score(corpus, SHAPED).decisions
    row = cycles.iloc[0]
    inside = reward[
        (reward["episode"] == row["episode"]) & reward["decision"].between(row["from_decision"] + 1, row["to_decision"])
    ]
    assert inside["reward"].sum() == pytest.approx(row["paid"])
    # The potential-based counterpart pays the farmer no more than the scripted player on average,
    # and on no more seeds than the task app's shaping does (seed by seed it need not: a scripted
    # player that dies loses its potential, Phi(death) = 0).
    means = certificate.counterpart_by_group().set_index("policy")
    assert means.at["farmer", "potential_return"] <= means.at["scripted", "potential_return"]
    table = certificate.counterpart.assign(seed=corpus.index["seed"].to_numpy())
    paired = table.pivot_table(index="seed", columns="policy", values=["potential_return", "return"]).dropna()
    farmer_wins = paired["potential_return"]["farmer"] > paired["potential_return"]["scripted"]
    assert farmer_wins.sum() <= (paired["return"]["farmer"] > paired["return"]["scripted"]).sum()
    # shaping components come first, and the stone item is among what no potential explains
    shaping = certificate.components[certificate.components["role"] == "shaping"]
    assert shaping.index.max() < len(shaping)
    assert shaping.set_index("name").at["stone", "unexplained"] > 0


def test_fifty_stone_laps_count_each_decision_once():
    # 50 laps of mine a stone / place it. Rows (states: inventory, unlocked): 0 reset, 1 stone 1,
    # 2 stone 0 with both unlocked, 3 stone 1 with both unlocked, then rows 4, 6, ..., 100 revisit
    # row 2's state and rows 5, 7, ..., 99 row 3's: 97 cycles (2, 4), (3, 5), ..., (98, 100), each
    # one lap paying lambda (0.15 stone + 0.10 collect_stone + 0.05 place_stone) = 0.15, so the
    # cycles' own totals add to 97 * 0.15 = 14.55. The decisions inside them are 3 .. 100: laps
    # 2 .. 50, 49 laps paying 49 * 0.15 = 7.35, which is what the certificate must report.
    changes = []
    for lap in range(1, 51):
        changes += [{"stone": 1, "collect_stone": lap}, {"stone": 0, "place_stone": lap}]
    corpus = Corpus([hand_episode("stone laps", changes, policy="hacker")])
    certificate = certify(corpus, SHAPED)
    assert len(certificate.cycles) == 97
    assert certificate.cycles["paid"].sum() == pytest.approx(14.55)
    assert certificate.cycle_paid == pytest.approx(7.35)
    # independent: the scored reward of decisions 3 .. 100
    decisions = score(corpus, SHAPED).decisions
    assert decisions.loc[decisions["decision"].between(3, 100), "reward"].sum() == pytest.approx(7.35)
    (loop,) = certificate.loops.itertuples()
    assert loop.cycles == 97 and loop.paid == pytest.approx(7.35)
    assert loop.paid_per_cycle == pytest.approx(0.15)  # what one lap pays (each cycle is one lap)
    # the overlap in a plain pair of cycles: rows 1 .. 3 inside (0, 2) and (1, 3), each once
    assert paid_once(np.array([0.0, 1.0, 2.0, 4.0, 8.0]), np.array([0, 1]), np.array([2, 3])) == 7.0


def test_at_gamma_1_unlock_credits_are_a_potential_difference_and_the_certificate_says_what_that_means():
    # Wood, then a table (HONEST-like, by hand): collect_wood unlocks at decision 1, place_table at
    # decision 3. Phi(s) = lambda * (0.8 [collect_wood unlocked] + w_table [place_table unlocked])
    # gives Phi(s') - Phi(s) = each credit exactly at gamma 1 (the flag rises once and stays),
    # so a potential explains the credits: unexplained 0. At gamma 0.9, 0.9 Phi(s') - Phi(s) pays
    # -0.1 Phi(s) on every later decision, which no credit does: no longer exact, and no note.
    changes = [{"wood": 1, "collect_wood": 1}, {"wood": 2}, {"wood": 1, "place_table": 1}, {"wood": 2}]
    corpus = Corpus([hand_episode("table", changes, policy="honest")])
    at_1 = certify(corpus, SHAPED, gamma=1.0)
    credits = at_1.components[at_1.components["kind"] == "achievement"]
    assert set(credits["name"]) >= {"collect_wood"}
    np.testing.assert_allclose(credits["unexplained"], 0.0, atol=1e-9)
    assert "exactly a potential difference" in at_1.credit_note() and "not make them harmless" in at_1.credit_note()
    assert certify(corpus, SHAPED, gamma=0.9).credit_note() == ""
    consistent = RewardConfig.from_file(REPO / "configs" / "consistent.yaml")
    assert certify(corpus, consistent).credit_note() == ""  # no per-achievement credits
