"""The dashboard's saves into its workspace: nothing lands outside when a folder is swapped for a symlink, and two tabs never silently drop each other's saves or drafts."""

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
from workbench.views.app.workspace import ChangedSinceLoadedError, Workspace, WorkspaceError

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


# -- two tabs of one dashboard (issue 41): one tab's save or draft never silently drops the other's --


def test_a_save_over_a_kept_config_another_tab_changed_is_refused_once(tmp_path):
    Workspace(tmp_path / "ws").save("shared", RewardConfig(strategy="per_achievement", weights={"collect_wood": 1.0}))
    tab_a, tab_b = Workspace(tmp_path / "ws"), Workspace(tmp_path / "ws")
    assert (
        tab_a.configs()[0]["shared"].weights["collect_wood"]
        == 1.0
        == tab_b.configs()[0]["shared"].weights["collect_wood"]
    )
    four = RewardConfig(strategy="per_achievement", weights={"collect_wood": 4.0})
    tab_a.save("shared", four, overwrite=True)  # A saves it as 4
    stale = RewardConfig(strategy="per_achievement", weights={"collect_wood": 1.5})
    with pytest.raises(ChangedSinceLoadedError, match=r"shared\.yaml: changed since this tab loaded it"):
        tab_b.save("shared", stale, overwrite=True)  # B, still showing 1, asks to replace it
    assert RewardConfig.from_file(tmp_path / "ws" / "shared.yaml").weights["collect_wood"] == 4.0  # A's save stays
    tab_a.save("shared", RewardConfig(strategy="per_achievement", weights={"collect_wood": 5.0}), overwrite=True)
    # A wrote it last itself: its own save goes through; B asked once, and saving again replaces
    # what it was told about ... unless it changed once more since (A's 5): told again.
    with pytest.raises(ChangedSinceLoadedError):
        tab_b.save("shared", stale, overwrite=True)
    tab_b.save("shared", stale, overwrite=True)
    assert RewardConfig.from_file(tmp_path / "ws" / "shared.yaml").weights["collect_wood"] == 1.5


def test_a_file_saved_by_this_tab_then_by_another_is_not_replaced_unasked(tmp_path):
    tab_a, tab_b = Workspace(tmp_path / "ws"), Workspace(tmp_path / "ws")
    target = tmp_path / "ws" / "my_reward.yaml"  # the Tuner's save box in the workspace
    tab_a.write_file(target, CONFIG)
    tab_b.write_file(target, RewardConfig(strategy="per_achievement"), overwrite=True)
    with pytest.raises(ChangedSinceLoadedError, match="my_reward.yaml: changed since"):
        tab_a.write_file(target, CONFIG, overwrite=True)
    assert RewardConfig.from_file(target).strategy == "per_achievement"


def test_two_tabs_keep_two_drafts_and_a_restart_offers_both(tmp_path):
    from workbench.data.sample import sample_corpus
    from workbench.views.app.options import AppOptions
    from workbench.views.app.session import AppSession

    options = AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws")
    tab_a, tab_b = AppSession(options), AppSession(options)
    wood = tab_a.baseline.with_changes(weights={"collect_wood": 3.0})
    stone = tab_b.baseline.with_changes(weights={"collect_stone": 2.5})
    kept_a = tab_a.workspace.save_draft(wood)  # what each tab's Tuner change leaves (_keep_draft)
    kept_b = tab_b.workspace.save_draft(stone)
    os.utime(kept_a, ns=(1_000_000_000, 1_000_000_000))  # A's draft the older one
    assert kept_a != kept_b and RewardConfig.from_file(kept_a) == wood  # B's draft did not replace A's
    restarted = AppSession(options)
    assert restarted.start == stone  # the Tuner starts from the newest draft, B's ...
    (listed,) = restarted.drafts_listed  # ... and A's is a config of the session, and it says so
    assert restarted.configs[listed] == wood and listed in restarted.status.text
    assert listed not in restarted._compared()  # not scored in Compare unless sent there
    # The restarted tab's first draft replaces the one it started from (no pile of drafts), never A's.
    restarted.workspace.save_draft(stone.with_changes(weights={"collect_stone": 2.5, "place_table": 1.0}))
    assert kept_a.is_file() and not kept_b.exists()
    assert sorted(p.name for p in (tmp_path / "ws" / "drafts").iterdir()) == sorted(
        [kept_a.name, restarted.workspace.draft_name]
    )
