"""Crafter as a gymnasium environment that pays the task app's stepwise reward, exactly.

``import workbench.env`` registers ``ENV_ID`` ("workbench/CrafterStepwise-v0") with gymnasium::

    import gymnasium
    import workbench.env
    env = gymnasium.make("workbench/CrafterStepwise-v0", config="configs/recommended.yaml",
                         actions_per_decision=1, length=10000)

One step is one decision (``CrafterStepwiseEnv``); the reward is
``compute_stepwise_reward(...)["reward"]`` with the rollout's bookkeeping, so an episode played
here, recorded and scored by ``workbench.score`` gets the same rewards (``==``).

While an agent trains, ``RecordEpisodes(env, corpus_dir)`` writes every finished episode into a
corpus folder (sync and async vector envs too) and ``TensorBoardSeries`` writes per-component
reward series beside the training curves.
"""

from __future__ import annotations

import gymnasium

from workbench.env.actions import END_OF_DECISION, decision_space, decode_decision, encode_decision
from workbench.env.crafter_env import CrafterStepwiseEnv, resolve_config
from workbench.env.episode_sink import ENDINGS
from workbench.env.record import RecordEpisodes
from workbench.env.tensorboard import TensorBoardSeries, read_scalars

#: The gymnasium id registered on import.
ENV_ID = "workbench/CrafterStepwise-v0"

__all__ = [
    "ENDINGS",
    "END_OF_DECISION",
    "ENV_ID",
    "CrafterStepwiseEnv",
    "RecordEpisodes",
    "TensorBoardSeries",
    "decision_space",
    "decode_decision",
    "encode_decision",
    "read_scalars",
    "resolve_config",
]

if ENV_ID not in gymnasium.registry:  # re-importing (e.g. importlib.reload) must not warn about overriding
    gymnasium.register(
        id=ENV_ID,
        entry_point="workbench.env.crafter_env:CrafterStepwiseEnv",
        kwargs={"config": None, "actions_per_decision": 1, "length": 10000},
        # Crafter is not reproducible from seed and actions beyond world generation (crafter.md:
        # chunk balancing iterates sets ordered by memory address), so gymnasium is told so.
        nondeterministic=True,
        # Crafter's own length limit (in environment steps) truncates; no TimeLimit in decisions.
        max_episode_steps=None,
    )
