"""The fast paths (a corpus opened from disk: events read from its events tables, or streamed from
its decisions tables in batches; a re-score of a prepared corpus after a change) give what plain
``score`` gives on the same episodes in memory, bit for bit: every array, the episodes table
(columns in order), each summary (keys in order)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers.episodes import make_episode, open_from_decisions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import Corpus, Episode
from workbench.data.sample import sample_corpus
from workbench.data.storage import load_corpus, save_corpus, stream
from workbench.scoring import prepare, score

REPO_CONFIGS = ["upstream_shaped.yaml", "recommended.yaml", "consistent.yaml"]


def same_bits(got, want) -> None:
    """Two score results equal bit for bit (NaN, -0.0 and dtypes included)."""
    for name in ("reward", "base", "resource", "indicator", "reward_sum"):
        a, b = np.asarray(getattr(got, name)), np.asarray(getattr(want, name))
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    pd.testing.assert_frame_equal(got.episodes, want.episodes, check_exact=True)
    for episode_id in want.episodes["episode"]:
        mine, theirs = got.summary(episode_id), want.summary(episode_id)
        assert list(mine) == list(theirs) and repr(mine) == repr(theirs)


def configs(repo) -> list[RewardConfig]:
    loaded = [RewardConfig.from_file(repo / "configs" / name) for name in REPO_CONFIGS]
    quirky = RewardConfig(  # negative lambda (-0.0 for decisions that pay nothing), limits, overrides
        strategy="per_achievement",
        weights={"collect_wood": -0.7, "place_table": 2.5, "collect_diamond": 1e-9},
        k_limits={"collect_wood": 0, "collect_sapling": 2, "eat_cow": -1},
        indicator_lambda=-0.5,
    )
    return [*loaded, quirky]


@pytest.mark.parametrize(("batch", "events_tables"), [(5, False), (1 << 16, False), (1 << 16, True)])
@pytest.mark.parametrize("kind", ["random", "real"])
def test_opened_and_rescored_corpora_score_as_plain_score_bit_for_bit(
    tmp_path, monkeypatch, batch, events_tables, kind
):
    from helpers import REPO

    monkeypatch.setattr(stream, "STREAM_BATCH", batch)  # batches that cut episodes anywhere
    if not events_tables:  # else each part's events are read from its events table
        open_from_decisions(monkeypatch)
    if kind == "random":
        memory = Corpus([make_episode(f"r{i}", decisions=40 + 37 * i, seed=100 + i) for i in range(8)])
    else:
        memory = Corpus(list(sample_corpus()))  # episodes in memory: events from whole columns
    save_corpus(memory, tmp_path / "corpus")
    opened = load_corpus(tmp_path / "corpus")
    prepared = prepare(opened)
    first, *others = configs(REPO)
    same_bits(score(opened, first), score(Corpus(list(memory)), first))
    for config in others:  # each a re-score of the prepared corpus: the slider's path
        same_bits(score(prepared, config), score(Corpus(list(memory)), config))


# -- a weight slider's re-scores: the resource part is kept, the credits recomputed ---------------
@st.composite
def stepped_episodes(draw, index: int) -> Episode:
    """Random states over a few names: status either counts > 0 (every unlock is a gain) or
    drawn freely (names unlock without a count rising, re-unlock, and k-limits above 1 act)."""
    n = draw(st.integers(1, 9))
    counts = np.cumsum(draw(hnp.arrays(np.int32, (n + 1, 22), elements=st.integers(0, 2))), axis=0)
    counts[:, 5:] = 0
    inventory = draw(hnp.arrays(np.int32, (n + 1, 16), elements=st.integers(0, 9)))
    status = None
    if draw(st.booleans()):
        status = np.zeros((n + 1, 22), dtype=bool)
        status[:, :4] = draw(hnp.arrays(bool, (n + 1, 4)))
    return Episode(
        id=f"e{index}",
        inventory=inventory,
        achievement_counts=counts,
        achievement_status=status,
        actions=[["noop"]] * n,
        env_reward=np.zeros(n),
        done=np.zeros(n, bool),
    )


NAMES = st.sampled_from(["collect_coal", "collect_diamond", "collect_drink", "collect_iron", "collect_wood"])
WEIGHTS = st.one_of(st.floats(-3, 3), st.sampled_from([0.0, -0.0, 1e-300, -1e-300]))
SLIDER_MOVES = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "weights": st.dictionaries(NAMES, WEIGHTS, max_size=4),
            "k_limits": st.dictionaries(NAMES, st.sampled_from([-1, 0, 1, 2, 3]), max_size=4),
            "indicator_lambda": st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.5, -0.25]),
            "strategy": st.sampled_from(["per_achievement", "consistent"]),
            "resource_overrides": st.fixed_dictionaries(
                {},
                optional={
                    "inventory": st.dictionaries(st.sampled_from(["wood", "health", "stone"]), WEIGHTS, max_size=2),
                    "achievement_count_default": WEIGHTS,
                },
            ),
        },
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=4).flatmap(
        lambda sizes: st.tuples(*[stepped_episodes(i) for i in range(len(sizes))])
    ),
    SLIDER_MOVES,
)
def test_a_sequence_of_rescores_equals_plain_score_each_time(episodes, moves):
    """Each move changes some of the config (achievement weights, k-limits, lambda, strategy,
    resource weights); every re-score of the one prepared corpus (which keeps the last resource
    part) equals ``score`` of a fresh corpus (nothing kept), bit for bit."""
    corpus = Corpus(list(episodes))
    prepared = prepare(corpus)
    config = RewardConfig(strategy="per_achievement")
    for move in moves:
        config = config.with_changes(**move)
        same_bits(score(prepared, config), score(Corpus(list(episodes)), config))


def test_a_credit_and_a_resource_reward_add_as_the_task_app_adds_them():
    """Hand case: one decision unlocks collect_wood (count 0 -> 1) and gains 2 wood. The task
    app pays credit + (0.0 + 0.1 * 2 + 0.08 * 1); a re-score after the credit's weight changes
    keeps the resource part and adds the new credit to it."""
    counts = np.zeros((2, 22), np.int32)
    counts[1, ACHIEVEMENTS.index("collect_wood")] = 1
    inventory = np.zeros((2, 16), np.int32)
    inventory[:, INVENTORY_ITEMS.index("health")] = 9
    inventory[1, INVENTORY_ITEMS.index("wood")] = 2
    episode = Episode(
        id="a",
        inventory=inventory,
        achievement_counts=counts,
        actions=[["do"]],
        env_reward=np.ones(1),
        done=np.ones(1, bool),
    )
    prepared = prepare(Corpus([episode]))
    resource = 0.0 + 0.1 * 2 + 0.08 * 1
    for weight in (1.0, 0.3, -0.7):
        config = RewardConfig(strategy="per_achievement", weights={"collect_wood": weight})
        scores = score(prepared, config)
        assert scores.base.tolist() == [weight + resource]
        assert scores.resource.tolist() == [resource]
        assert scores.episodes["indicator_sum"].tolist() == [1.0]


def test_editing_a_scores_tables_leaves_the_kept_resource_part_alone():
    """The resource part is shared by the re-scores of one prepared corpus: a user editing one
    ``Scores``' episodes table or per-decision arrays changes nothing the next re-score shows."""
    sample = sample_corpus()
    prepared = prepare(sample)
    config = RewardConfig(strategy="per_achievement")
    first = score(prepared, config)
    first.episodes["indicator_sum"] += 1
    first.episodes["resource_reward"] *= 2
    first.resource[:] = -1.0
    first.indicator[:] = 7
    moved = config.with_changes(weights={"collect_wood": 0.5})
    same_bits(score(prepared, moved), score(Corpus(list(sample)), moved))
