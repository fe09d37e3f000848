"""The task app's stepwise reward, one decision at a time, with its per-episode bookkeeping.

``DecisionScorer`` makes, per decision, exactly the ``compute_stepwise_reward`` call that
``workbench.core.episode_reward.score_episode`` (the reference for a rollout) makes for that decision: the
same decision index (from 1), action summary, lambda, strategy, weights, k-limits, resource
tables and the episode's credit counts, cleared at reset. So the reward of a decision played
live equals what ``score_episode`` and ``workbench.score`` give for the recorded episode, ``==``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.episode_reward import actions_summary
from workbench.core.reward import compute_stepwise_reward
from workbench.errors import EnvError
from workbench.scoring.potential import config_potential, state_potential

#: What ``CrafterStepwiseEnv(shaping=...)`` accepts.
SHAPINGS = ("task_app", "potential")
#: A task-app observation state: ``inventory``, ``achievements_status``, ``achievements_counts``.
State = dict[str, dict[str, Any]]


def state_from_row(inventory: Sequence[int], counts: Sequence[int]) -> State:
    """The task app's observation state of an ``Episode`` row (as ``Episode.states()`` builds it).

    ``inventory`` is in ``INVENTORY_ITEMS`` order and ``counts`` in ``ACHIEVEMENTS`` order (what
    ``workbench.data.recording.state_row`` gives); the map orders are the ones ``Episode.states()``
    uses, which the resource reward sums in.
    """
    return {
        "inventory": dict(zip(INVENTORY_ITEMS, inventory)),
        "achievements_status": {name: count > 0 for name, count in zip(ACHIEVEMENTS, counts)},
        "achievements_counts": dict(zip(ACHIEVEMENTS, counts)),
    }


class DecisionScorer:
    """Scores one episode decision by decision, as a rollout does (``workbench.core.episode_reward.score_episode``)."""

    def __init__(self, config: RewardConfig) -> None:
        self.config = config
        self._strategy = config.rule.name  # the strategy the task app runs (its rule's name)
        self._weights = dict(config.weights)
        self._k_limits = dict(config.k_limits)
        self._resource_weights = config.resource_weights
        self._credit_counts: dict[str, int] = {}
        self._previous: State | None = None
        self.decision_index = 0

    def reset(self, state: State) -> None:
        """Start an episode at ``state`` (the observation after reset): credit counts cleared."""
        self._credit_counts = {}
        self._previous = state
        self.decision_index = 0

    def score(self, state: State, actions: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
        """The decision that ended in ``state`` after playing ``actions``: ``(stepwise_info,
        decision_sample, stats)`` of ``compute_stepwise_reward``; ``stats["reward"]`` is the reward.

        Raises ``RuntimeError`` before ``reset`` (a bug of the caller, not a user error).
        """
        if self._previous is None:
            raise RuntimeError("DecisionScorer.score called before reset")
        before = self._previous
        self.decision_index += 1
        result = compute_stepwise_reward(
            before.get("achievements_status"),
            state.get("achievements_status"),
            self.decision_index,
            actions_summary(actions),
            self.config.indicator_lambda,
            strategy=self._strategy,
            weights=self._weights,
            k_limits=self._k_limits,
            episode_counts=self._credit_counts,
            prev_inventory=before.get("inventory"),
            new_inventory=state.get("inventory"),
            prev_counts=before.get("achievements_counts"),
            new_counts=state.get("achievements_counts"),
            resource_weights=self._resource_weights,
        )
        self._previous = state
        return result

    @property
    def credit_counts(self) -> dict[str, int]:
        """A copy of this episode's credit counts (name -> times credited so far)."""
        return dict(self._credit_counts)


class PotentialPayer:
    """The reward a decision pays under ``shaping``: the task app's stepwise reward
    (``"task_app"``), or its achievement credits plus ``gamma Phi(s') - Phi(s)`` with the config's
    potential-based counterpart (``"potential"``, ``workbench.scoring.potential``; a death's
    potential is 0). Equal, decision by decision, to ``kind_rewards(...)[:, 0] +
    shaping_payments(...)`` on the recorded episode."""

    def __init__(self, config: RewardConfig, shaping: str, gamma: float) -> None:
        if shaping not in SHAPINGS:
            raise EnvError(f"shaping must be one of {list(SHAPINGS)}, got {shaping!r}")
        if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0.0 <= float(gamma) <= 1.0:
            raise EnvError(f"gamma must be a number within [0, 1] (the learner's discount), got {gamma!r}")
        self.shaping = shaping
        self.gamma = float(gamma)
        self._lambda = config.effective_lambda
        self._weights = config_potential(config)
        self._phi = 0.0

    def reset(self, inventory: Sequence[int], counts: Sequence[int]) -> None:
        """Start an episode at the reset state's inventory and counts."""
        self._phi = state_potential(np.asarray(inventory), np.asarray(counts), self._weights)

    def pay(
        self,
        stepwise: dict[str, Any],
        stats: dict[str, float],
        inventory: Sequence[int],
        counts: Sequence[int],
        terminated: bool,
    ) -> float:
        """The reward of the decision that ended in ``inventory`` / ``counts``."""
        if self.shaping == "task_app":
            return float(stats["reward"])
        phi = state_potential(np.asarray(inventory), np.asarray(counts), self._weights)
        after = 0.0 if terminated else phi
        shaping = self.gamma * after - self._phi
        self._phi = phi
        credits = sum(c["weight"] for c in stepwise.get("components", ()) if "achievement" in c)
        return float(self._lambda * credits + shaping)
