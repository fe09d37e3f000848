"""The reference scorer: a task-app rollout's reward bookkeeping, replayed over one episode.

``score_episode`` is the reference for what a rollout records per decision
(``info.stepwise``, ``decision_samples``, ``info.meta.decision_rewards``) and at the end
(``metrics.details["stepwise"]``). It calls ``compute_stepwise_reward`` once per decision, as
the task app does, so it is exact but slow; ``workbench.scoring`` is the fast path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.config import RewardConfig
from workbench.core.reward import PER_ACHIEVEMENT, compute_stepwise_reward
from workbench.errors import EpisodeError


@dataclass(frozen=True)
class DecisionResult:
    """What the task app records for one decision.

    Attributes:
        stepwise_info: ``info["stepwise"]``.
        decision_sample: The decision's entry in ``decision_samples``.
        stats: ``reward``, ``indicator`` and the other per-decision numbers.
        decision_rewards: The decision's entry in ``info.meta.decision_rewards``.
    """

    stepwise_info: dict[str, Any]
    decision_sample: dict[str, Any]
    stats: dict[str, float]
    decision_rewards: dict[str, Any]

    @property
    def reward(self) -> float:
        """The decision's shaped reward (``stats['reward']``)."""
        return self.stats["reward"]


@dataclass(frozen=True)
class EpisodeResult:
    """Per-decision results and the rollout's ``metrics.details["stepwise"]`` summary.

    Attributes:
        decisions: One result per decision, in order.
        summary: ``metrics.details["stepwise"]`` (see ``stepwise_summary``).
    """

    decisions: list[DecisionResult]
    summary: dict[str, Any]

    @property
    def rewards(self) -> list[float]:
        """The shaped reward of every decision, in order."""
        return [d.reward for d in self.decisions]


def stepwise_summary(
    config: RewardConfig,
    *,
    indicator_sum: float,
    reward_sum: float,
    resource_reward: float,
    new_achievements_total: int,
    unique_achievements: Iterable[str],
    final_achievements: Iterable[str],
) -> dict[str, Any]:
    """The rollout's ``metrics.details["stepwise"]`` for one episode, keys in the task app's
    order: the sums, the config echo (mode, normalised strategy, lambda as written, step_beta
    when non-zero, weights and k_limits under per_achievement when non-empty), then the
    unique (seen) and final achievements, sorted.

    Args:
        config: The config scored (echoed in the summary).
        indicator_sum: Sum of the decisions' indicators.
        reward_sum: The shaped return.
        resource_reward: Sum of the resource (inventory and count) rewards.
        new_achievements_total: Unlocks over the episode.
        unique_achievements: Achievements unlocked during the episode.
        final_achievements: Achievements true in the last state.

    Returns:
        The summary dict.
    """
    unique = sorted(unique_achievements)
    summary: dict[str, Any] = {
        "indicator_sum": float(indicator_sum),
        "reward_sum": float(reward_sum),
        "resource_reward": float(resource_reward),
        "new_achievements_total": int(new_achievements_total),
        "mode": config.effective_mode,
        "strategy": config.effective_strategy,
        "indicator_lambda": float(config.indicator_lambda),
    }
    if config.step_beta:
        summary["step_beta"] = float(config.step_beta)
    if config.effective_strategy == PER_ACHIEVEMENT:
        if config.weights:
            summary["weights"] = dict(config.weights)
        if config.k_limits:
            summary["k_limits"] = dict(config.k_limits)
    summary["unique_achievements_total"] = len(unique)
    summary["unique_achievements"] = unique
    summary["final_achievements"] = sorted(final_achievements)
    return summary


def actions_summary(actions: Sequence[str]) -> list[dict[str, Any]]:
    """The task app's summary of one decision's tool call (``interact_many``).

    Args:
        actions: The decision's Crafter action names.

    Returns:
        ``[{"tool": "interact_many", "args": {"actions": [...]}}]``.
    """
    return [{"tool": "interact_many", "args": {"actions": list(actions)}}]


def score_episode(
    states: Sequence[Mapping[str, Any]],
    config: RewardConfig,
    actions: Sequence[Sequence[str]] | None = None,
) -> EpisodeResult:
    """Score one episode as a rollout does.

    Scoring ignores ``config.active``: it answers "what would this table pay", which is what a
    designer asks; the task app would record nothing for an inactive table (lint says so).

    Args:
        states: The observation after reset, then one per decision (``inventory``, ``achievements_*``).
        config: The step_rewards table to pay with.
        actions: One list of Crafter action names per decision; only fills ``decision_sample["actions"]``.

    Returns:
        The episode's per-decision rewards, samples and totals, as the task app records them.

    Raises:
        EpisodeError: No decision (a rollout never scores one), or ``actions`` of the wrong length.
    """
    if len(states) < 2:
        raise EpisodeError(f"an episode needs the reset state and at least one decision; got {len(states)} state(s)")
    if actions is not None and len(actions) != len(states) - 1:
        raise EpisodeError(f"{len(actions)} action lists for {len(states) - 1} decisions")

    strategy = config.effective_strategy
    lam = config.indicator_lambda
    weights, k_limits = dict(config.weights), dict(config.k_limits)
    resource_weights = config.resource_weights
    credit_counts: dict[str, int] = {}
    seen = {name for name, value in (states[0].get("achievements_status") or {}).items() if value}
    indicator_sum = reward_sum = resource_sum = 0.0
    new_total = 0
    decisions = []
    for index in range(1, len(states)):
        before, after = states[index - 1], states[index]
        info, sample, stats = compute_stepwise_reward(
            before.get("achievements_status"),
            after.get("achievements_status"),
            index,
            actions_summary(actions[index - 1]) if actions is not None else [],
            lam,
            strategy=strategy,
            weights=weights,
            k_limits=k_limits,
            episode_counts=credit_counts,
            prev_inventory=before.get("inventory"),
            new_inventory=after.get("inventory"),
            prev_counts=before.get("achievements_counts"),
            new_counts=after.get("achievements_counts"),
            resource_weights=resource_weights,
        )
        indicator_sum += stats["indicator"]
        reward_sum += stats["reward"]
        resource_sum += stats.get("resource_reward", 0.0)
        new_total += int(stats["new_achievements_count"])
        unlocked = set(info["new_achievements"])
        unique = unlocked - seen
        seen |= unlocked
        decision_rewards = {
            "turn": index,
            "ach_delta": len(unlocked),
            "unique_delta": len(unique),
            "all": sorted(unlocked),
            "unique": sorted(unique),
        }
        decisions.append(DecisionResult(info, sample, stats, decision_rewards))

    final_status = states[-1].get("achievements_status") or {}
    summary = stepwise_summary(
        config,
        indicator_sum=indicator_sum,
        reward_sum=reward_sum,
        resource_reward=resource_sum,
        new_achievements_total=new_total,
        unique_achievements=seen,
        final_achievements=[name for name, value in final_status.items() if value],
    )
    return EpisodeResult(decisions, summary)
