"""The files a watcher owns in its target (state, lock, the folder itself) planted as symlinks, FIFOs, folders or junk."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.hostile import SAMPLE_ROLLOUTS, WORKBENCH, cli, one_line_error, saved_ids

from workbench.data.importers import import_rollouts
from workbench.data.watch import STATE_FILE, Watcher, open_source
from workbench.errors import UnsafePathError


def rollouts(tmp_path: Path) -> Path:
    source = tmp_path / "rollouts"
    shutil.copytree(SAMPLE_ROLLOUTS, source)
    return source


def test_a_state_file_planted_as_a_symlink_is_refused_and_its_target_untouched(tmp_path, capsys):
    source, target = rollouts(tmp_path), tmp_path / "corpus"
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    target.mkdir()
    (target / STATE_FILE).symlink_to(outside)
    code, _, err = cli("watch", source, "--into", target, "--once", capsys=capsys)
    assert code == 2
    one_line_error(err, STATE_FILE, "symlink")
    assert outside.read_text() == "keep me\n"


def test_a_state_file_swapped_for_a_symlink_while_watching_is_never_written_through(tmp_path):
    source, target = rollouts(tmp_path), tmp_path / "corpus"
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    with Watcher(open_source(source), target) as watcher:
        (target / STATE_FILE).symlink_to(outside)  # planted after the watcher started
        with pytest.raises(UnsafePathError, match=STATE_FILE):
            for _ in range(5):  # the first poll that takes a file writes the state
                watcher.poll()
    assert outside.read_text() == "keep me\n"


def test_a_fifo_as_the_state_file_is_named_not_waited_on(tmp_path):
    source, target = rollouts(tmp_path), tmp_path / "corpus"
    target.mkdir()
    os.mkfifo(target / STATE_FILE)
    done = subprocess.run(
        [*WORKBENCH, "watch", str(source), "--into", str(target), "--once"],
        capture_output=True,
        text=True,
        timeout=120,  # a hang fails here instead of blocking the suite
    )
    assert done.returncode == 2
    one_line_error(done.stderr, STATE_FILE, "not a regular file")


@pytest.mark.parametrize("kind", ["loop", "folder", "symlink out"])
def test_a_watch_lock_that_is_no_regular_file_is_named(tmp_path, capsys, kind):
    source, target = rollouts(tmp_path), tmp_path / "corpus"
    target.mkdir()
    lock = target / ".watch.lock"
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    if kind == "loop":
        lock.symlink_to(lock)
    elif kind == "folder":
        lock.mkdir()
    else:
        lock.symlink_to(outside)
    code, _, err = cli("watch", source, "--into", target, "--once", capsys=capsys)
    assert code == 2
    one_line_error(err, ".watch.lock")
    assert outside.read_text() == "keep me\n"
    assert saved_ids(target) == []


def test_junk_nested_deep_in_the_state_file_is_one_line(tmp_path, capsys):
    source, target = rollouts(tmp_path), tmp_path / "corpus"
    target.mkdir()
    (target / STATE_FILE).write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = cli("watch", source, "--into", target, "--once", capsys=capsys)
    assert code == 2
    one_line_error(err, STATE_FILE, "nested deeper")


def test_into_a_regular_file_is_one_line(tmp_path, capsys):
    source, target = rollouts(tmp_path), tmp_path / "corpus.txt"
    target.write_text("not a folder\n")
    code, _, err = cli("watch", source, "--into", target, "--once", capsys=capsys)
    assert code == 2
    one_line_error(err, "corpus.txt", "is a file")
    assert target.read_text() == "not a folder\n"


def test_the_state_is_written_as_the_folder_own_file_and_read_back(tmp_path, capsys):
    source, target = rollouts(tmp_path), tmp_path / "corpus"
    code, _, _ = cli("watch", source, "--into", target, "--once", capsys=capsys)
    expected = len(import_rollouts(SAMPLE_ROLLOUTS, progress=False).corpus)
    assert code == 0 and len(saved_ids(target)) == expected
    state = target / STATE_FILE
    assert state.is_file() and not state.is_symlink()
    code, out, _ = cli("watch", source, "--into", target, "--once", capsys=capsys)
    assert code == 0 and "appended 0 episode(s)" in out


def test_an_unreadable_subfolder_is_named_and_the_rest_appended(tmp_path):
    source, target = rollouts(tmp_path), tmp_path / "corpus"
    secret = source / "secret"
    secret.mkdir()
    shutil.copy(SAMPLE_ROLLOUTS / "shaped_raw.json", secret / "hidden.json")
    secret.chmod(0)
    # Root reads any folder: the watcher runs without the capabilities that let it (as a user would).
    limited = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    try:
        done = subprocess.run(
            [*limited, *WORKBENCH, "watch", str(source), "--into", str(target), "--once"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        secret.chmod(0o755)
    assert "Traceback" not in done.stderr
    problems = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(problems) == 1 and problems[0].startswith("problem: ") and str(secret) in problems[0]
    assert "Permission denied" in problems[0]
    assert done.returncode == 1
    expected = import_rollouts(SAMPLE_ROLLOUTS, progress=False).corpus.ids
    assert sorted(saved_ids(target)) == sorted(expected)


def test_a_state_file_that_is_a_folder_is_named(tmp_path, capsys):
    source, target = rollouts(tmp_path), tmp_path / "corpus"
    (target / STATE_FILE).mkdir(parents=True)
    code, _, err = cli("watch", source, "--into", target, "--once", capsys=capsys)
    assert code == 2
    one_line_error(err, STATE_FILE, "not a regular file")
    assert saved_ids(target) == []
