"""``EpisodeTrace``: the one way played decisions become an ``Episode`` (record and the env)."""

from __future__ import annotations

import numpy as np

from workbench.core.crafter_facts import ACHIEVEMENTS, INITIAL_INVENTORY, INVENTORY_ITEMS
from workbench.data.recording import EpisodeTrace, state_row


def _row(wood: int, collect_wood: int, x: int) -> tuple[list[int], list[int], list[int]]:
    inventory = {**INITIAL_INVENTORY, "wood": wood}
    counts = {name: 0 for name in ACHIEVEMENTS} | {"collect_wood": collect_wood}
    return state_row(inventory, counts, (x, 32))


def test_a_trace_of_two_decisions_is_that_episode_with_its_frames():
    frame = [np.full((64, 64, 3), value, dtype=np.uint8) for value in range(4)]
    trace = EpisodeTrace(_row(0, 0, 30), frame[0])
    trace.add(_row(0, 0, 31), ["move_right"], 0.0, False, [frame[1]])
    trace.add(_row(1, 1, 31), ["do", "noop"], 1.0, True, [frame[2], frame[3]])
    episode = trace.episode("hand", {"policy": "hand"})
    assert trace.n_decisions == 2 and episode.n_decisions == 2
    assert episode.actions == [["move_right"], ["do", "noop"]]
    assert episode.env_reward.tolist() == [0.0, 1.0] and episode.done.tolist() == [False, True]
    wood = INVENTORY_ITEMS.index("wood")
    assert episode.inventory[:, wood].tolist() == [0, 0, 1]
    assert episode.achievement_counts[:, ACHIEVEMENTS.index("collect_wood")].tolist() == [0, 0, 1]
    assert episode.player_pos[:, 0].tolist() == [30, 31, 31]
    # One frame after reset and one per step: the three steps belong to decisions 1, 2, 2.
    assert episode.frames.images[:, 0, 0, 0].tolist() == [0, 1, 2, 3]
    assert episode.frames.step_decision.tolist() == [1, 2, 2]
    assert episode.metadata["policy"] == "hand"


def test_a_trace_without_a_reset_frame_keeps_no_frames():
    trace = EpisodeTrace(_row(0, 0, 30), None)
    trace.add(_row(0, 0, 31), ["move_right"], 0.0, False, [np.zeros((64, 64, 3), dtype=np.uint8)])
    assert not trace.episode("plain", {}).has_frames
