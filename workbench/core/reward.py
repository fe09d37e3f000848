"""The task app's stepwise reward, exactly: ``compute_stepwise_reward`` and its coercions.

``compute_stepwise_reward`` is a drop-in for the synth-ai Crafter task app's function of the
same name: same arguments, same outputs (keys, key order, values, types) and the same update
of ``episode_counts``, quirks included. ``score_episode`` replays a rollout's bookkeeping over
one episode's observation states. The only extension is ``resource_weights``: its default is
the task app's own tables, so a call that does not pass it computes what the task app does.

This module is the reference. ``workbench.scoring`` computes the same numbers vectorised over
whole corpora and is tested against it (``tests/vectors``: the task app's own outputs).

The task app's quirks, kept as they are (docs/reward.md, "What the task app's reward really does",
shows them to whoever chooses weights; docstrings cite them by number):

1. A k_limit above 1 never matters in Crafter: an achievement unlocks at most once per
   episode. Only the default (1) and "0 or less = unlimited" act.
2. ``indicator_lambda`` 0 (or missing) scales by 1.0: it does not switch shaping off.
3. Resource shaping is uncapped and ignores k_limits: repeatable events (drinking, eating,
   saplings, placing and re-mining stone) pay every time.
4. Any rise of an item counts, health, food, drink and energy recovering included (health at
   0.05 a point); losses pay nothing.
5. Names in weights or k_limits that are not Crafter achievements are ignored silently, and an
   unknown strategy spelling runs ``consistent``.
6. ``consistent`` pays 1.0 for a decision however many achievements it unlocked.
7. With ``on_done = "reset"`` the task app does not reset its previous inventory and count
   snapshots, so the next episode's first decision is scored against the previous one's end.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from workbench.core.resource_weights import TASK_APP_RESOURCE_WEIGHTS, ResourceWeights

#: The mode under which the task app shapes rewards at all.
STEPWISE_MODE = "decision_stepwise"
CONSISTENT = "consistent"
PER_ACHIEVEMENT = "per_achievement"
STRATEGIES = (CONSISTENT, PER_ACHIEVEMENT)
#: Spellings the task app maps to each strategy (after strip().lower()). Anything else is
#: "consistent", silently: lint points that out.
STRATEGY_ALIASES: Mapping[str, str] = {
    "simple": CONSISTENT,
    "consistent": CONSISTENT,
    "consistent_stepwise": CONSISTENT,
    "decision_consistent": CONSISTENT,
    "per_achievement": PER_ACHIEVEMENT,
    "per-achievement": PER_ACHIEVEMENT,
    "perachievement": PER_ACHIEVEMENT,
    "achievement_weighted": PER_ACHIEVEMENT,
    "complex": PER_ACHIEVEMENT,
}
#: What the task app reads for a key its step_rewards table lacks.
TABLE_DEFAULTS: Mapping[str, Any] = {
    "enabled": False,
    "mode": "off",
    "strategy": CONSISTENT,
    "indicator_lambda": 0.0,
    "step_beta": 0.0,
}
#: The component a consistent decision gets, however many achievements it unlocked.
INDICATOR_COMPONENT_NAME = "__indicator__"


def normalize_strategy(strategy: Any) -> str:
    """The strategy the task app runs for a configured value: "consistent" or "per_achievement".

    Args:
        strategy: The table's ``strategy`` value, any type.

    Returns:
        The normalised strategy name.
    """
    if not isinstance(strategy, str) or not strategy.strip():
        return CONSISTENT
    return STRATEGY_ALIASES.get(strategy.strip().lower(), CONSISTENT)


def coerce_weights(weights: Any) -> dict[str, float]:
    """``str(name) -> float(value)``; items whose float() raises are dropped, a non-dict is {}.

    Args:
        weights: The table's ``weights`` value, any type.

    Returns:
        The weights the task app pays with.
    """
    if not isinstance(weights, dict):
        return {}
    coerced: dict[str, float] = {}
    for key, value in weights.items():
        try:
            coerced[str(key)] = float(value)
        except Exception:
            continue
    return coerced


def coerce_k_limits(k_limits: Any) -> dict[str, int]:
    """``str(name) -> int(value)``; int() only, so "2.5" is dropped and 1.7 becomes 1.

    Args:
        k_limits: The table's ``k_limits`` value, any type.

    Returns:
        The limits the task app applies.
    """
    if not isinstance(k_limits, dict):
        return {}
    coerced: dict[str, int] = {}
    for key, value in k_limits.items():
        try:
            coerced[str(key)] = int(value)
        except Exception:
            continue
    return coerced


def coerce_state_int(value: Any) -> int | None:
    """A state value as int the way the task app reads it.

    Args:
        value: An inventory or count value from an observation.

    Returns:
        The int, or None when it cannot be read.
    """
    if isinstance(value, bool):
        return int(value)
    try:
        return int(value)
    except Exception:
        pass
    try:
        return int(float(value))
    except Exception:
        return None


def effective_lambda(indicator_lambda: Any) -> Any:
    """The factor applied to the base reward: lambda, except that None or 0 means 1.0.

    Args:
        indicator_lambda: The table's ``indicator_lambda`` value.

    Returns:
        The factor, as given (not converted) unless it was None or 0.
    """
    if indicator_lambda is None or indicator_lambda == 0:
        return 1.0
    return indicator_lambda


def _resource_gains(previous: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[tuple[str, int]]:
    """(name, delta) for every entry of ``new`` that rose, in ``new``'s order."""
    if not isinstance(new, Mapping):
        return []
    previous = previous if isinstance(previous, Mapping) else {}
    gains = []
    for name, raw in new.items():
        value = coerce_state_int(raw)
        if value is None:
            continue
        delta = value - (coerce_state_int(previous.get(name)) or 0)
        if delta > 0:
            gains.append((name, delta))
    return gains


