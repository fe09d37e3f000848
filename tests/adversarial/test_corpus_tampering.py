"""Tampering with a corpus folder while writers run: a deleted, replaced or odd lock never loses a saved episode."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.episodes import make_episode
from helpers.hostile import python_process
from helpers.polling import until

from workbench.data.episodes import Corpus
from workbench.data.storage import load_corpus, save_corpus
from workbench.errors import UnsafeCorpusPathError

#: A writer that stops between renaming its decisions file and writing its episodes table (the
#: commit record) until the file ``go`` appears, having created ``paused``.
_PAUSED_WRITER = """
    import time
    from pathlib import Path
    from helpers.episodes import make_episode
    from workbench.data.storage import columnar, save_episode
    real = columnar._write_frames
    def pause(*args, **kwargs):
        Path("{paused}").touch()
        deadline = time.monotonic() + 60
        while not Path("{go}").exists():
            if time.monotonic() > deadline:
                raise SystemExit("never released")
            time.sleep(0.005)
        return real(*args, **kwargs)
    columnar._write_frames = pause
    save_episode("{root}", make_episode("{id}"))
    print("saved {id}")
"""
#: A writer that creates ``waiting`` when it has to wait for another writer's lock.
_WRITER = """
    from pathlib import Path
    from helpers.episodes import make_episode
    from workbench.data.storage import layout, save_episode
    real = getattr(layout, "lock_wait", None)
    def wait():
        Path("{waiting}").touch()
        real()
    layout.lock_wait = wait
    save_episode("{root}", make_episode("{id}"))
    print("saved {id}")
"""


def _second_writer_during_a_paused_one(tmp_path: Path, tamper) -> None:
    """A writer pauses mid-commit, ``tamper(root)`` runs, a second writer saves; both must land."""
    root = tmp_path / "corpus"
    save_corpus(Corpus([make_episode("first")]), root)
    paused, go = tmp_path / "paused", tmp_path / "go"
    first = python_process(_PAUSED_WRITER.format(paused=paused, go=go, root=root, id="a"))
    until(lambda: paused.exists() or first.poll() is not None, "the first writer to pause", seconds=60, interval=0.005)
    assert first.poll() is None, first.communicate()
    tamper(root)
    waiting = tmp_path / "waiting"
    second = python_process(_WRITER.format(root=root, id="b", waiting=waiting))
    # The second either finishes (no lock stopped it) or waits for the first's lock.
    until(lambda: second.poll() is not None or waiting.exists(), "the second writer", seconds=60, interval=0.005)
    go.touch()
    outputs = [p.communicate(timeout=120) for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], outputs
    assert [out for out, _ in outputs] == ["saved a\n", "saved b\n"]
    assert sorted(load_corpus(root).ids) == ["a", "b", "first"]


def test_a_deleted_lock_never_loses_a_saved_episode(tmp_path):
    _second_writer_during_a_paused_one(tmp_path, lambda root: (root / ".corpus.lock").unlink())


def test_a_lock_replaced_by_a_new_file_never_loses_a_saved_episode(tmp_path):
    def replace(root: Path) -> None:
        (root / ".corpus.lock").unlink()
        (root / ".corpus.lock").write_text("")

    _second_writer_during_a_paused_one(tmp_path, replace)


@pytest.mark.parametrize("odd", ["symlink", "directory", "fifo"])
def test_a_lock_file_that_is_not_a_regular_file_is_refused(tmp_path, odd):
    root = tmp_path / "corpus"
    save_corpus(Corpus([make_episode("first")]), root)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    lock = root / ".corpus.lock"
    lock.unlink(missing_ok=True)
    if odd == "symlink":
        lock.symlink_to(outside)
    elif odd == "directory":
        lock.mkdir()
    else:
        os.mkfifo(lock)
    with pytest.raises(UnsafeCorpusPathError, match=r"\.corpus\.lock"):
        save_corpus(Corpus([make_episode("second")]), root)
    assert outside.read_text() == "keep me"
    lock.rmdir() if odd == "directory" else lock.unlink()
    assert list(load_corpus(root).ids) == ["first"]


@pytest.mark.parametrize("odd", ["symlink", "fifo"])
def test_a_lock_file_swapped_after_the_checks_is_refused_by_the_open(tmp_path, odd):
    # The check-then-open gap: the name turns into a symlink (or a FIFO) between the writer's
    # checks and its lock. The open itself refuses it (O_NOFOLLOW, O_NONBLOCK): nothing outside
    # is truncated, nothing hangs.
    from workbench.data.storage.layout import lock_file

    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    lock = tmp_path / ".corpus.lock"
    if odd == "symlink":
        lock.symlink_to(outside)
    else:
        os.mkfifo(lock)
    with pytest.raises(UnsafeCorpusPathError, match=r"\.corpus\.lock"):
        with lock_file(lock):
            pass
    assert outside.read_text() == "keep me"


def test_a_leftover_of_a_live_writer_is_kept_and_a_dead_ones_removed(tmp_path):
    root = tmp_path / "corpus"
    save_corpus(Corpus([make_episode("first")]), root)
    (source,) = (root / "decisions").glob("*.parquet")
    sleeper = python_process("import sys; sys.stdin.read()")  # alive until its stdin closes
    try:
        live = root / "decisions" / f"part-{'1' * 20}-{sleeper.pid}-0badf00d.parquet"
        live.write_bytes(source.read_bytes())
        dead_pid = python_process("pass")
        dead_pid.communicate(timeout=60)
        dead = root / "decisions" / f"part-{'1' * 20}-{dead_pid.pid}-0badf00e.parquet"
        dead.write_bytes(source.read_bytes())
        save_corpus(Corpus([make_episode("second")]), root)
        assert live.exists() and not dead.exists()
        assert sorted(load_corpus(root).ids) == ["first", "second"]
    finally:
        sleeper.communicate(input="", timeout=60)


def test_a_corpus_reached_through_a_symlinked_folder_path_is_written(tmp_path):
    real = tmp_path / "real"
    save_corpus(Corpus([make_episode("first")]), real)
    (tmp_path / "link").symlink_to(real)
    save_corpus(Corpus([make_episode("second")]), tmp_path / "link")
    assert sorted(load_corpus(real).ids) == ["first", "second"]
