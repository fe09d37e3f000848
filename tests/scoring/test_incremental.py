"""LiveScores: appending episodes gives exactly what scoring the whole corpus gives."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from helpers.episodes import make_episode
from helpers.hand_episodes import HONEST, hand_episode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.core.config import RewardConfig
from workbench.core.config_io import read_table
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus
from workbench.errors import CorpusError
from workbench.scoring import score
from workbench.scoring.incremental import KIND_COLUMNS, LiveScores

CONFIGS = {
    name: RewardConfig.from_dict(read_table(REPO / "configs" / f"{name}.yaml"))
    for name in ("recommended", "consistent", "upstream_shaped")
}
#: Consistent with a negative lambda (a decision that paid nothing is -0.0) and per_achievement
#: with k-limits and lambda 0.5: the corners of the recombination.
CONFIGS["negative"] = RewardConfig.from_dict({"enabled": True, "strategy": "consistent", "indicator_lambda": -2.0})
CONFIGS["limited"] = RewardConfig.from_dict(
    {
        "enabled": True,
        "strategy": "per_achievement",
        "indicator_lambda": 0.5,
        "weights": {"collect_stone": 3.0, "place_stone": 0.25},
        "k_limits": {"collect_stone": 2},
    }
)

SCORE_COLUMNS = [
    "decisions",
    "steps",
    "env_return",
    "reward_sum",
    "indicator_sum",
    "resource_reward",
    "new_achievements_total",
    "unique_achievements_total",
    "unique_achievements",
    "final_achievements",
    "counts",
]


@pytest.fixture(scope="module")
def sample() -> Corpus:
    return sample_corpus()


def assert_equals_full(live: LiveScores) -> None:
    """Every config's rows equal ``score`` of the whole corpus, float bit for bit."""
    table = live.episodes()
    corpus = live.corpus
    assert len(table) == len(corpus) * len(live.configs)
    for name, config in live.configs.items():
        rows = table[table["config"] == name].reset_index(drop=True)
        full = score(corpus, config).episodes
        assert rows["episode"].tolist() == full["episode"].tolist() == corpus.ids
        assert rows["arrival"].tolist() == list(range(len(corpus)))
        for column in SCORE_COLUMNS:
            assert rows[column].tolist() == full[column].tolist(), column
        # np.array_equal on float bits would treat -0.0 == 0.0; compare the bytes too
        assert rows["return"].to_numpy().tobytes() == full["reward_sum"].to_numpy().tobytes()


def split_points(n: int, cuts: list[int]) -> list[tuple[int, int]]:
    edges = sorted({0, n, *(c % (n + 1) for c in cuts)})
    return list(zip(edges[:-1], edges[1:]))


def test_appending_the_sample_in_pieces_equals_scoring_it_whole(sample: Corpus) -> None:
    live = LiveScores(sample[:3], CONFIGS)
    for start, stop in [(3, 4), (4, 9), (9, len(sample))]:
        live.append(sample[start:stop])
    assert_equals_full(live)
    assert live.corpus.ids == sample.ids


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(0, 40), max_size=5), initial=st.integers(0, 4))
def test_any_split_into_appends_equals_full_scoring(sample: Corpus, cuts: list[int], initial: int) -> None:
    episodes = Corpus([make_episode(f"e{i}", decisions=1 + i % 7, seed=i) for i in range(12)])
    joined = Corpus.concat([sample[:4], episodes])
    n = len(joined)
    live = LiveScores(joined[: min(initial, n)], {"limited": CONFIGS["limited"], "negative": CONFIGS["negative"]})
    for start, stop in split_points(n, cuts):
        if stop <= min(initial, n):
            continue
        live.append(joined[max(start, min(initial, n)) : stop])
    assert_equals_full(live)


def test_an_episode_following_another_scores_as_full_scoring_does() -> None:
    first = hand_episode("first", HONEST, policy="honest")
    second = hand_episode("second", HONEST[:3], policy="honest")
    second.metadata["follows"] = "first"  # one rollout, on_done = "reset"
    live = LiveScores(Corpus([first]), CONFIGS)
    live.append(Corpus([second]))
    assert_equals_full(live)


def test_hand_counted_returns() -> None:
    # HONEST unlocks at decisions 1 (collect_wood), 2 (collect_stone), 3 (place_stone) and 7
    # (collect_drink); the later stone counts turn no name true. Consistent pays lambda per
    # unlocking decision: 4 * -2.0.
    live = LiveScores(Corpus(), {"negative": CONFIGS["negative"]})
    live.append(Corpus([hand_episode("honest", HONEST, policy="honest")]))
    row = live.episodes().iloc[0]
    assert row["return"] == -8.0
    assert row[KIND_COLUMNS["indicator"]] == -8.0
    assert row[KIND_COLUMNS["achievement"]] == 0.0