def compute_stepwise_reward(
    prev_achievements: Mapping[str, Any] | None,
    new_achievements: Mapping[str, Any] | None,
    decision_index: int,
    actions_summary: Sequence[Any],
    indicator_lambda: Any,
    *,
    strategy: Any = None,
    weights: Any = None,
    k_limits: Any = None,
    episode_counts: MutableMapping[str, Any] | None = None,
    prev_inventory: Mapping[str, Any] | None = None,
    new_inventory: Mapping[str, Any] | None = None,
    prev_counts: Mapping[str, Any] | None = None,
    new_counts: Mapping[str, Any] | None = None,
    resource_weights: ResourceWeights = TASK_APP_RESOURCE_WEIGHTS,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
    """One decision's stepwise reward, as the task app computes it.

    Under per_achievement it records each credit in ``episode_counts`` when given. Junk
    values are read as the task app reads them; nothing here raises on bad input.

    Args:
        prev_achievements: Achievement name -> unlocked, before the decision.
        new_achievements: Achievement name -> unlocked, after it.
        decision_index: The decision's position in the episode (copied into the outputs).
        actions_summary: The decision's actions (copied into ``decision_sample``).
        indicator_lambda: The table's ``indicator_lambda`` (0 or junk reads as 1.0).
        strategy: The table's strategy string (normalised as the task app does).
        weights: The table's achievement weights.
        k_limits: The table's per-achievement unlock limits (``per_achievement``).
        episode_counts: Achievement name -> times credited this episode; updated in place.
        prev_inventory: Inventory before the decision (resource shaping).
        new_inventory: Inventory after it.
        prev_counts: Achievement counts before the decision (count shaping).
        new_counts: Achievement counts after it.
        resource_weights: The workbench's extension; leave it to match the task app.

    Returns:
        ``(stepwise_info, decision_sample, stats)``: the task app's three dicts, keys in its order.
    """
    prev_map = prev_achievements or {}
    new_map = new_achievements or {}
    unlocked = [name for name, value in new_map.items() if value and not prev_map.get(name, False)]
    strategy_name = normalize_strategy(strategy)

    base = 0.0
    components: list[dict[str, Any]] = []
    credited: list[str] = []
    resource_reward = 0.0
    inventory_deltas: dict[str, int] = {}
    count_deltas: dict[str, int] = {}

    if strategy_name == PER_ACHIEVEMENT:
        weight_map = coerce_weights(weights)
        limit_map = coerce_k_limits(k_limits)
        running: Mapping[str, Any] = episode_counts if isinstance(episode_counts, MutableMapping) else {}
        for name in unlocked:
            try:
                limit = int(limit_map.get(name, 1))
            except Exception:
                limit = 1
            try:
                prior = int(running.get(name, 0))
            except Exception:
                prior = 0
            if limit <= 0 or prior < limit:  # limit <= 0 means unlimited
                try:
                    weight = float(weight_map.get(name, 1.0))
                except Exception:
                    weight = 1.0
                base += weight
                components.append({"achievement": name, "weight": weight, "count_prior": prior, "count_limit": limit})
                credited.append(name)
                if isinstance(episode_counts, MutableMapping):
                    episode_counts[name] = prior + 1

        # Resource shaping: always, uncapped, blind to k_limits (quirks 3 and 4).
        for item, delta in _resource_gains(prev_inventory, new_inventory):
            weight = resource_weights.inventory_weight(item)
            gain = weight * delta
            resource_reward += gain
            inventory_deltas[item] = delta
            components.append({"type": "inventory", "item": item, "delta": delta, "weight": weight, "reward": gain})
        for name, delta in _resource_gains(prev_counts, new_counts):
            weight = resource_weights.achievement_count_weight(name)
            gain = weight * delta
            resource_reward += gain
            count_deltas[name] = delta
            components.append(
                {"type": "achievement_count", "name": name, "delta": delta, "weight": weight, "reward": gain}
            )
        base += resource_reward
    elif unlocked:
        # consistent: 1.0 however many names unlocked (quirk 6).
        base = 1.0
        components.append({"achievement": INDICATOR_COMPONENT_NAME, "weight": 1.0, "count_prior": 0, "count_limit": 1})

    indicator = 1 if (unlocked or base > 0) else 0
    reward = float(effective_lambda(indicator_lambda)) * float(base)

    stepwise_info: dict[str, Any] = {
        "decision_index": decision_index,
        "indicator": indicator,
        "new_achievements": list(unlocked),
        "reward": reward,
        "strategy": strategy_name,
        "base_reward": base,
    }
    if components:
        stepwise_info["components"] = components
    if credited:
        stepwise_info["credited_achievements"] = credited
    if resource_reward:
        stepwise_info["resource_reward"] = resource_reward
    if inventory_deltas:
        stepwise_info["inventory_deltas"] = inventory_deltas
    if count_deltas:
        stepwise_info["achievement_count_deltas"] = count_deltas

    decision_sample: dict[str, Any] = {
        "decision_index": decision_index,
        "indicator": indicator,
        "r_i": reward,
        "base": base,
        "strategy": strategy_name,
        "actions": actions_summary,
    }
    if components:
        decision_sample["components"] = components
    if resource_reward:
        decision_sample["resource_reward"] = resource_reward

    stats: dict[str, float] = {
        "indicator": float(indicator),
        "reward": reward,
        "new_achievements_count": float(len(unlocked)),
        "base_reward": base,
        "credited_achievements_count": float(len(credited)),
    }
    if resource_reward:
        stats["resource_reward"] = resource_reward
    return stepwise_info, decision_sample, stats
