"""Whole columns: ``Corpus.decision_arrays`` / ``decision_batches`` and the tidy decisions table."""

from __future__ import annotations

import dataclasses
import itertools
import threading

import numpy as np
import pandas as pd
import pytest
from helpers.episodes import assert_same_episode, make_episode, open_from_decisions

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACTIONS, INVENTORY_ITEMS
from workbench.data.episodes import Corpus, DecisionArrays, Episode
from workbench.data.sample import sample_corpus, sample_path
from workbench.data.storage import columnar, load_corpus, save_corpus, stream
from workbench.errors import CorpusFormatError
from workbench.scoring import prepare, score

STATE = ("inventory", "achievement_counts", "achievement_status", "player_pos")


def _expected(corpus: Corpus) -> DecisionArrays:
    return DecisionArrays.from_episodes(list(corpus), corpus.ids)


def _assert_equal(a: DecisionArrays, b: DecisionArrays) -> None:
    assert a.ids == b.ids
    for name in ("lengths", "env_return", *STATE, "env_reward", "done", "action_ids", "action_offsets"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_decision_arrays_of_a_columnar_corpus_are_views_in_narrow_types():
    corpus = sample_corpus()
    arrays = corpus.decision_arrays()
    _assert_equal(arrays, _expected(corpus))
    # every count of the sample is below 256: counts take one byte in memory (uint16 on disk)
    assert arrays.inventory.dtype == np.uint8 and arrays.achievement_counts.dtype == np.uint8
    assert arrays.stored_status is None  # the status is counts > 0, derived, not held
    store = corpus._columns[0][0]
    assert np.shares_memory(arrays.inventory, store.arrays.inventory)  # zero-copy
    # column-major: each state column is one contiguous run, as Arrow and Parquet hold it
    assert all(getattr(arrays, name).strides[0] == getattr(arrays, name).itemsize for name in STATE[:2])
    np.testing.assert_array_equal(arrays.decision_env_reward(), np.concatenate([e.env_reward for e in corpus]))
    np.testing.assert_array_equal(arrays.steps(), corpus.index["steps"].to_numpy())


def test_selections_concatenations_and_batches_give_the_same_columns(tmp_path):
    sample = sample_corpus()
    memory = Corpus([make_episode(f"m{i}", seed=i) for i in range(3)])
    mixed = Corpus.concat([sample[[7, 2, 3]], memory, sample[:2]])
    _assert_equal(mixed.decision_arrays(), _expected(mixed))
    _assert_equal(mixed.decision_arrays(2, 5), _expected(mixed[2:5]))
    batches = list(mixed.decision_batches(max_decisions=500))
    assert [start for start, _ in batches] == sorted({start for start, _ in batches}) and batches[0][0] == 0
    _assert_equal(DecisionArrays.concat([b for _, b in batches]), _expected(mixed))
    assert all(b.n_decisions >= 500 for _, b in batches[:-1])
    save_corpus(mixed, tmp_path)  # a mixed corpus saves through the same columns
    _assert_equal(load_corpus(tmp_path).decision_arrays(), _expected(mixed))


def test_pandas_reads_the_decisions_table_as_a_tidy_table():
    table = pd.read_parquet(sample_path() / "decisions")
    corpus = sample_corpus()
    assert len(table) == corpus.n_decisions + len(corpus)  # a row per decision plus each reset state
    first = table[table["episode"] == corpus.ids[0]]
    episode = corpus[0]
    np.testing.assert_array_equal(first["decision"], np.arange(episode.n_decisions + 1))
    np.testing.assert_array_equal(first[[f"inventory_{i}" for i in INVENTORY_ITEMS]].to_numpy(), episode.inventory)
    assert [[ACTIONS[a] for a in ids] for ids in first["actions"].iloc[1:]] == episode.actions
    np.testing.assert_array_equal(first["env_reward"].iloc[1:], episode.env_reward)
    episodes = pd.read_parquet(sample_path() / "episodes")
    assert episodes["episode"].tolist() == corpus.ids


def test_the_cli_and_widgets_never_read_frames_they_do_not_show(tmp_path, monkeypatch, capsys):
    """The sample's episodes repeated 5 times (16k decisions, all with frames): score, compare,
    verify, the Tuner and Compare work from the columns alone; only the Replayer reads frames,
    and only the shown episode's."""
    from helpers import REPO

    from workbench.cli import main
    from workbench.core.config import RewardConfig
    from workbench.data.storage import extras
    from workbench.views.widgets import Compare, Replayer, Tuner

    sample = sample_corpus()
    big = Corpus.concat([sample] * 5)
    save_corpus(big, tmp_path / "big")
    reads = []
    original = extras.FramesLoader.__call__
    monkeypatch.setattr(extras.FramesLoader, "__call__", lambda self: reads.append(self.episode_id) or original(self))
    shaped, recommended = (str(REPO / "configs" / f"{name}.yaml") for name in ("upstream_shaped", "recommended"))
    assert main(["score", "--config", shaped, str(tmp_path / "big")]) == 0
    assert main(["compare", shaped, recommended, str(tmp_path / "big")]) == 0
    assert main(["verify", str(tmp_path / "big")]) == 3  # the sample holds no task-app log: nothing to check
    capsys.readouterr()
    corpus = load_corpus(tmp_path / "big")
    assert corpus.n_decisions == 5 * sample.n_decisions
    Tuner(corpus, RewardConfig.from_file(shaped))
    Compare(corpus, {"shaped": RewardConfig.from_file(shaped), "recommended": RewardConfig.from_file(recommended)})
    assert reads == []
    Replayer(corpus, RewardConfig.from_file(shaped), episode=corpus.ids[-1])
    assert reads == [corpus.ids[-1]]


def _long_episode(episode_id: str):
    """An episode whose count of one name passes 255 (a long farming run)."""
    episode = make_episode(episode_id, decisions=6)
    counts = episode.achievement_counts.copy()
    counts[3:, 4] += 300
    return Episode(
        id=episode_id,
        inventory=episode.inventory,
        achievement_counts=counts,
        actions=episode.actions,
        env_reward=episode.env_reward,
        done=episode.done,
        player_pos=episode.player_pos,
        metadata=episode.metadata,
    )


def test_counts_past_255_stay_uint16_and_exact(tmp_path):
    long = _long_episode("long")
    save_corpus(Corpus([long, make_episode("short", seed=3)]), tmp_path)
    arrays = load_corpus(tmp_path).decision_arrays()
    assert arrays.achievement_counts.dtype == np.uint16
    np.testing.assert_array_equal(arrays.achievement_counts[: long.n_decisions + 1], long.achievement_counts)


def test_a_table_whose_statistics_understate_its_counts_is_refused(tmp_path, monkeypatch):
    save_corpus(Corpus([_long_episode("long")]), tmp_path)
    # A crafted table's statistics claiming every count is below 256: never a wrapped count.
    monkeypatch.setattr(columnar, "largest_count", lambda root, parts: 100)
    corpus = load_corpus(tmp_path)  # opening keeps only events: counts stay uint16 there
    with pytest.raises(CorpusFormatError, match=r"decisions/part-.*\.parquet: column 'count_\w+' holds 30\d, above"):
        corpus.decision_arrays()  # the state columns, narrowed by the statistics


def _prepared_fields(prepared) -> dict:
    names = [f.name for f in dataclasses.fields(prepared) if not f.name.startswith("_")]
    names += ["episode_of", "decision", "env_reward", "n_unlocked", "n_first"]
    return {name: getattr(prepared, name) for name in names}


@pytest.mark.parametrize(
    ("batch", "events_tables"), [(3, False), (7, False), (64, False), (1 << 16, False), (1 << 16, True)]
)
def test_opening_computes_the_events_scoring_would_from_whole_columns(tmp_path, monkeypatch, batch, events_tables):
    """Read from the events tables, or from the decisions tables in batches that cut episodes
    anywhere (3 rows at a time, ...): exactly the arrays prepare builds from the episodes in memory."""
    monkeypatch.setattr(stream, "STREAM_BATCH", batch)
    if not events_tables:
        open_from_decisions(monkeypatch)
    memory = Corpus([make_episode(f"m{i}", decisions=3 + 5 * i, seed=i) for i in range(6)] + list(sample_corpus())[:3])
    save_corpus(memory, tmp_path)
    opened = load_corpus(tmp_path)
    assert opened.stored_events() is not None
    expected, actual = _prepared_fields(prepare(memory)), _prepared_fields(prepare(opened))
    assert expected.keys() == actual.keys()
    for name, value in expected.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(actual[name], value, err_msg=name)
            assert actual[name].dtype == value.dtype, name
        else:
            assert actual[name] == value, name


def test_opening_and_scoring_never_hold_the_state_columns(tmp_path):
    save_corpus(sample_corpus(), tmp_path)
    corpus = load_corpus(tmp_path)
    store = corpus._columns[0][0]
    score(corpus, RewardConfig()).episodes
    assert not store.has_arrays  # scored from the events kept while reading
    episode = corpus[2]  # an episode asks for the columns: read whole once, then kept
    assert store.has_arrays
    assert_same_episode(episode, sample_corpus()[2])
    # a sub-corpus is not the store's order: it is prepared from the (now held) columns
    subset = corpus[[4, 1]]
    assert subset.stored_events() is None
    pd.testing.assert_frame_equal(
        score(subset, RewardConfig()).episodes, score(sample_corpus()[[4, 1]], RewardConfig()).episodes
    )


def test_read_ahead_hands_over_items_errors_and_stops_when_closed():
    assert list(stream.read_ahead(iter(range(5)))) == [0, 1, 2, 3, 4]

    def failing():
        yield 1
        raise OSError("disk went away")

    items = stream.read_ahead(failing())
    assert next(items) == 1
    with pytest.raises(OSError, match="disk went away"):
        next(items)
    endless = stream.read_ahead(itertools.count())
    assert next(endless) == 0
    endless.close()  # joins the producer: no thread left behind
    assert not [t for t in threading.enumerate() if t.name == "workbench-read-ahead"]


def test_episode_ids_by_part_lists_each_part_and_an_id_written_again_in_both(tmp_path):
    from workbench.data.storage import committed_parts, episode_ids_by_part

    sample = sample_corpus()
    root = tmp_path / "c"
    save_corpus(sample[:2], root)
    save_corpus(sample[2:3], root)
    save_corpus(sample[1:2], root, overwrite=True)  # episode 1 again, in a third part
    by_part = episode_ids_by_part(root)
    assert list(by_part) == committed_parts(root)
    ids = sample.ids
    assert list(by_part.values()) == [[ids[0], ids[1]], [ids[2]], [ids[1]]]
    assert load_corpus(root, parts=list(by_part)[1:2]).ids == [ids[2]]
