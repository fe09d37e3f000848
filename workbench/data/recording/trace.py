"""``EpisodeTrace``: one episode as it is played, decision by decision, turned into an ``Episode``.

The one way played decisions become an ``Episode``: ``record`` (a policy playing fresh worlds)
and ``workbench.env.CrafterStepwiseEnv`` (an agent stepping the env; ``RecordEpisodes`` takes
its episodes) both build their episodes with it. A row is the state after reset, then one per
decision: inventory, achievement counts, position; with the actions executed, Crafter's reward,
``done`` and optionally every frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.data.episodes import Episode

__all__ = ["EpisodeTrace"]


class EpisodeTrace:
    """One episode as it is played: rows, actions, Crafter's rewards and optionally frames.

    Args:
        reset_row: The state after reset: (inventory in ``INVENTORY_ITEMS`` order, counts in
            ``ACHIEVEMENTS`` order, (x, y) position), as ``state_row`` gives it.
        reset_frame: The reset observation, (64, 64, 3) uint8, or None to keep no frames.
    """

    def __init__(self, reset_row: tuple[list[int], list[int], list[int]], reset_frame: np.ndarray | None) -> None:
        self.rows = [reset_row]
        self.actions: list[list[str]] = []
        self.env_rewards: list[float] = []
        self.dones: list[bool] = []
        self.images: list[np.ndarray] | None = None if reset_frame is None else [reset_frame]

    @property
    def n_decisions(self) -> int:
        """How many decisions the trace holds so far."""
        return len(self.actions)

    def add(
        self,
        row: tuple[list[int], list[int], list[int]],
        actions: Sequence[str],
        env_reward: float,
        done: bool,
        frames: Sequence[np.ndarray] = (),
    ) -> None:
        """Append one decision.

        Args:
            row: The state after the decision, as ``state_row`` gives it.
            actions: The Crafter action names executed (those after ``done`` left out).
            env_reward: Crafter's reward summed over those actions.
            done: Whether Crafter ended the episode during the decision.
            frames: One (64, 64, 3) uint8 observation per action executed (ignored when the
                trace keeps no frames).
        """
        self.rows.append(row)
        self.actions.append(list(actions))
        self.env_rewards.append(env_reward)
        self.dones.append(done)
        if self.images is not None:
            self.images.extend(frames)

    def episode(self, episode_id: str, metadata: dict[str, Any]) -> Episode:
        """The ``Episode`` played so far (frames attached when they were kept).

        Args:
            episode_id: The episode's id.
            metadata: Its metadata (kept as given, not copied).

        Returns:
            The episode (int32 state arrays).

        Raises:
            EpisodeError: No decision was played (an episode needs one), or a row or frame
                does not fit.
        """
        inventory, counts, positions = (np.array(column, dtype=np.int32) for column in zip(*self.rows))
        episode = Episode(
            id=episode_id,
            inventory=inventory,
            achievement_counts=counts,
            player_pos=positions,
            actions=self.actions,
            env_reward=np.array(self.env_rewards, dtype=np.float64),
            done=np.array(self.dones, dtype=bool),
            metadata=metadata,
        )
        if self.images is not None:
            episode.set_frames(np.stack(self.images), episode.step_decisions())
        return episode
