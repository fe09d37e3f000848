"""Writes are safe by construction: concurrent appends, crashes, symlinks, crafted rows, colliding ids.

Concurrency and crashes use real processes (two writers at once; a writer killed with SIGKILL).
"""

from __future__ import annotations

import json
import shutil
import signal
import time

import pyarrow.parquet as pq
import pytest
from helpers.episodes import assert_same_episode, make_episode, part_files
from helpers.hostile import python_process

from workbench.data.episodes import Corpus
from workbench.data.storage import load_corpus, save_corpus, save_episode
from workbench.errors import CorpusFormatError, UnsafeCorpusPathError


def test_two_processes_appending_at_once_both_land(tmp_path):
    writer = """
        import sys
        from helpers.episodes import make_episode
        from workbench.data.storage import save_episode
        name = "{name}"
        print("ready", flush=True)
        assert sys.stdin.readline() == "go\\n"  # both interpreters are up: their writes overlap
        for i in range(15):
            save_episode("{root}", make_episode(f"{name}-{{i:02d}}", seed=i))
        try:
            save_episode("{root}", make_episode("shared"))
            print("saved shared")
        except FileExistsError:
            print("shared was taken")
    """
    procs = [python_process(writer.format(name=name, root=tmp_path)) for name in ("left", "right")]
    assert [p.stdout.readline() for p in procs] == ["ready\n", "ready\n"]  # both imported and waiting
    for p in procs:  # released together
        p.stdin.write("go\n")
        p.stdin.flush()
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    corpus = load_corpus(tmp_path)
    assert sorted(corpus.ids) == sorted([f"{n}-{i:02d}" for n in ("left", "right") for i in range(15)] + ["shared"])
    assert sorted(out for out, _ in outputs) == ["saved shared\n", "shared was taken\n"]  # exactly one got the id
    for name in ("left", "right"):
        ours = [i for i in corpus.ids if i.startswith(name)]
        assert ours == sorted(ours)  # each writer's episodes in its own order
        assert_same_episode(corpus[f"{name}-07"], make_episode(f"{name}-07", seed=7))
    assert len(part_files(tmp_path, "episodes")) == 31  # one part per append, none rewritten


def test_a_writer_killed_mid_write_leaves_the_corpus_as_it_was(tmp_path):
    save_corpus(Corpus([make_episode("kept")]), tmp_path)
    before = load_corpus(tmp_path).ids
    big_writer = python_process(f"""
        from helpers.episodes import make_episode
        from workbench.data.episodes import Corpus
        from workbench.data.storage import save_corpus
        episodes = [make_episode(f"big-{{i:03d}}", decisions=300, frames=True, seed=i) for i in range(20)]
        print("writing", flush=True)
        save_corpus(Corpus(episodes), "{tmp_path}")
        print("done", flush=True)
    """)
    assert big_writer.stdout.readline() == "writing\n"
    deadline = time.time() + 60
    while not any(
        p.name.endswith(".tmp") for table in ("decisions", "events", "frames") for p in (tmp_path / table).glob(".*")
    ):
        assert time.time() < deadline and big_writer.poll() is None, "the writer never started writing"
        time.sleep(0.01)
    big_writer.send_signal(signal.SIGKILL)
    big_writer.wait(timeout=30)
    assert big_writer.returncode == -signal.SIGKILL
    leftovers = [
        p
        for table in ("decisions", "events", "frames", "episodes")
        for p in (tmp_path / table).iterdir()
        if p.name.startswith(".")
    ]
    assert leftovers  # the killed write's temporary file is still there ...
    assert load_corpus(tmp_path).ids == before  # ... and invisible: the part never committed
    save_episode(tmp_path, make_episode("next"))  # the next write cleans up
    assert not [
        p
        for table in ("decisions", "events", "frames", "episodes")
        for p in (tmp_path / table).iterdir()
        if p.name.startswith(".")
    ]
    assert load_corpus(tmp_path).ids == ["kept", "next"]


def test_data_files_of_a_part_that_never_committed_are_ignored_then_removed(tmp_path):
    """A crash between renaming a part's decisions table and its episodes table (the commit)."""
    save_corpus(Corpus([make_episode("a")]), tmp_path / "other")
    save_corpus(Corpus([make_episode("kept")]), tmp_path / "corpus")
    orphan = tmp_path / "corpus" / "decisions" / part_files(tmp_path / "other", "decisions")[0].name
    shutil.copy(part_files(tmp_path / "other", "decisions")[0], orphan)
    assert load_corpus(tmp_path / "corpus").ids == ["kept"]
    save_episode(tmp_path / "corpus", make_episode("b"))
    assert not orphan.exists() and load_corpus(tmp_path / "corpus").ids == ["kept", "b"]


