"""The certificate's sufficient statistics equal the moments summed decision by decision (plain loops)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import REPO

from workbench.analysis.shaping import certify
from workbench.analysis.shaping.certificate import component_events, transition_moments
from workbench.analysis.shaping.cycles import packed_words, row_groups
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import INITIAL_INVENTORY
from workbench.data.episodes import Corpus, Episode
from workbench.data.sample import sample_corpus, search_corpus
from workbench.scoring import prepare
from workbench.scoring.potential import decision_rows, terminal_decisions

CONFIGS = [RewardConfig.from_file(REPO / "configs" / f"{name}.yaml") for name in ("upstream_shaped", "recommended")]
CONFIGS.append(RewardConfig.from_file(REPO / "configs" / "consistent.yaml"))


def loop_moments(corpus: Corpus, config: RewardConfig, gamma: float) -> tuple[list, np.ndarray]:
    """Every decision's design row and rewards, summed one decision at a time."""
    arrays = corpus.decision_arrays()
    decision, column, value, _ = component_events(prepare(corpus), config)
    used = sorted(set(column.tolist()))
    before, after = decision_rows(arrays)
    terminal = terminal_decisions(arrays)
    rewards = np.zeros((len(after), len(used)))
    for d, c, v in zip(decision.tolist(), column.tolist(), value.tolist()):
        rewards[d, used.index(c)] += v
    f = arrays.inventory.shape[1] + arrays.achievement_counts.shape[1]
    gram, cross, sums = np.zeros((f, f)), np.zeros((f, len(used))), np.zeros(f)
    paid, squares = np.zeros(len(used)), np.zeros(len(used))
    for t in range(len(after)):
        x_before = np.concatenate([arrays.inventory[before[t]], arrays.achievement_counts[before[t]] > 0])
        x_after = np.concatenate([arrays.inventory[after[t]], arrays.achievement_counts[after[t]] > 0])
        d = (0.0 if terminal[t] else gamma) * x_after.astype(float) - x_before
        gram += np.outer(d, d)
        cross += np.outer(d, rewards[t])
        sums += d
        paid += rewards[t]
        squares += rewards[t] ** 2
    return [gram, cross, sums, paid, squares], np.array(used)


def assert_equal_moments(corpus: Corpus, config: RewardConfig, gamma: float) -> None:
    fast, used = transition_moments(corpus.decision_arrays(), component_events(prepare(corpus), config), gamma)
    expected, expected_used = loop_moments(corpus, config, gamma)
    assert used.tolist() == expected_used.tolist()
    for got, want in zip((fast.gram, fast.cross, fast.design_sums, fast.paid, fast.squares), expected):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-9)


def test_a_hand_made_episode():
    # Reset, three dos collecting one wood (paid once), then a noop in the same state: at gamma
    # 1 the noop's row is 0 and dropped; at 0.9 it is -0.1 x(s) and kept, weighted once.
    after = {"inventory": {**INITIAL_INVENTORY, "wood": 1}, "achievements_status": {"collect_wood": True}}
    states = [{"inventory": dict(INITIAL_INVENTORY), "achievements_status": {}}, after, after]
    episode = Episode.from_states("three_dos", states, [["do", "do", "do"], ["noop"]], metadata={"policy": "text"})
    for gamma in (1.0, 0.9):
        for config in CONFIGS:
            assert_equal_moments(Corpus([episode]), config, gamma)


@pytest.mark.parametrize("seed", range(4))
def test_random_subsets_of_the_shipped_corpora(seed):
    rng = np.random.default_rng(seed)
    corpus = [sample_corpus(), search_corpus()][seed % 2]
    picked = np.sort(rng.choice(len(corpus), size=3, replace=False))
    subset = corpus[np.isin(np.arange(len(corpus)), picked)]
    gamma = float(rng.choice([1.0, 0.99, float(rng.uniform(0.0, 1.0))]))
    assert_equal_moments(subset, CONFIGS[seed % len(CONFIGS)], gamma)


def test_repeated_episodes_give_repeated_moments_and_the_same_certificate():
    # The sample three times over: every sum triples, the fit and its shares do not move.
    sample = sample_corpus()
    config = CONFIGS[0]
    once, _ = transition_moments(sample.decision_arrays(), component_events(prepare(sample), config), 0.99)
    thrice_corpus = Corpus.concat([sample] * 3)
    thrice, _ = transition_moments(
        thrice_corpus.decision_arrays(), component_events(prepare(thrice_corpus), config), 0.99
    )
    np.testing.assert_allclose(thrice.gram, 3 * once.gram, rtol=1e-12)
    np.testing.assert_allclose(thrice.squares, 3 * once.squares, rtol=1e-12)
    a = certify(sample, config, gamma=0.99).components
    b = certify(thrice_corpus, config, gamma=0.99).components
    np.testing.assert_allclose(b["unexplained_share"], a["unexplained_share"], rtol=1e-8, atol=1e-12)


def test_row_groups_match_a_plain_loop():
    rng = np.random.default_rng(7)
    columns = [rng.integers(0, k, 200) for k in (2, 3, 1, 50, 10**6, 10**6, 10**6, 2)]
    first, group = row_groups(packed_words(columns))
    rows = [tuple(int(c[i]) for c in columns) for i in range(200)]
    for i in range(200):
        assert rows[int(first[group[i]])] == rows[i]
    # two rows share a group exactly when they are equal
    assert len(first) == len(set(rows))
