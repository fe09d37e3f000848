"""``CrafterStepwiseEnv``: Crafter as a gymnasium environment paying the task app's stepwise reward.

One ``step`` is one task-app decision: 1..K Crafter actions (``workbench.env.actions``), run in
order; the decision closes after the last one, or early when Crafter reports ``done`` (the
remaining actions are not run, as ``workbench.data.recording`` does). The reward is
``compute_stepwise_reward(...)["reward"]`` of that decision under the ``RewardConfig``, with the
rollout's per-episode credit counts (``workbench.env.stepwise``); Crafter's own reward is in
``info["env_reward"]``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import crafter
import gymnasium
import numpy as np
from gymnasium import spaces

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import INVENTORY_ITEMS
from workbench.core.episode_reward import score_episode
from workbench.core.named_configs import CONSISTENT_CONFIG, load_config
from workbench.data.episodes import ACTION_IDS, FRAME_SHAPE, Corpus, Episode
from workbench.data.policies import PolicyInput, policy_input_from
from workbench.data.recording import EpisodeTrace, state_row
from workbench.env.actions import decision_space, decode_decision, encode_decision
from workbench.env.episode_sink import EpisodeSink, episode_metadata
from workbench.env.stepwise import DecisionScorer, PotentialPayer, state_from_row
from workbench.errors import EnvError

#: Crafter clips every inventory entry to 0..9 (crafter.constants.items[...]["max"]).
INVENTORY_MAX = 9
OBSERVATIONS = ("image", "dict")


def resolve_config(config: RewardConfig | str | Path | Mapping[str, Any] | None) -> RewardConfig:
    """A ``RewardConfig`` from what a user passes.

    Args:
        config: a config; a named config or a file path (``load_config``); a step_rewards table
            read leniently as the task app reads it (``RewardConfig.from_dict``); or None for the
            named config ``consistent`` (active, consistent, lambda 1).

    Returns:
        The config the env scores with.

    Raises:
        ConfigError: a file that cannot be read, or a name that is no named config.
        EnvError: anything else.
    """
    if config is None:
        return CONSISTENT_CONFIG.config
    if isinstance(config, RewardConfig):
        return config
    if isinstance(config, (str, Path)):
        return load_config(config)
    if isinstance(config, Mapping):
        return RewardConfig.from_dict(config)
    raise EnvError(
        f"config must be a RewardConfig, a config file path or a step_rewards table, got {type(config).__name__}"
    )


class CrafterStepwiseEnv(gymnasium.Env):
    """Crafter, one decision per step, rewarded exactly as the task app's stepwise reward.

    Like ``workbench.score``, the env pays what the table would pay even when it is not
    ``active`` (it warns: the task app would pay nothing then).

    Args:
        config: The reward (see ``resolve_config``).
        actions_per_decision: K; 1 gives ``Discrete(17)``, K > 1 ``MultiDiscrete`` with an
            end-of-decision padding value (``workbench.env.actions``).
        length: Crafter's episode length in environment steps (truncation); None for no limit.
        observation: ``"image"`` (``Box(0, 255, (64, 64, 3), uint8)``) or ``"dict"`` (``image`` plus
            ``inventory``, ``Box(0, 9, (16,), int64)`` in ``INVENTORY_ITEMS`` order).
        record: Keep every episode played as an ``Episode`` (``env.recorded`` is the ``Corpus``).
        record_to: Save each into this corpus folder as it ends (it must not hold episodes).
        record_frames: Keep every frame too.
        policy_name: The recorded ``policy``.
        render_mode: None or ``"rgb_array"``.
        render_size: ``render()`` draws this many pixels square.
        shaping: ``"task_app"`` pays the stepwise reward; ``"potential"`` its achievement credits
            plus the potential-based counterpart of its resource shaping, ``gamma Phi(s') - Phi(s)``
            (``workbench.scoring.potential``; 0 after a death): what ``workbench certify`` proposes.
        gamma: The learner's discount, for ``shaping="potential"``.

    Raises:
        EnvError: A bad argument.
        ConfigError: An unreadable config file.
        TargetExistsError: ``record_to`` already holds episodes.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(
        self,
        config: RewardConfig | str | Path | Mapping[str, Any] | None = None,
        actions_per_decision: int = 1,
        length: int | None = 10000,
        *,
        observation: Literal["image", "dict"] = "image",
        record: bool = False,
        record_to: str | Path | None = None,
        record_frames: bool = False,
        policy_name: str | None = None,
        render_mode: str | None = None,
        render_size: int = 256,
        shaping: Literal["task_app", "potential"] = "task_app",
        gamma: float = 1.0,
    ) -> None:
        self.config = resolve_config(config)
        self._potential = PotentialPayer(self.config, shaping, gamma)
        self.action_space = decision_space(actions_per_decision)
        self.actions_per_decision = int(actions_per_decision)
        if length is not None and (isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1):
            raise EnvError(f"length must be an integer >= 1 (environment steps) or None for no limit, got {length!r}")
        self.length = None if length is None else int(length)
        if observation not in OBSERVATIONS:
            raise EnvError(f"observation must be one of {list(OBSERVATIONS)}, got {observation!r}")
        self.observation = observation
        image = spaces.Box(0, 255, FRAME_SHAPE, np.uint8)
        self.observation_space = (
            image
            if observation == "image"
            else spaces.Dict(
                {
                    "image": image,
                    "inventory": spaces.Box(0, INVENTORY_MAX, (len(INVENTORY_ITEMS),), np.int64),
                }
            )
        )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise EnvError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        self.render_size = int(render_size)
        self.record_frames = bool(record_frames)
        self._sink = EpisodeSink(record, record_to, policy_name)
        if self.record_frames and not self._sink.active:
            raise EnvError(
                "record_frames=True needs record=True and/or record_to=FOLDER (frames are kept for a recording)"
            )
        if not self.config.active:
            warnings.warn(
                f"this reward config is not active (enabled={self.config.enabled!r}, mode={self.config.mode!r}): the "
                "task app would pay no stepwise reward; the env pays what the table would pay, as workbench.score does",
                UserWarning,
                stacklevel=2,
            )
        self._scorer = DecisionScorer(self.config)
        self._crafter: crafter.Env | None = None
        self._crafter_seed = 0
        self._crafter_episode = 0
        self._trace: EpisodeTrace | None = None
        self._image: np.ndarray | None = None  # the last observation image, for policy_input()
        self._steps = 0
        self._ended = True

    # -- gymnasium API ----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start an episode: a new ``crafter.Env(seed=seed)`` when ``seed`` is given (or on the first
        reset, with a seed drawn from ``np_random``), else the next world of the current one. An
        unfinished episode is recorded first (metadata ``end`` "abandoned").

        Args:
            seed: A ``crafter.Env`` seed for a new world sequence; None continues the current one.
            options: Accepted for gymnasium's API; unused.

        Returns:
            ``(observation, info)``; info has ``seed`` (the ``crafter.Env`` seed),
            ``crafter_episode`` (which of its worlds), ``inventory`` and ``achievements``.
        """
        super().reset(seed=seed)
        self._finish("abandoned")
        if seed is not None or self._crafter is None:
            # Crafter's world generation is deterministic per (seed, episode number), so equal
            # seeds give equal reset observations; later trajectories are not (crafter.md).
            self._crafter_seed = int(seed) if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
            self._crafter = crafter.Env(seed=self._crafter_seed, length=self.length or 0)
            self._crafter_episode = 0
        image = self._crafter.reset()
        self._crafter_episode += 1
        seen = policy_input_from(self._crafter, image, None, 0, self.actions_per_decision)
        row = state_row(seen.inventory, seen.achievements, seen.player_pos)
        self._scorer.reset(state_from_row(row[0], row[1]))
        self._potential.reset(row[0], row[1])
        self._trace = EpisodeTrace(row, image.copy() if self.record_frames else None)
        self._steps = 0
        self._ended = False
        self._image = image
        info = {
            "seed": self._crafter_seed,
            "crafter_episode": self._crafter_episode,
            "inventory": dict(seen.inventory),
            "achievements": dict(seen.achievements),
        }
        return self._observe(image, row[0]), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Play one decision.

        Args:
            action: An element of the action space.

        Returns:
            ``(observation, reward, terminated, truncated, info)``: reward the stepwise reward (or its
            potential-based counterpart, ``shaping``), terminated = the player died (Crafter's discount 0),
            truncated = Crafter's length limit reached without dying. ``info``: ``stepwise`` (the task
            app's stepwise info of the decision), ``env_reward`` (Crafter's reward summed over the actions
            run), ``decision_index`` (from 1), ``actions`` (the names run), ``steps`` (environment steps so
            far), ``inventory``, ``achievements`` (cumulative counts), ``discount``, ``player_pos``; at
            the episode's end also ``episode_stepwise``, the rollout's ``metrics.details["stepwise"]``.

        Raises:
            EnvError: An action outside the space, or a step before reset or after the end.
        """
        if self._crafter is None:
            raise EnvError("step() before reset(): call reset() to start an episode")
        if self._ended or self._trace is None:
            raise EnvError("step() after the episode ended (terminated or truncated): call reset()")
        names = decode_decision(action, self.action_space)
        executed: list[str] = []
        frames: list[np.ndarray] = []
        env_reward = 0.0
        try:
            for name in names:
                image, step_reward, done, crafter_info = self._crafter.step(ACTION_IDS[name])
                executed.append(name)
                env_reward += step_reward
                if self.record_frames:
                    frames.append(image.copy())
                if done:
                    break  # the episode ended mid-decision: the remaining actions are not run
        except BaseException as error:
            # Ctrl-C (or an error) inside Crafter's step: the world moved on by actions the trace
            # never saw, so the episode cannot go on as if whole. It ends here, recorded up to the
            # last whole decision and marked truncated (never as if it had ended on its own).
            self._finish(
                "truncated", interrupted=f"{type(error).__name__} during decision {self._trace.n_decisions + 1}"
            )
            raise
        self._steps += len(executed)
        self._image = image
        row = state_row(crafter_info["inventory"], crafter_info["achievements"], crafter_info["player_pos"])
        stepwise, _, stats = self._scorer.score(state_from_row(row[0], row[1]), executed)
        self._trace.add(row, executed, env_reward, bool(done), frames)
        terminated = crafter_info["discount"] == 0.0
        truncated = bool(done) and not terminated
        reward = self._potential.pay(stepwise, stats, row[0], row[1], terminated)
        info: dict[str, Any] = {
            "stepwise": stepwise,
            "env_reward": env_reward,
            "decision_index": self._scorer.decision_index,
            "actions": executed,
            "steps": self._steps,
            "inventory": dict(crafter_info["inventory"]),
            "achievements": dict(crafter_info["achievements"]),
            "discount": float(crafter_info["discount"]),
            "player_pos": (int(row[2][0]), int(row[2][1])),
        }
        if done:
            info["episode_stepwise"] = self._finish("terminated" if terminated else "truncated")
        return self._observe(image, row[0]), reward, bool(terminated), truncated, info

    def render(self) -> np.ndarray | None:
        """The current state drawn at ``render_size`` pixels (``render_mode="rgb_array"``), else None.

        At night Crafter draws its render noise from the world's random generator, so rendering
        changes what follows (as with ``crafter.Recorder``); Crafter trajectories do not replay anyway.

        Returns:
            uint8 (render_size, render_size, 3), or None without ``render_mode="rgb_array"``.

        Raises:
            EnvError: Before the first reset.
        """
        if self.render_mode is None:
            return None
        if self._crafter is None:
            raise EnvError("render() before reset(): there is no world yet")
        return self._crafter.render((self.render_size, self.render_size))

    def close(self) -> None:
        """Record an unfinished episode (``end`` "abandoned") and let Crafter go."""
        self._finish("abandoned")
        self._crafter = None
        super().close()

    # -- the workbench's additions ----------------------------------------------------------
    @property
    def recorded(self) -> Corpus:
        """The episodes recorded so far as a ``Corpus`` (``record=True``: in memory; else read from
        ``record_to``). Raises ``EnvError`` when the env does not record or nothing ended yet."""
        return self._sink.corpus()

    @property
    def crafter_env(self) -> crafter.Env | None:
        """The ``crafter.Env`` being played (None before the first reset); read it, do not step it."""
        return self._crafter

    def keep_recorded(self, policy_name: str | None = None) -> None:
        """Keep each episode in memory as it ends, for ``take_recorded`` (what
        ``workbench.env.RecordEpisodes`` uses; a ``record_to`` folder keeps being written).

        Args:
            policy_name: The recorded ``policy`` (None keeps the current one).
        """
        self._sink.keep = True
        if policy_name is not None:
            self._sink.name_policy(policy_name)

    def take_recorded(self) -> list[Episode]:
        """The episodes ended since the last call (kept by ``record=True`` / ``keep_recorded``),
        handed over: the env keeps no reference to them.

        Returns:
            The episodes, in the order they ended.
        """
        taken, self._sink.episodes = self._sink.episodes, []
        return taken

    def policy_input(self) -> PolicyInput:
        """What a ``workbench.data.policies`` policy sees now (the last image, inventory, semantic map,
        ...), so ``scripted``, ``farmer`` or your own policy can play the env:
        ``env.step(env.encode(policy(env.policy_input())))``.

        Returns:
            The policy's input for the current state.

        Raises:
            EnvError: Before reset.
        """
        if self._crafter is None or self._image is None:
            raise EnvError("policy_input() before reset(): there is no world yet")
        return policy_input_from(self._crafter, self._image, None, self._steps, self.actions_per_decision)

    def encode(self, names: list[str] | str) -> int | np.ndarray:
        """The action playing Crafter actions ``names`` as one decision.

        Args:
            names: Crafter action names (one name for a single action).

        Returns:
            An element of the action space.

        Raises:
            EnvError: An unknown name, no name, or more names than a decision holds.
        """
        return encode_decision(names, self.action_space)

    def decode(self, action: Any) -> list[str]:
        """The Crafter action names ``action`` plays.

        Args:
            action: An element of the action space.

        Returns:
            The names, in order.

        Raises:
            EnvError: ``action`` is not in the action space.
        """
        return decode_decision(action, self.action_space)

    # -- internals --------------------------------------------------------------------------
    def _observe(self, image: np.ndarray, inventory: list[int]) -> Any:
        if self.observation == "image":
            return image
        return {"image": image, "inventory": np.array(inventory, dtype=np.int64)}

    def _finish(self, end: str, *, interrupted: str | None = None) -> dict[str, Any] | None:
        """Close the current episode: record it and return the rollout's stepwise summary.

        ``interrupted`` (what cut the episode short) goes into its metadata. Does nothing (None)
        when no episode is open or it has no decision yet.
        """
        trace, self._trace = self._trace, None
        self._ended = True
        if trace is None or trace.n_decisions == 0:
            return None
        metadata = episode_metadata(
            seed=self._crafter_seed,
            crafter_episode=self._crafter_episode,
            number=self._sink.number,
            policy=self._sink.policy_name,
            actions_per_decision=self.actions_per_decision,
            length=self.length,
            config=self.config.to_dict(),
            end=end,
        )
        if interrupted is not None:
            metadata["interrupted"] = interrupted
        episode = trace.episode(self._sink.next_id(self._crafter_seed), metadata)
        if self._sink.active:
            self._sink.put(episode)
        return score_episode(episode.states(), self.config, episode.actions).summary