@pytest.mark.parametrize("where", ["decisions", "frames", "events", "root", "table folder"])
def test_a_symlink_planted_in_the_folder_is_refused(tmp_path, where):
    corpus_root = tmp_path / "corpus"
    save_corpus(Corpus([make_episode("a", frames=True)]), corpus_root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not yours")
    if where == "table folder":
        shutil.move(corpus_root / "frames", outside / "frames")
        (corpus_root / "frames").symlink_to(outside / "frames")
        planted = corpus_root / "frames"
    else:
        folder = corpus_root if where == "root" else corpus_root / where
        planted = folder / "part-00000000000000000001-1-00000000.parquet"
        planted.symlink_to(outside / "secret.txt")
    for action in (lambda: load_corpus(corpus_root), lambda: save_episode(corpus_root, make_episode("b"))):
        with pytest.raises(UnsafeCorpusPathError, match=rf"{planted}: is a symlink"):
            action()
    assert (outside / "secret.txt").read_text() == "not yours"


def test_a_crafted_episodes_row_cannot_reach_another_episodes_frames(tmp_path):
    save_corpus(Corpus([make_episode("a", frames=True), make_episode("b", frames=True, seed=2)]), tmp_path)
    path = part_files(tmp_path, "episodes")[0]
    rows = pq.read_table(path).to_pylist()
    rows[0]["frames_group"] = 1  # a's row now names b's frames too
    pq.write_table(pq.read_table(path).from_pylist(rows, schema=pq.read_table(path).schema), path)
    with pytest.raises(CorpusFormatError, match=r"row 1, column 'frames_group': 1 is another episode's frames"):
        load_corpus(tmp_path)
    rows[1]["frames_group"] = 0  # swapped: each row names the other's frames
    pq.write_table(pq.read_table(path).from_pylist(rows, schema=pq.read_table(path).schema), path)
    corpus = load_corpus(tmp_path)
    with pytest.raises(CorpusFormatError, match=r"frames entry 1 holds episode 'b', not 'a'"):
        corpus["a"].frames
    rows[0]["frames_group"], rows[1]["frames_group"], rows[0]["decisions"] = 0, 1, 3  # and a wrong decision count
    pq.write_table(pq.read_table(path).from_pylist(rows, schema=pq.read_table(path).schema), path)
    with pytest.raises(CorpusFormatError, match=r"holds \d+ rows, but .* lists \d+"):
        load_corpus(tmp_path)


def test_distinct_ids_never_share_a_file_and_colliding_parts_are_an_error(tmp_path):
    # The old layout stored these three in one file name (unsafe characters replaced by "_").
    episodes = [make_episode(i, seed=n) for n, i in enumerate(["a/b", "a_b", "a:b"])]
    for episode in episodes:
        save_episode(tmp_path / "corpus", episode)
    corpus = load_corpus(tmp_path / "corpus")
    assert corpus.ids == ["a/b", "a_b", "a:b"]
    for episode in episodes:
        assert_same_episode(corpus[episode.id], episode)
    # A part copied in by hand from another corpus holding one of these ids collides.
    save_episode(tmp_path / "other", make_episode("a_b", seed=9))
    for table in ("decisions", "episodes"):
        shutil.copy(part_files(tmp_path / "other", table)[0], tmp_path / "corpus" / table)
    with pytest.raises(
        CorpusFormatError, match=r"episode id 'a_b' is in parts part-\S+ and part-\S+; ids must be unique"
    ):
        load_corpus(tmp_path / "corpus")


def test_another_schema_version_is_refused_for_reading_and_writing(tmp_path):
    save_corpus(Corpus([make_episode("a")]), tmp_path / "c")
    marker = tmp_path / "c" / "corpus.json"
    document = json.loads(marker.read_text())
    document["schema_version"] = 1  # the retired npz layout
    marker.write_text(json.dumps(document))
    for action in (lambda: load_corpus(tmp_path / "c"), lambda: save_episode(tmp_path / "c", make_episode("b"))):
        with pytest.raises(
            CorpusFormatError, match=r"corpus.json: schema_version 1; this workbench reads schema_version 2"
        ):
            action()
    assert len(part_files(tmp_path / "c", "episodes")) == 1