def test_kind_totals_are_the_components_summed_by_episode_and_kind(sample: Corpus) -> None:
    live = LiveScores(sample[:5], CONFIGS)
    live.append(sample[5:])
    table = live.episodes()
    for name, config in CONFIGS.items():
        components = score(sample, config).components
        expected = components.pivot_table(
            index="episode", columns="kind", values="scaled", aggfunc="sum", observed=False
        )
        rows = table[table["config"] == name].set_index("episode")
        for kind, column in KIND_COLUMNS.items():
            want = expected[kind].reindex(rows.index).fillna(0.0) if kind in expected else 0.0
            np.testing.assert_allclose(rows[column], want, rtol=1e-12, atol=1e-12)
        # the kinds add up to the return (up to summation order)
        np.testing.assert_allclose(rows[list(KIND_COLUMNS.values())].sum(axis=1), rows["return"], atol=1e-9)


def test_add_config_scores_what_is_held_and_what_comes(sample: Corpus) -> None:
    live = LiveScores(sample[:4], {"recommended": CONFIGS["recommended"]})
    live.append(sample[4:8])
    live.add_config("limited", CONFIGS["limited"])
    live.append(sample[8:])
    assert list(live.configs) == ["recommended", "limited"]
    assert_equals_full(live)
    with pytest.raises(CorpusError, match="'limited' is already"):
        live.add_config("limited", CONFIGS["negative"])


def test_rows_are_by_arrival_then_config_and_carry_metadata() -> None:
    a = make_episode("a", seed=1)
    a.metadata.update({"training_step": 2048, "wall_time": 1700000000.5})
    b = make_episode("b", seed=2)
    b.metadata["created"] = "2026-01-02T03:04:05+00:00"
    live = LiveScores(Corpus([a, b]), {"x": CONFIGS["recommended"], "y": CONFIGS["negative"]})
    table = live.episodes()
    assert table[["episode", "config"]].values.tolist() == [["a", "x"], ["a", "y"], ["b", "x"], ["b", "y"]]
    assert table["training_step"].tolist()[:2] == [2048, 2048] and table["training_step"].isna().tolist()[2:] == [
        True,
        True,
    ]
    # 2026-01-02T03:04:05Z: 20455 days after the epoch, plus 3h 4m 5s
    assert table["wall_time"].tolist() == [1700000000.5, 1700000000.5, 20455 * 86400 + 11045.0, 20455 * 86400 + 11045.0]
    assert table["policy"].tolist() == ["scripted"] * 4


def test_repeated_ids_are_refused_and_nothing_is_added(sample: Corpus) -> None:
    live = LiveScores(sample[:2], {"r": CONFIGS["recommended"]})
    with pytest.raises(CorpusError, match=repr(sample.ids[1])):
        live.append(sample[1:3])
    assert len(live) == 2 and live.corpus.ids == sample.ids[:2]


def test_empty_start_empty_append_and_no_configs() -> None:
    live = LiveScores(Corpus(), {"r": CONFIGS["recommended"]})
    assert live.episodes().empty and len(live.corpus) == 0
    calls: list[Corpus] = []
    live.on_append(calls.append)
    live.append(Corpus())
    assert calls == []
    with pytest.raises(CorpusError, match="at least one config"):
        LiveScores(Corpus(), {})


def test_on_append_gets_the_new_episodes_after_they_are_readable(sample: Corpus) -> None:
    live = LiveScores(sample[:2], {"r": CONFIGS["recommended"]})
    seen: list[tuple[list[str], int]] = []
    live.on_append(lambda new: seen.append((new.ids, len(live.episodes()))))
    live.append(sample[2:4])
    assert seen == [(sample.ids[2:4], 4)]


def test_a_reader_thread_sees_whole_appends_only(sample: Corpus) -> None:
    live = LiveScores(Corpus(), {"r": CONFIGS["recommended"], "n": CONFIGS["negative"]})
    stop = threading.Event()
    sizes: list[int] = []

    def read() -> None:
        while not stop.is_set():
            table = live.episodes()
            sizes.append(len(table))
            if len(table):
                assert table.groupby("episode", sort=False).size().eq(2).all()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(len(sample)):
            live.append(sample[i : i + 1])
    finally:
        stop.set()
        reader.join(timeout=30)
    assert all(size % 2 == 0 for size in sizes)
    assert_equals_full(live)


def test_the_table_is_a_copy(sample: Corpus) -> None:
    live = LiveScores(sample[:2], {"r": CONFIGS["recommended"]})
    table = live.episodes()
    table.loc[0, "return"] = 1e9
    assert live.episodes().loc[0, "return"] != 1e9
    assert isinstance(table, pd.DataFrame)
