"""The data model (Episode, Corpus) and the on-disk corpus format (workbench.storage)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

import workbench.storage as storage
from workbench.episodes import Corpus, Episode, EpisodeError, Frames, reset_state_arrays
from workbench.storage import CorpusFormatError, episode_filename, load_corpus, load_episode, save_corpus, save_episode
from workbench.tables import ACHIEVEMENTS, INVENTORY_ITEMS


def make_episode(episode_id: str, decisions: int = 4, *, actions_per_decision: int = 2, frames: bool = False,
                 policy: str = "scripted", seed: int = 0, logged: dict | None = None) -> Episode:
    """A small valid episode with varied values (rng from the seed), frames optional."""
    rng = np.random.default_rng(seed)
    inventory0, counts0 = reset_state_arrays()
    inventory = np.vstack([inventory0, rng.integers(0, 10, (decisions, len(INVENTORY_ITEMS)))])
    counts = np.vstack([counts0, np.cumsum(rng.integers(0, 2, (decisions, len(ACHIEVEMENTS))), axis=0)])
    actions = [list(rng.choice(["noop", "do", "move_left", "place_table"], size=rng.integers(1, actions_per_decision + 1)))
               for _ in range(decisions)]
    episode = Episode(
        id=episode_id, inventory=inventory, achievement_counts=counts, actions=actions,
        env_reward=rng.normal(size=decisions), done=[False] * (decisions - 1) + [True],
        player_pos=rng.integers(0, 64, (decisions + 1, 2)),
        metadata={"source": "recorded", "policy": policy, "seed": seed, "note": {"nested": [1, 2.5, None]}},
        logged=logged,
    )
    if frames:
        images = rng.integers(0, 256, (episode.n_steps + 1, 64, 64, 3), dtype=np.uint8)
        episode.set_frames(images, episode.step_decisions())
    return episode


class CountingLoader:
    """A frames loader that counts its calls: proves what does and does not read frames."""

    def __init__(self, episode: Episode) -> None:
        self.frames = episode.frames
        self.calls = 0

    def __call__(self) -> Frames:
        self.calls += 1
        return self.frames


# -- Episode ----------------------------------------------------------------------------------
def test_episode_needs_a_decision():
    inventory, counts = reset_state_arrays()
    with pytest.raises(EpisodeError, match=r"episode 'empty': has no decisions"):
        Episode(id="empty", inventory=[inventory], achievement_counts=[counts], actions=[], env_reward=[], done=[])


@pytest.mark.parametrize("field, value, words", [
    ("inventory", np.zeros((3, 16)), "inventory has shape (3, 16), expected (5, 16) for 4 decisions"),
    ("achievement_counts", np.zeros((5, 21)), "achievement_counts has shape (5, 21), expected (5, 22)"),
    ("env_reward", np.zeros(5), "env_reward has shape (5,), expected (4,)"),
    ("player_pos", np.zeros((5, 3)), "player_pos has shape (5, 3)"),
    ("actions", [["do"], [], ["do"], ["do"]], "decision 2 has no actions"),
    ("actions", [["do"], ["jump"], ["do"], ["do"]], "decision 2 has unknown action(s) ['jump']"),
])
def test_episode_validation_names_episode_and_problem(field, value, words):
    good = make_episode("ep-1")
    fields = {name: getattr(good, name) for name in ("inventory", "achievement_counts", "actions", "env_reward", "done", "player_pos")}
    fields[field] = value
    with pytest.raises(EpisodeError) as error:
        Episode(id="ep-1", **fields)
    assert "episode 'ep-1'" in str(error.value) and words in str(error.value)


def test_frames_must_fit_the_steps():
    episode = make_episode("ep", frames=False)
    with pytest.raises(EpisodeError, match="recorded without frames"):
        episode.frames
    with pytest.raises(EpisodeError, match=r"expected \(\d+, 64, 64, 3\) uint8"):
        episode.set_frames(np.zeros((episode.n_steps, 64, 64, 3), np.uint8), episode.step_decisions())
    with pytest.raises(EpisodeError, match="uint8"):
        episode.set_frames(np.zeros((episode.n_steps + 1, 64, 64, 3), np.float32), episode.step_decisions())
    with pytest.raises(EpisodeError, match="step_decision has shape"):
        episode.set_frames(np.zeros((episode.n_steps + 1, 64, 64, 3), np.uint8), np.ones(2))


def test_states_and_step_decisions():
    episode = make_episode("ep", decisions=3, actions_per_decision=3)
    states = episode.states()
    assert len(states) == 4 and states[0]["inventory"]["health"] == 9
    assert list(states[1]["achievements_counts"]) == list(ACHIEVEMENTS)
    sizes = [len(d) for d in episode.actions]
    assert episode.step_decisions().tolist() == [d + 1 for d, size in enumerate(sizes) for _ in range(size)]


# -- Corpus -----------------------------------------------------------------------------------
@pytest.fixture
def counted_corpus():
    """Six episodes whose frames come from counting loaders."""
    episodes, loaders = [], []
    for i in range(6):
        episode = make_episode(f"ep-{i}", frames=True, policy="scripted" if i % 2 else "random", seed=i)
        loader = CountingLoader(episode)
        episode._frames, episode.frames_loader = None, loader
        episodes.append(episode)
        loaders.append(loader)
    return Corpus(episodes), loaders


def test_corpus_indexing_selection_and_iteration_never_read_frames(counted_corpus):
    corpus, loaders = counted_corpus
    assert len(corpus) == 6 and corpus.ids == [f"ep-{i}" for i in range(6)]
    assert corpus[0].id == "ep-0" and corpus[-1].id == "ep-5" and corpus["ep-3"].id == "ep-3"
    assert corpus[1:4].ids == ["ep-1", "ep-2", "ep-3"]
    assert corpus[corpus.index.policy == "scripted"].ids == ["ep-1", "ep-3", "ep-5"]
    assert corpus.select(policy="random", seed=[0, 4]).ids == ["ep-0", "ep-4"]
    assert corpus[[5, 0]].ids == ["ep-5", "ep-0"]
    assert [e.id for e in corpus] == corpus.ids
    assert corpus.n_decisions == sum(e.n_decisions for e in corpus)
    assert corpus.index["has_frames"].all()
    assert sum(loader.calls for loader in loaders) == 0
    assert corpus["ep-2"].frames.images.shape[1:] == (64, 64, 3)
    corpus["ep-2"].frames  # cached after the first touch
    assert [loader.calls for loader in loaders] == [0, 0, 1, 0, 0, 0]


def test_corpus_errors():
    corpus = Corpus([make_episode("a"), make_episode("b")])
    with pytest.raises(IndexError):
        corpus[2]
    with pytest.raises(KeyError, match="no episode 'zz'"):
        corpus["zz"]
    with pytest.raises(KeyError, match="no index column 'colour'"):
        corpus.select(colour="red")
    with pytest.raises(IndexError, match="2 entries"):
        corpus[np.array([True])]
    with pytest.raises(ValueError, match="unique"):
        Corpus([make_episode("a"), make_episode("a")])


def test_concat_renames_repeated_ids_without_reading_frames(counted_corpus):
    corpus, loaders = counted_corpus
    both = Corpus.concat([corpus[:2], corpus[:2], Corpus([make_episode("x")])])
    assert both.ids == ["ep-0", "ep-1", "ep-0-2", "ep-1-2", "x"]
    assert both["ep-1-2"].id == "ep-1-2" and both["ep-1"].id == "ep-1"
    assert sum(loader.calls for loader in loaders) == 0


# -- storage ----------------------------------------------------------------------------------
LOGGED = {
    "config": {"enabled": True, "strategy": "per_achievement", "weights": {"collect_wood": 0.8}},
    "stepwise": [{"decision_index": 1, "reward": 0.1 + 0.2, "new_achievements": []}, None, None, {"x": [1, 2]}],
    "decision_rewards": [None] * 4,
    "summary": {"reward_sum": 1e-17},
}


def test_round_trip_is_lossless(tmp_path):
    originals = [make_episode("with-frames", frames=True, logged=LOGGED), make_episode("plain/id:odd", seed=3)]
    save_corpus(Corpus(originals), tmp_path)
    loaded = load_corpus(tmp_path)
    assert loaded.ids == [e.id for e in originals]
    assert loaded.index.equals(Corpus(originals).index)
    for original, copy in zip(originals, loaded):
        for name in ("inventory", "achievement_counts", "achievement_status", "player_pos", "env_reward", "done"):
            np.testing.assert_array_equal(getattr(copy, name), getattr(original, name))
            assert getattr(copy, name).dtype == getattr(original, name).dtype
        assert copy.actions == original.actions
        assert copy.metadata == original.metadata
        assert json.dumps(copy.logged) == json.dumps(original.logged)  # key order and float bits too
        assert copy.has_frames == original.has_frames
    copy = loaded["with-frames"]
    np.testing.assert_array_equal(copy.frames.images, originals[0].frames.images)
    np.testing.assert_array_equal(copy.frames.step_decision, originals[0].frames.step_decision)
    assert (tmp_path / episode_filename("plain/id:odd")).exists()  # unsafe characters replaced


def test_saving_never_overwrites_silently(tmp_path):
    save_corpus(Corpus([make_episode("a")]), tmp_path)
    with pytest.raises(FileExistsError, match=r"already holds episode\(s\) \['a'\]"):
        save_corpus(Corpus([make_episode("a", seed=9), make_episode("b")]), tmp_path)
    assert load_corpus(tmp_path).ids == ["a"]  # refused before anything was written
    with pytest.raises(FileExistsError):
        save_episode(tmp_path, make_episode("a"))
    save_corpus(Corpus([make_episode("b")]), tmp_path)  # adding is fine
    save_corpus(Corpus([make_episode("a", seed=9)]), tmp_path, overwrite=True)
    loaded = load_corpus(tmp_path)
    assert loaded.ids == ["a", "b"] and loaded["a"].metadata["seed"] == 9


def _saved_file(tmp_path, episode_id="ep"):
    save_corpus(Corpus([make_episode(episode_id, frames=True)]), tmp_path)
    return tmp_path / episode_filename(episode_id)


def test_truncated_episode_file_names_the_file(tmp_path):
    path = _saved_file(tmp_path)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CorpusFormatError, match=str(path)):
        load_corpus(tmp_path)[0]


def test_corrupt_bytes_anywhere_give_corpus_format_errors(tmp_path):
    """Damage 64 bytes at 40 places: numpy then raises BadZipFile, zlib.error, ValueError ...;
    every one must surface as a CorpusFormatError naming the file (or, rarely, read fine)."""
    path = _saved_file(tmp_path)
    blob = path.read_bytes()
    failures = 0
    for position in range(0, len(blob) - 64, len(blob) // 40):
        damaged = bytearray(blob)
        damaged[position:position + 64] = bytes(64)
        path.write_bytes(bytes(damaged))
        try:
            episode = load_episode(path)
            episode.frames
        except CorpusFormatError as error:
            assert str(path) in str(error)
            failures += 1
    assert failures > 30


def test_schema_version_mismatch_is_reported_as_such(tmp_path):
    path = _saved_file(tmp_path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["meta"]))
    arrays["meta"] = np.array(json.dumps({**meta, "schema_version": 99}))
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)
    with pytest.raises(CorpusFormatError, match=rf"^{path}: schema_version 99; this workbench reads 1$"):
        load_episode(path)


def test_missing_array_and_missing_file_name_the_file(tmp_path):
    path = _saved_file(tmp_path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if k != "inventory"}
    path.unlink()
    with pytest.raises(CorpusFormatError, match=f"{path}: episode file not found"):
        load_episode(path)
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)
    with pytest.raises(CorpusFormatError, match=rf"{path}: missing array\(s\) 'inventory'"):
        load_episode(path)


def test_bad_index_names_the_file(tmp_path):
    with pytest.raises(CorpusFormatError, match="corpus.json: not found"):
        load_corpus(tmp_path)
    (tmp_path / "corpus.json").write_text('{"format": "crafter-workbench-corpus",\n "schema_version": ')
    with pytest.raises(CorpusFormatError, match=r"corpus.json: line 2: not valid JSON"):
        load_corpus(tmp_path)


def test_opening_a_thousand_episode_corpus_is_fast(tmp_path, monkeypatch):
    """Opening and selecting read ``corpus.json`` only. (The index is written directly: saving
    1,000 files with their fsyncs would measure the disk, not the opening.)"""
    template = make_episode("template", decisions=50)
    save_episode(tmp_path, template)
    row = template.index_row()
    storage.write_index(tmp_path, [
        (episode_filename("template"), {**row, "episode": f"ep-{i:04d}", "seed": i}) for i in range(1000)
    ])
    reads = []
    monkeypatch.setattr(storage, "load_episode", lambda path: reads.append(path))
    started = time.perf_counter()
    corpus = load_corpus(tmp_path)
    subset = corpus.select(seed=list(range(0, 1000, 7)))
    elapsed = time.perf_counter() - started
    assert len(corpus) == 1000 and len(subset) == 143 and corpus.n_decisions == 50_000
    assert reads == []  # opening and selecting read the index only
    assert elapsed < 1.0, f"opening a 1,000-episode corpus took {elapsed:.2f} s"
    monkeypatch.undo()
    # Every row points at the one template file: reading it is refused, since the file holds
    # another episode than the row names.
    with pytest.raises(CorpusFormatError, match="holds episode 'template', but corpus.json lists it as 'ep-0007'"):
        subset[1]


def test_following_scores_against_the_previous_episodes_end():
    previous, episode = make_episode("first", seed=1), make_episode("second", seed=2)
    carried = episode.following(previous)
    assert carried.metadata["follows"] == "first"
    for name in ("inventory", "achievement_counts", "achievement_status", "player_pos"):
        np.testing.assert_array_equal(getattr(carried, name)[0], getattr(previous, name)[-1])
        np.testing.assert_array_equal(getattr(carried, name)[1:], getattr(episode, name)[1:])
    assert carried.actions == episode.actions and carried.id == "second"
    assert "follows" not in episode.metadata  # the original is untouched


def test_groups_label_episodes_by_an_index_column():
    corpus = Corpus([make_episode("a", policy="farmer"), make_episode("b", policy="scripted", seed=3)])
    assert corpus.groups("policy").to_dict() == {"a": "farmer", "b": "scripted"}
    assert corpus.groups("seed").to_dict() == {"a": "0", "b": "3"}  # text: a label, not a number
    with pytest.raises(KeyError, match="no index column 'strategy'; columns are"):
        corpus.groups("strategy")


def test_an_episode_file_must_hold_the_episode_its_index_row_names(tmp_path):
    save_corpus(Corpus([make_episode("a"), make_episode("b", seed=2)]), tmp_path)
    # Swap the two files, as a hand-edited or half-copied folder might.
    path_a, path_b = tmp_path / episode_filename("a"), tmp_path / episode_filename("b")
    blob = path_a.read_bytes()
    path_a.write_bytes(path_b.read_bytes())
    corpus = load_corpus(tmp_path)
    with pytest.raises(CorpusFormatError, match=rf"{path_a}: holds episode 'b', but corpus.json lists it as 'a'"):
        corpus["a"]
    path_a.write_bytes(blob)
    assert load_corpus(tmp_path)["a"].id == "a"


def test_saving_streams_frames_instead_of_keeping_them(tmp_path):
    save_corpus(Corpus([make_episode("a", frames=True), make_episode("b", frames=True, seed=2)]), tmp_path / "one")
    lazy = load_corpus(tmp_path / "one")
    lazy.save(tmp_path / "two")
    assert all(episode._frames is None for episode in lazy)  # read for writing, not kept
    copied = load_corpus(tmp_path / "two")
    np.testing.assert_array_equal(copied["b"].frames.images, lazy["b"].frames.images)
    assert lazy["b"]._frames is not None  # touching .frames keeps them, as before
