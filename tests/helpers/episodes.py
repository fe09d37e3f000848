"""Small valid episodes made in code, and what storage tests compare and look at."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import Episode, Frames, reset_state_arrays
from workbench.data.importers import ImportResult, import_rollouts
from workbench.util.jsonsafe import UNSURE


def make_episode(
    episode_id: str,
    decisions: int = 4,
    *,
    actions_per_decision: int = 2,
    frames: bool = False,
    policy: str = "scripted",
    seed: int = 0,
    logged: dict | None = None,
) -> Episode:
    """A small valid episode with varied values (rng from the seed), frames optional."""
    rng = np.random.default_rng(seed)
    inventory0, counts0 = reset_state_arrays()
    inventory = np.vstack([inventory0, rng.integers(0, 10, (decisions, len(INVENTORY_ITEMS)))])
    counts = np.vstack([counts0, np.cumsum(rng.integers(0, 2, (decisions, len(ACHIEVEMENTS))), axis=0)])
    actions = [
        list(rng.choice(["noop", "do", "move_left", "place_table"], size=rng.integers(1, actions_per_decision + 1)))
        for _ in range(decisions)
    ]
    episode = Episode(
        id=episode_id,
        inventory=inventory,
        achievement_counts=counts,
        actions=actions,
        env_reward=rng.normal(size=decisions),
        done=[False] * (decisions - 1) + [True],
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


def part_files(root: Path, table: str) -> list[Path]:
    """The committed files of one table of a corpus folder, in commit order."""
    return sorted((root / table).glob("part-*.parquet"))


def assert_same_episode(copy: Episode, original: Episode) -> None:
    for name in ("inventory", "achievement_counts", "achievement_status", "player_pos", "env_reward", "done"):
        np.testing.assert_array_equal(getattr(copy, name), getattr(original, name))
        assert getattr(copy, name).dtype == getattr(original, name).dtype
    assert copy.actions == original.actions
    assert copy.metadata == original.metadata
    assert json.dumps(copy.logged) == json.dumps(original.logged)  # key order and float bits too
    assert copy.views == original.views and copy.messages == original.messages
    assert copy.has_frames == original.has_frames


def open_from_decisions(monkeypatch) -> None:
    """Make ``load_corpus`` read every part as one written before events tables: its events
    computed from the decisions table (``workbench.data.storage.stream``), never read."""
    from workbench.data.storage import stream

    monkeypatch.setattr(stream, "read_part_events", lambda root, part, first_decision: None)


def _rollouts_imported(folder: Path, *, whole: bool) -> ImportResult:
    with pytest.MonkeyPatch.context() as patch:
        if whole:  # every response parsed whole, as before ``rollout_fields`` existed
            patch.setattr("workbench.data.importers.jsonfiles.response_fields", lambda raw: UNSURE)
        return import_rollouts(folder, progress=False)


def assert_imports_alike(folder: Path) -> ImportResult:
    """Import the rollout files of ``folder`` read for their fields and parsed whole, assert the
    two give the same episodes, errors, warnings and notes, and return the first."""
    fast = _rollouts_imported(folder, whole=False)
    whole = _rollouts_imported(folder, whole=True)
    assert fast.errors == whole.errors and fast.warnings == whole.warnings
    assert fast.normalised == whole.normalised and fast.notes == whole.notes
    assert list(fast.corpus.index["episode"]) == list(whole.corpus.index["episode"])
    for a, b in zip(fast.corpus, whole.corpus, strict=True):
        assert_same_episode(a, b)
        assert a.calls == b.calls
    return fast
