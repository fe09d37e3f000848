"""``import_into``: the same corpus as a serial import on 1 or 2 processes, in parts that commit together or not at all."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers.hostile import SAMPLE_RECORDER, SAMPLE_ROLLOUTS, cli, tree

from workbench.data.episodes import Corpus
from workbench.data.importers import import_crafter_recorder, import_rollouts, import_traces, pipeline
from workbench.data.importers.pipeline import bounded_map, import_into
from workbench.data.storage import episode_ids_by_part, load_corpus, save_corpus, staging

REPO = Path(__file__).resolve().parents[2]
TASKAPP = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "taskapp"
TRACES = REPO / "tests" / "fixtures" / "synth-ai-0.2.24" / "synth_ai.db"


def _same(a: Corpus, b: Corpus) -> None:
    """Two corpora hold the same episodes in the same order, value for value."""
    assert list(a.ids) == list(b.ids)
    for x, y in zip(a, b):
        for name in ("inventory", "achievement_counts", "achievement_status", "env_reward", "done", "player_pos"):
            assert np.array_equal(getattr(x, name), getattr(y, name)), (x.id, name)
        assert x.actions == y.actions and x.metadata == y.metadata and x.logged == y.logged, x.id
        assert (x.views, x.messages, x.calls) == (y.views, y.messages, y.calls), x.id


@pytest.fixture
def rollouts(tmp_path) -> Path:
    """The shipped task-app rollouts and sample rollouts, one file twice (its ids repeat: the
    second copy's become ``-2``, as a serial import names them)."""
    folder = tmp_path / "in"
    shutil.copytree(TASKAPP, folder / "a", ignore=shutil.ignore_patterns("*.md"))
    shutil.copytree(SAMPLE_ROLLOUTS, folder / "b")
    shutil.copy(SAMPLE_ROLLOUTS / "text_runs.jsonl", folder / "c.jsonl")
    return folder


@pytest.mark.parametrize("workers", [1, 2])
def test_rollouts_import_as_a_serial_import_does_in_several_parts(rollouts, tmp_path, monkeypatch, workers):
    monkeypatch.setattr(pipeline, "TASK_BYTES", 1)  # one file a task: 7 tasks
    serial = import_rollouts(rollouts, progress=False)
    report = import_into("rollouts", rollouts, tmp_path / "out", workers=workers, progress=False, batch_decisions=100)
    saved = load_corpus(tmp_path / "out")
    _same(saved, serial.corpus)
    assert any(i.endswith("-2") for i in saved.ids)  # the repeated file's ids, renamed as serially
    assert str(report) == str(serial)  # the same report, line for line
    # 100 decisions a part: the parts hold the episodes in order, each past 100 but its last.
    parts = list(episode_ids_by_part(tmp_path / "out").values())
    assert report.parts == len(parts) > 1
    assert [i for ids in parts for i in ids] == list(serial.corpus.ids)


def test_traces_and_recorder_files_import_as_serially(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "SESSIONS_PER_TASK", 1)  # a task per session: 3 tasks
    serial = import_traces(TRACES, progress=False)
    report = import_into("traces", TRACES, tmp_path / "t", workers=2, progress=False, batch_decisions=1)
    _same(load_corpus(tmp_path / "t"), serial.corpus)
    assert str(report) == str(serial) and report.parts == 3
    serial = import_crafter_recorder(SAMPLE_RECORDER, progress=False)
    import_into("recorder", SAMPLE_RECORDER, tmp_path / "r", progress=False)
    saved = load_corpus(tmp_path / "r")
    _same(saved, serial.corpus)
    assert np.array_equal(saved[0].frames.images, serial.corpus[0].frames.images)


def test_an_interrupted_import_leaves_the_corpus_as_it_was(rollouts, tmp_path, monkeypatch):
    out = tmp_path / "out"
    save_corpus(import_rollouts(SAMPLE_ROLLOUTS / "shaped_raw.json", progress=False).corpus, out)
    before = tree(out)
    monkeypatch.setattr(pipeline, "TASK_BYTES", 1)
    taken = []

    def stopped_after_three(function, tasks):
        for task in tasks:
            if len(taken) == 3:  # three parts staged by now (a part a task, below)
                raise KeyboardInterrupt
            taken.append(task)
            yield function(task)

    with pytest.raises(KeyboardInterrupt):
        import_into("rollouts", rollouts, out, mapper=stopped_after_three, progress=False, batch_decisions=1)
    assert len(taken) == 3
    assert tree(out) == before  # nothing committed, and no staged file left behind


def test_a_commit_that_fails_midway_is_undone(rollouts, tmp_path, monkeypatch):
    out = tmp_path / "out"
    save_corpus(import_crafter_recorder(SAMPLE_RECORDER, progress=False).corpus, out)
    before = tree(out)
    real = staging.os.rename
    calls = []

    def second_rename_fails(source, target):
        calls.append(source)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(source, target)

    monkeypatch.setattr(pipeline, "TASK_BYTES", 1)
    monkeypatch.setattr(staging.os, "rename", second_rename_fails)
    with pytest.raises(OSError, match="No space left"):
        import_into("rollouts", rollouts, out, progress=False, batch_decisions=1)
    monkeypatch.setattr(staging.os, "rename", real)
    assert len(calls) == 3  # the first part committed, the second failed, the first renamed back
    assert tree(out) == before


def test_a_clash_found_in_a_later_part_saves_nothing_and_a_new_folder_goes(rollouts, tmp_path, capsys):
    out = tmp_path / "out"
    assert (
        cli("import", "rollouts", SAMPLE_ROLLOUTS / "text_runs.jsonl", "--out", out, "--quiet", capsys=capsys)[0] == 0
    )
    before = tree(out)
    code, _, err = cli("import", "rollouts", rollouts, "--out", out, "--quiet", "--workers", "2", capsys=capsys)
    assert code == 2 and "--overwrite" in err
    assert tree(out) == before
    (tmp_path / "bad.json").write_text("{")
    code, out_text, _ = cli(
        "import", "rollouts", tmp_path / "bad.json", "--out", tmp_path / "new", "--quiet", capsys=capsys
    )
    assert code == 1 and "not valid JSON" in out_text and not (tmp_path / "new").exists()


def test_workers_and_cluster_together_are_a_usage_error(tmp_path, capsys):
    code, _, err = cli(
        "import",
        "rollouts",
        SAMPLE_ROLLOUTS,
        "--out",
        tmp_path / "o",
        "--workers",
        "2",
        "--cluster",
        "local:2",
        capsys=capsys,
    )
    assert code == 2 and "pick one" in err and not (tmp_path / "o").exists()


def test_bounded_map_keeps_order_and_a_window():
    in_flight = []

    class Done:
        def __init__(self, value):
            self.value = value

        def result(self):
            in_flight.pop(0)
            return self.value

    def submit(function, task):
        in_flight.append(task)
        assert len(in_flight) <= 3  # never more than the window submitted and not taken
        return Done(function(task))

    assert list(bounded_map(submit, lambda x: x * x, range(10), 3)) == [x * x for x in range(10)]


def test_batch_storable_check_names_exactly_what_each_alone_does() -> None:
    """``unstorable_all`` checks a task's value ranges at once; with a bad episode among good
    ones it must report exactly what ``unstorable`` says of each episode alone (the independent
    computation), so a batch never loses or blames the wrong episode."""
    from helpers.episodes import make_episode

    from workbench.data.importers.batch import unstorable, unstorable_all

    episodes = [make_episode(f"e{k}", decisions=5, seed=k) for k in range(5)]
    assert unstorable_all(episodes, "x.db") == [None] * 5  # all storable: the one batch check passes
    episodes[1].inventory[3, 0] = 12  # outside Crafter's 0..9: a value-range problem
    episodes[3].metadata["bad"] = {1, 2}  # a set is no JSON value: a per-episode (row) problem
    alone = [unstorable(e, "x.db") for e in episodes]
    assert [issue is not None for issue in alone] == [False, True, False, True, False]
    assert "inventory" in alone[1].message and "metadata" in alone[3].message
    assert unstorable_all(episodes, "x.db") == alone
    episodes[1].inventory[3, 0] = 1  # only the row problem left: the batch's value check passes
    assert unstorable_all(episodes, "x.db") == [None, None, None, alone[3], None]


def test_checked_items_give_the_texts_a_save_would_make_and_a_save_stores_them(tmp_path) -> None:
    """``checked_items`` replaces each unstorable episode by its issue in place and gives each
    kept episode's ``logged`` text as the check made it; a staged save handed those texts writes
    the same episodes table as a save that encodes them itself (the independent computation)."""
    import pyarrow.parquet as pq
    from helpers.episodes import make_episode

    from workbench.data.importers.batch import ImportIssue, checked_items
    from workbench.data.storage.rows import json_text

    episodes = [make_episode(f"e{k}", decisions=4, seed=k) for k in range(4)]
    for k, episode in enumerate(episodes):
        episode.logged = None if k == 2 else {"stepwise": [{"strategy": "consistent", "k": k}], "ratio": 0.1 * k}
    episodes[1].metadata["bad"] = {1, 2}  # no JSON value: its own issue
    issue = ImportIssue("f.jsonl", "line 9", "not valid JSON")
    items, texts = checked_items([episodes[0], issue, episodes[1], episodes[2], episodes[3]], "f.jsonl")
    assert items[0] is episodes[0] and items[1] is issue and items[3] is episodes[2] and items[4] is episodes[3]
    assert isinstance(items[2], ImportIssue) and "metadata" in items[2].message
    kept = [episodes[0], episodes[2], episodes[3]]
    assert texts == [json_text(e.logged, "", "logged") if e.logged is not None else None for e in kept]

    with staging.staged_save(tmp_path / "given") as save:
        save.hand_logged_texts(texts)
        save.add(Corpus(kept))
    with staging.staged_save(tmp_path / "made") as save:
        save.add(Corpus(kept))
    given, made = (pq.read_table(next((tmp_path / name / "episodes").glob("*.parquet"))) for name in ("given", "made"))
    assert given.equals(made)
    assert given.column("logged").to_pylist() == texts

    with pytest.raises(ValueError, match="2 texts for 3 episodes"), staging.staged_save(tmp_path / "short") as save:
        save.hand_logged_texts(texts[:2])
        save.add(Corpus(kept))
    assert not list((tmp_path / "short").glob("episodes/*.parquet"))  # nothing committed
