"""Episodes a watch must neither lose nor double: files rewritten, moved, rotated, imported before, across restarts."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from helpers.hostile import SAMPLE_ROLLOUTS, cli, good_rollout, saved_ids

from workbench.data.storage import load_corpus
from workbench.data.watch import Watcher, open_source


def settled(watcher: Watcher, *, deadline: float = 30.0) -> list[str]:
    """Poll until three polls in a row bring nothing and nothing settles; the ids appended."""
    appended: list[str] = []
    quiet = 0
    end = time.monotonic() + deadline
    while quiet < 3:
        assert time.monotonic() < end, "the watcher never settled"
        report = watcher.poll()
        appended += report.appended.ids
        quiet = quiet + 1 if not len(report.appended) and not report.settling else 0
    return appended


def run_ids(target: Path) -> list[str]:
    return sorted(str(e.metadata.get("run_id")) for e in load_corpus(target))


def bump_mtime(path: Path) -> None:
    """Give a rewritten file a visibly new mtime (a coarse clock could hide the rewrite)."""
    stamp = path.stat().st_mtime_ns + 2_000_000_000
    os.utime(path, ns=(stamp, stamp))


def test_a_file_rewritten_under_its_name_with_another_run_is_appended(tmp_path):
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    source.mkdir()
    (source / "latest.json").write_text(json.dumps(good_rollout("run-1")))
    with Watcher(open_source(source, "rollouts"), target) as watcher:
        assert len(settled(watcher)) == 1
        (source / "latest.json").write_text(json.dumps(good_rollout("run-2")))  # same name, same size
        bump_mtime(source / "latest.json")
        assert len(settled(watcher)) == 1
    assert run_ids(target) == ["run-1", "run-2"]
    with Watcher(open_source(source, "rollouts"), target) as watcher:  # a restart appends nothing
        assert settled(watcher) == []


def test_a_taken_file_moved_into_a_subfolder_is_not_appended_again(tmp_path):
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    shutil.copytree(SAMPLE_ROLLOUTS, source)
    with Watcher(open_source(source), target) as watcher:
        first = settled(watcher)
        (source / "archive").mkdir()
        (source / "text_runs.jsonl").rename(source / "archive" / "text_runs.jsonl")
        assert settled(watcher) == []
    (target / "watch-state.json").unlink()  # nor after a restart that lost its progress
    with Watcher(open_source(source), target) as watcher:
        assert settled(watcher) == []
    assert sorted(saved_ids(target)) == sorted(first)


def test_a_rotated_jsonl_is_read_from_its_new_start(tmp_path):
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    source.mkdir()
    log = source / "rollouts.jsonl"
    log.write_text("".join(json.dumps(good_rollout(f"old-{i}")) + "\n" for i in range(3)))
    with Watcher(open_source(source, "rollouts"), target) as watcher:
        assert len(settled(watcher)) == 3
        log.write_text(json.dumps(good_rollout("new-0")) + "\n")  # truncated and started again
        bump_mtime(log)
        assert len(settled(watcher)) == 1
        with log.open("a") as handle:  # and it grows again
            handle.write(json.dumps(good_rollout("new-1")) + "\n")
        bump_mtime(log)
        assert len(settled(watcher)) == 1
    assert run_ids(target) == ["new-0", "new-1", "old-0", "old-1", "old-2"]


def test_a_source_imported_then_watched_is_not_appended_twice(tmp_path, capsys):
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    shutil.copytree(SAMPLE_ROLLOUTS, source)
    code, _, _ = cli("import", "rollouts", source, "--out", target, capsys=capsys)
    assert code == 0
    imported = saved_ids(target)
    code, out, _ = cli("watch", source, "--into", target, "--once", capsys=capsys)
    assert code == 0 and "appended 0 episode(s)" in out
    assert saved_ids(target) == imported


def test_a_corpus_part_that_fails_to_read_for_a_moment_is_read_at_a_later_poll(tmp_path, monkeypatch):
    import errno

    from helpers.episodes import make_episode

    import workbench.data.watch.folders as folders
    from workbench.data.episodes import Corpus
    from workbench.data.storage import save_corpus

    save_corpus(Corpus([make_episode("e1", seed=1)]), tmp_path / "run")
    real, calls = folders.load_corpus, [0]

    def flaky(*args, **kwargs):  # the first read meets an I/O error (a network disk's hiccup)
        calls[0] += 1
        if calls[0] == 1:
            raise OSError(errno.EIO, "Input/output error")
        return real(*args, **kwargs)

    monkeypatch.setattr(folders, "load_corpus", flaky)
    with Watcher(open_source(tmp_path / "run"), tmp_path / "corpus") as watcher:
        first = watcher.poll()
        assert first.appended.ids == [] and first.problems == [] and first.settling == 1
        assert watcher.poll().appended.ids == ["e1"]
