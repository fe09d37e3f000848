"""The dashboard's saves into its workspace while a folder below it is swapped for a symlink: nothing lands outside."""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from workbench.core.config import RewardConfig
from workbench.errors import WorkbenchError
from workbench.views.app.workspace import Workspace, WorkspaceError

CONFIG = RewardConfig(strategy="consistent")


def test_a_folder_swapped_after_the_check_cannot_redirect_the_write(tmp_path):
    space, outside = Workspace(tmp_path / "ws"), tmp_path / "outside"
    outside.mkdir()
    target = space.checked(tmp_path / "ws" / "sub" / "mine.yaml")  # what the Tuner's save box does first
    (tmp_path / "ws" / "sub").rmdir()
    (tmp_path / "ws" / "sub").symlink_to(outside)  # the swap, between the check and the write
    with pytest.raises(WorkspaceError, match="is a symlink"):
        space.write_file(target, CONFIG)
    assert list(outside.iterdir()) == []


def test_the_workspace_folder_itself_swapped_for_a_symlink_is_refused(tmp_path):
    space, outside = Workspace(tmp_path / "ws"), tmp_path / "outside"
    outside.mkdir()
    space.save_draft(CONFIG)
    (tmp_path / "ws").rename(tmp_path / "old-ws")
    (tmp_path / "ws").symlink_to(outside)
    for write in (lambda: space.save_draft(CONFIG), lambda: space.save("kept", CONFIG)):
        with pytest.raises(WorkspaceError, match="is a symlink"):
            write()
    assert list(outside.iterdir()) == []


def test_a_file_planted_as_a_symlink_is_never_written_through(tmp_path):
    space, outside = Workspace(tmp_path / "ws"), tmp_path / "precious.yaml"
    outside.write_text("keep: me\n")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "kept.yaml").symlink_to(outside)
    with pytest.raises(WorkspaceError, match="is a symlink"):
        space.save("kept", CONFIG, overwrite=True)
    assert outside.read_text() == "keep: me\n"


@pytest.mark.parametrize("folder", ["drafts", "sub"])
def test_saves_racing_a_folder_swap_never_land_outside(tmp_path, folder):
    space, outside = Workspace(tmp_path / "ws"), tmp_path / "outside"
    outside.mkdir()
    space.save_draft(CONFIG)
    (tmp_path / "ws" / "sub").mkdir()
    real, parked = tmp_path / "ws" / folder, tmp_path / "ws" / f".{folder}-parked"
    stop = threading.Event()
    swaps = [0]

    def swap() -> None:  # the attacker: folder -> symlink to outside -> folder, as fast as it can
        while not stop.is_set():
            try:
                os.rename(real, parked)
                os.symlink(outside, real)
                os.unlink(real)
                os.rename(parked, real)
                swaps[0] += 1
            except OSError:  # a save made the folder anew meanwhile: put things back, go on
                with contextlib.suppress(OSError):
                    if real.is_symlink():
                        os.unlink(real)
                    if parked.exists():
                        shutil.rmtree(real, ignore_errors=True)
                        os.rename(parked, real)

    def save() -> Path:
        if folder == "drafts":
            return space.save_draft(CONFIG)
        return space.write_file(tmp_path / "ws" / "sub" / "mine.yaml", CONFIG, overwrite=True)

    attacker = threading.Thread(target=swap)
    attacker.start()
    written = refused = 0
    deadline = time.monotonic() + 60
    try:
        while (written + refused < 400 or swaps[0] < 50) and time.monotonic() < deadline:
            try:
                path = save()
            except (WorkbenchError, OSError):  # refused (or the folder missing mid-swap): never outside
                refused += 1
            else:
                written += 1
                assert path.parent == real
    finally:
        stop.set()
        attacker.join()
    assert list(outside.iterdir()) == []
    assert written > 0 and swaps[0] >= 50
