"""The episode data model: ``Episode`` (one Crafter episode's states and decisions) and ``Frames``.

Episodes are small numpy arrays with optional frames that stay on disk until first touched;
``episode.states()`` gives the states in the task app's form, for ``workbench.core.episode_reward``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from workbench.core.crafter_facts import ACHIEVEMENTS, ACTIONS, INITIAL_INVENTORY, INVENTORY_ITEMS
from workbench.errors import EpisodeError, EpisodeValueError

ACTION_IDS: Mapping[str, int] = {name: index for index, name in enumerate(ACTIONS)}
FRAME_SHAPE = (64, 64, 3)

#: Where an episode's achievement counts come from (``metadata["counts"]``, index column
#: ``counts``): Crafter's own counts (``observed``), rebuilt exactly from the rises a rollout
#: logged (``logged``), or estimated from observations that carry no counts (``estimated``:
#: count shaping scored on them is approximate and is labelled so wherever it is shown).
COUNT_SOURCES = ("observed", "logged", "estimated")


@dataclass
class Frames:
    """One episode's frames.

    Attributes:
        images: uint8 (steps + 1, 64, 64, 3): ``images[0]`` the reset frame, ``images[t]`` the one after step t.
        step_decision: ``step_decision[t - 1]`` is the decision (1-based) that step t belongs to.
        deflated: The images as the source stored them, an ``.npy`` file as a raw deflate
            stream (a crafter.Recorder ``.npz`` member), when ``images`` were decoded from
            exactly these bytes (``storage.frames.npy_deflate_frames`` builds such frames):
            saving keeps them as they are instead of encoding the images again. None otherwise.
    """

    images: np.ndarray
    step_decision: np.ndarray
    deflated: bytes | None = None


@dataclass
class Episode:
    """One Crafter episode: the state after reset and one row per decision (n = number of decisions).

    Attributes:
        id: The episode's id.
        inventory: int (n+1, 16), columns ``INVENTORY_ITEMS``; row 0 is the state after reset.
        achievement_counts: int (n+1, 22), columns ``ACHIEVEMENTS``, cumulative; source: ``metadata["counts"]``.
        actions: ``actions[i]`` lists the Crafter action names of decision i+1.
        env_reward: float (n,), Crafter's own reward summed over the decision's steps.
        done: bool (n,).
        player_pos: int (n+1, 2), -1 where unknown.
        achievement_status: bool (n+1, 22), always exact; None reads it from the counts.
        metadata: Source, policy, seed and the like (``Corpus.index`` columns come from it).
        logged: An imported rollout's log: ``config`` (its step_rewards) and ``stepwise`` (per decision).
        views: Text map view of each state (n+1, from text observations, which have no frames) or None.
        messages: What the model said for each decision (its text, then its tool call) or None.
        calls: Each decision's tool calls as JSON text, before the task app's normalisation, or None.
        frames_loader: Reads the frames on first use; None for an episode without frames.

    Raises:
        EpisodeError: The arrays do not fit (see ``validate``); ``EpisodeValueError``: NaN or a fraction in one.
    """

    id: str
    inventory: np.ndarray
    achievement_counts: np.ndarray
    actions: list[list[str]]
    env_reward: np.ndarray
    done: np.ndarray
    player_pos: np.ndarray | None = None
    achievement_status: np.ndarray | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    logged: dict[str, Any] | None = None
    views: list[str] | None = None
    messages: list[str] | None = None
    calls: list[str] | None = None
    frames_loader: Callable[[], Frames] | None = field(default=None, repr=False)
    _frames: Frames | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.inventory = _integers(self.id, "inventory", self.inventory, INVENTORY_ITEMS)
        self.achievement_counts = _integers(self.id, "achievement_counts", self.achievement_counts, ACHIEVEMENTS)
        self.env_reward = np.asarray(self.env_reward, dtype=np.float64)
        self.done = np.asarray(self.done, dtype=bool)
        if self.player_pos is None:
            self.player_pos = np.full((len(self.inventory), 2), -1, dtype=np.int32)
        self.player_pos = _integers(self.id, "player_pos", self.player_pos, ("x", "y"))
        if self.achievement_status is None:
            self.achievement_status = self.achievement_counts > 0
        self.achievement_status = np.asarray(self.achievement_status, dtype=bool)
        self.actions = [list(map(str, decision)) for decision in self.actions]
        self.validate()

    # -- checks -----------------------------------------------------------------------------
    def validate(self) -> None:
        """Check that the arrays fit together.

        Raises:
            EpisodeError: A shape, text list, counts source or action is wrong, or no decision; names it.
        """
        n = len(self.actions)
        if n == 0:
            raise EpisodeError(f"episode {self.id!r}: has no decisions (an episode needs at least one)")
        expected = {
            "inventory": (n + 1, len(INVENTORY_ITEMS)),
            "achievement_counts": (n + 1, len(ACHIEVEMENTS)),
            "achievement_status": (n + 1, len(ACHIEVEMENTS)),
            "player_pos": (n + 1, 2),
            "env_reward": (n,),
            "done": (n,),
        }
        for name, shape in expected.items():
            actual = getattr(self, name).shape
            if actual != shape:
                raise EpisodeError(
                    f"episode {self.id!r}: {name} has shape {actual}, expected {shape} for {n} decisions"
                )
        for name, length in (("views", n + 1), ("messages", n), ("calls", n)):
            texts = getattr(self, name)
            if texts is not None and (len(texts) != length or not all(isinstance(t, str) for t in texts)):
                raise EpisodeError(f"episode {self.id!r}: {name} must be {length} strings for {n} decisions")
        counts = self.metadata.get("counts", "observed")
        if counts not in COUNT_SOURCES:
            raise EpisodeError(
                f"episode {self.id!r}: metadata counts is {counts!r}; expected one of {list(COUNT_SOURCES)}"
            )
        for i, decision in enumerate(self.actions, start=1):
            if not decision:
                raise EpisodeError(f"episode {self.id!r}: decision {i} has no actions")
            unknown = [a for a in decision if a not in ACTION_IDS]
            if unknown:
                raise EpisodeError(
                    f"episode {self.id!r}: decision {i} has unknown action(s) {unknown}; Crafter's are {list(ACTIONS)}"
                )

    # -- sizes ------------------------------------------------------------------------------
    @property
    def n_decisions(self) -> int:
        """How many decisions the episode holds."""
        return len(self.actions)

    @property
    def n_steps(self) -> int:
        """Environment steps: the number of actions the decisions held."""
        return sum(len(decision) for decision in self.actions)

    @property
    def env_return(self) -> float:
        """Crafter's own return: its rewards summed over the episode."""
        return float(self.env_reward.sum())

    @property
    def unlocked(self) -> list[str]:
        """Achievements true in the last state, in Crafter's order."""
        status = self.achievement_status
        assert status is not None  # __post_init__ fills it from the counts
        return [name for name, on in zip(ACHIEVEMENTS, status[-1]) if on]

    # -- frames -----------------------------------------------------------------------------
    @property
    def has_frames(self) -> bool:
        """Whether the episode has frames (recorded with them, on disk or in memory)."""
        return self._frames is not None or self.frames_loader is not None

    @property
    def frames(self) -> Frames:
        """The frames, loaded on first access and kept; ``EpisodeError`` when the episode has none."""
        return self.load_frames()

    def load_frames(self, *, keep: bool = True) -> Frames:
        """The frames; with ``keep=False`` unloaded frames are read without being kept (a large save streams them).

        Args:
            keep: Keep the frames once read.

        Returns:
            The frames (one per step plus the reset frame).

        Raises:
            EpisodeError: The episode was recorded without frames.
        """
        if self._frames is not None:
            return self._frames
        if self.frames_loader is None:
            raise EpisodeError(f"episode {self.id!r}: recorded without frames")
        frames = self.frames_loader()
        if keep:
            self._frames = frames
        return frames

    def set_frames(self, images: np.ndarray, step_decision: np.ndarray) -> None:
        """Attach frames, checking that there is one per step plus the reset frame.

        Args:
            images: uint8 (steps + 1, 64, 64, 3).
            step_decision: int (steps,): the 1-based decision of each step.

        Raises:
            EpisodeError: A shape or dtype does not fit; names the episode.
        """
        images = np.asarray(images)
        step_decision = np.asarray(step_decision, dtype=np.int32)
        if images.dtype != np.uint8 or images.shape[1:] != FRAME_SHAPE or len(images) != self.n_steps + 1:
            raise EpisodeError(
                f"episode {self.id!r}: frames have shape {images.shape} {images.dtype}, "
                f"expected ({self.n_steps + 1}, 64, 64, 3) uint8"
            )
        if step_decision.shape != (self.n_steps,):
            raise EpisodeError(
                f"episode {self.id!r}: step_decision has shape {step_decision.shape}, expected ({self.n_steps},)"
            )
        self._frames = Frames(images, step_decision)
        self.frames_loader = None

    def step_decisions(self) -> np.ndarray:
        """For each environment step, the 1-based decision it belongs to (from the actions).

        Returns:
            int32 array, one entry per step.
        """
        sizes = np.fromiter((len(d) for d in self.actions), dtype=np.int64, count=self.n_decisions)
        return np.repeat(np.arange(1, self.n_decisions + 1, dtype=np.int32), sizes)

    # -- the task app's view ----------------------------------------------------------------
    def states(self) -> list[dict[str, dict[str, Any]]]:
        """Observation states as the task app sees them (index 0 = after reset).

        Returns:
            One dict per state: ``inventory``, ``achievements_status``, ``achievements_counts``.
        """
        inventory = self.inventory.tolist()
        counts = self.achievement_counts.tolist()
        assert self.achievement_status is not None  # __post_init__ fills it from the counts
        status = self.achievement_status.tolist()
        return [
            {
                "inventory": dict(zip(INVENTORY_ITEMS, inventory[i])),
                "achievements_status": dict(zip(ACHIEVEMENTS, status[i])),
                "achievements_counts": dict(zip(ACHIEVEMENTS, counts[i])),
            }
            for i in range(self.n_decisions + 1)
        ]

    def following(self, previous: Episode) -> Episode:
        """This episode as the task app scores it after ``previous`` in one rollout with ``on_done = "reset"``: its
        reset state is ``previous``'s last (the task app keeps its snapshots, quirk 7 in workbench.core.reward),
        so its first decision is paid for, e.g., vitals refilling to 9. Frames are not carried.

        Args:
            previous: The episode played just before in the same rollout.

        Returns:
            A new episode; this one is unchanged.
        """

        def swapped(array: np.ndarray | None, last: np.ndarray | None) -> np.ndarray:
            assert array is not None and last is not None  # __post_init__ fills every array
            return np.concatenate([last[-1:], array[1:]])

        return Episode(
            id=self.id,
            inventory=swapped(self.inventory, previous.inventory),
            achievement_counts=swapped(self.achievement_counts, previous.achievement_counts),
            achievement_status=swapped(self.achievement_status, previous.achievement_status),
            actions=self.actions,
            env_reward=self.env_reward,
            done=self.done,
            player_pos=swapped(self.player_pos, previous.player_pos),
            metadata={**self.metadata, "follows": previous.id},
            logged=self.logged,
            views=self.views,
            messages=self.messages,
            calls=self.calls,
        )

    def index_row(self) -> dict[str, Any]:
        """This episode's row of ``Corpus.index`` (metadata only: never reads frames).

        Returns:
            Column -> value, ``INDEX_COLUMNS`` order.
        """
        unlocked = self.unlocked
        return {
            "episode": self.id,
            "source": self.metadata.get("source", "recorded"),
            "policy": self.metadata.get("policy"),
            "seed": self.metadata.get("seed"),
            "decisions": self.n_decisions,
            "steps": self.n_steps,
            "env_return": self.env_return,
            "unlocked": unlocked,
            "n_unlocked": len(unlocked),
            "has_frames": self.has_frames,
            "has_logged": self.logged is not None,
            "counts": self.metadata.get("counts", "observed"),
        }

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def from_states(
        cls,
        id: str,
        states: Sequence[Mapping[str, Any]],
        actions: Sequence[Sequence[str]],
        *,
        env_reward: Sequence[float] | None = None,
        done: Sequence[bool] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Episode:
        """Build an episode from task-app observation states (index 0 = after reset).

        Missing inventory reads as 0; missing counts are estimated from the status (``metadata["counts"]`` says so).

        Args:
            id: The episode's id.
            states: Dicts of ``inventory``, ``achievements_status`` and (optional) ``achievements_counts``.
            actions: One list of Crafter action names per decision.
            env_reward: Crafter's reward per decision (None: zeros).
            done: Whether each decision ended the episode (None: all False).
            metadata: Copied into ``Episode.metadata``.

        Returns:
            The episode.
        """
        n = len(states) - 1
        inventory = [[int(s.get("inventory", {}).get(item, 0)) for item in INVENTORY_ITEMS] for s in states]
        status = [[bool(s.get("achievements_status", {}).get(a, False)) for a in ACHIEVEMENTS] for s in states]
        has_counts = all("achievements_counts" in s for s in states)
        counts = (
            [[int(s["achievements_counts"].get(a, 0)) for a in ACHIEVEMENTS] for s in states]
            if has_counts
            else np.asarray(status, dtype=np.int32)
        )
        meta = {"source": "synthetic", **(metadata or {})}
        if not has_counts:
            meta["counts"] = "estimated"
        return cls(
            id=id,
            inventory=np.asarray(inventory),
            achievement_counts=np.asarray(counts),
            achievement_status=np.asarray(status),
            actions=[list(a) for a in actions],
            env_reward=np.zeros(n) if env_reward is None else np.asarray(env_reward),
            done=np.zeros(n, bool) if done is None else np.asarray(done),
            metadata=meta,
        )


def _integers(episode_id: str, name: str, values: Any, columns: Sequence[str]) -> np.ndarray:
    """``values`` as int32, refusing what a cast would change silently (NaN, infinity, fractions, beyond
    int32): ``EpisodeValueError`` naming the episode, the state row (0 = after reset) and the column."""
    array = np.asarray(values)
    if array.dtype.kind in "iub" and (array.dtype.itemsize < 4 or array.dtype == np.int32):
        return array.astype(np.int32, copy=False)
    if array.dtype.kind not in "iubf":
        raise EpisodeValueError(f"episode {episode_id!r}: {name} must hold integers, got dtype {array.dtype}")
    wide = array.astype(np.float64) if array.dtype.kind == "f" else array
    bad = ~np.isfinite(wide) if array.dtype.kind == "f" else np.zeros(array.shape, bool)
    with np.errstate(invalid="ignore"):
        bad |= (wide < np.iinfo(np.int32).min) | (wide > np.iinfo(np.int32).max)
        if array.dtype.kind == "f":
            bad |= np.isfinite(wide) & (wide != np.round(wide))
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        row, column = where[0], (where[1] if len(where) > 1 else 0)
        label = columns[column] if len(where) > 1 and column < len(columns) else str(column)
        raise EpisodeValueError(
            f"episode {episode_id!r}: decision {row}, {name} column {label!r}: "
            f"{array[where].item()!r} is not an integer (a cast would change it silently)"
        )
    return array.astype(np.int32)


def reset_state_arrays() -> tuple[np.ndarray, np.ndarray]:
    """Inventory and counts right after ``reset()``: what Crafter starts every episode with.

    Returns:
        (16,) int32 inventory (``INVENTORY_ITEMS`` order: vitals 9, items 0) and (22,) int32
        achievement counts (all 0).
    """
    inventory = np.array([INITIAL_INVENTORY[item] for item in INVENTORY_ITEMS], dtype=np.int32)
    return inventory, np.zeros(len(ACHIEVEMENTS), dtype=np.int32)


def now_iso() -> str:
    """Creation timestamps, UTC, to the second.

    Returns:
        The time now in ISO 8601 with its offset, e.g. ``2026-12-05T07:10:00+00:00``.
    """
    return datetime.now(UTC).replace(microsecond=0).isoformat()
