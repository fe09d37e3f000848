"""The reward rules, as data read in one place: what each strategy and each producer pays.

Three rules pay Crafter decisions (docs/reward.md):

- ``CONSISTENT_RULE``: the task app's ``consistent`` strategy, 1.0 for a decision that unlocks
  anything however many names (quirk 6); weights, k-limits and resource tables unread.
- ``PER_ACHIEVEMENT_RULE``: the task app's ``per_achievement`` strategy, a credit per unlock up to
  its k-limit (a limit above 1 never acts, quirk 1) plus uncapped resource shaping (quirks 3, 4).
- ``INDICATOR_ONLY_RULE``: the loop of synth-ai 0.2.16-0.2.24 (``workbench.data.importers
  .producers``), ``lambda * any unlock`` whatever the table asks; its lambda 0 (or omitted) pays 0.

Both task-app rules read ``indicator_lambda`` the task app's way: 0 or None scales by 1.0
(quirk 2). Every layer asks a rule (``RewardConfig.rule``, ``rule_for``) what it pays instead of
branching on a strategy's name: which component kinds (``pays``), the credit weights and
k-limits per achievement, the pay per resource slot, and the factor lambda applies. The array
functions are small and pure (NumPy in, NumPy out), so scoring, analyses and the env share them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.components import KINDS, RESOURCE_KINDS
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.resource_weights import ResourceWeights
from workbench.core.reward import CONSISTENT, PER_ACHIEVEMENT, coerce_k_limits, coerce_weights, normalize_strategy

__all__ = [
    "CONSISTENT_RULE",
    "INDICATOR_ONLY_RULE",
    "PER_ACHIEVEMENT_RULE",
    "RULES",
    "N_SLOTS",
    "RewardRule",
    "credited_unlocks",
    "logs_rises",
    "rule_for",
]

#: Resource slots, in the order every slot array uses: the 16 inventory items, then the 22
#: achievement counts.
N_SLOTS = len(INVENTORY_ITEMS) + len(ACHIEVEMENTS)
#: How a rule reads ``indicator_lambda``: the task app multiplies by the value as given
#: (``AS_GIVEN``); the indicator-only loop by ``float(value or 0.0)``, 0.0 when that raises.
AS_GIVEN = "as given"
FLOAT_OR_ZERO = "float(value or 0.0)"


@dataclass(frozen=True)
class RewardRule:
    """One reward rule: what it pays per decision, how it reads lambda, and what it ignores.

    Attributes:
        name: The rule's name: the strategy it runs (``consistent``, ``per_achievement``) or
            ``indicator_only`` (the producers' third reward).
        kinds: The component kinds it pays (``core.components.KINDS`` order).
        zero_lambda: The factor an ``indicator_lambda`` of 0 (or None) pays.
        lambda_reading: How a logged ``indicator_lambda`` is read (``AS_GIVEN`` or ``FLOAT_OR_ZERO``).
        ignores: What the rule reads past, in words (for reports and docs).
        summary: The rule in one line.
    """

    name: str
    kinds: tuple[str, ...]
    zero_lambda: float
    lambda_reading: str
    ignores: tuple[str, ...]
    summary: str

    # -- what it pays -----------------------------------------------------------------------
    def pays(self, kind: str) -> bool:
        """Whether the rule pays components of ``kind``.

        Args:
            kind: One of ``core.components.KINDS``.

        Returns:
            True when the rule pays that kind.
        """
        return kind in self.kinds

    @property
    def pays_indicator(self) -> bool:
        """Whether a decision that unlocks anything is paid 1.0, however many names."""
        return "indicator" in self.kinds

    @property
    def pays_credits(self) -> bool:
        """Whether unlocks earn per-achievement credits (the weights and k-limits are read)."""
        return "achievement" in self.kinds

    @property
    def pays_resources(self) -> bool:
        """Whether rises of inventory items or achievement counts are paid (the resource tables are read)."""
        return any(kind in self.kinds for kind in RESOURCE_KINDS)

    @property
    def reads_counts(self) -> bool:
        """Whether the achievement counts pay (so estimated counts make the return an interval)."""
        return "achievement_count" in self.kinds

    # -- its numbers ------------------------------------------------------------------------
    def factor(self, indicator_lambda: Any) -> float:
        """The factor applied to a decision's base reward for a table's ``indicator_lambda``.

        Args:
            indicator_lambda: The table's value (a config's float, or a logged value of any type).

        Returns:
            ``zero_lambda`` for 0 or None, else the value as a float.

        Raises:
            ValueError: Under ``AS_GIVEN``, a value float() cannot read (the task app raises too).
        """
        value = indicator_lambda
        if self.lambda_reading == FLOAT_OR_ZERO:
            try:
                value = float(indicator_lambda or 0.0)
            except (TypeError, ValueError):
                value = 0.0
        if value is None or value == 0:
            return self.zero_lambda
        return float(value)

    def credit_weights(self, weights: Mapping[str, Any]) -> np.ndarray:
        """The credit per achievement (Crafter order): ``weights.get(name, 1.0)`` after the task
        app's coercion; zeros when the rule pays no credits. Names that are not Crafter
        achievements are dropped (quirk 5).

        Args:
            weights: The table's weights, as given.

        Returns:
            float (22,).
        """
        if not self.pays_credits:
            return np.zeros(len(ACHIEVEMENTS))
        return achievement_weights(weights)

    def credit_limits(self, k_limits: Mapping[str, Any]) -> np.ndarray:
        """The k-limit per achievement (Crafter order): ``k_limits.get(name, 1)`` after the task
        app's coercion; <= 0 is unlimited, above 1 acts as 1 (an achievement unlocks once an
        episode, quirk 1). Names that are not Crafter achievements are dropped (quirk 5).

        Args:
            k_limits: The table's k-limits, as given.

        Returns:
            int (22,).
        """
        limits = coerce_k_limits(dict(k_limits))
        return np.array([limits.get(name, 1) for name in ACHIEVEMENTS], dtype=np.int64)

    def slot_pay(self, resource: ResourceWeights) -> np.ndarray:
        """What one unit of rise pays per resource slot (16 items, then 22 counts), before lambda;
        zeros when the rule pays no resources.

        Args:
            resource: The resource tables (a config's ``resource_weights``).

        Returns:
            float (38,).
        """
        if not self.pays_resources:
            return np.zeros(N_SLOTS)
        return slot_weights(resource)


def achievement_weights(weights: Mapping[str, Any]) -> np.ndarray:
    """``weights.get(name, 1.0)`` per achievement (Crafter order) after the task app's coercion,
    whatever the rule (a config built in code may hold values ``from_dict`` would have dropped).

    Args:
        weights: The table's weights, as given.

    Returns:
        float (22,).
    """
    coerced = coerce_weights(dict(weights))
    return np.array([coerced.get(name, 1.0) for name in ACHIEVEMENTS], dtype=np.float64)


def slot_weights(resource: ResourceWeights) -> np.ndarray:
    """The resource weight per slot: the 16 inventory items, then the 22 achievement counts.

    Args:
        resource: The resource tables.

    Returns:
        float (38,).
    """
    return np.array(
        [resource.inventory_weight(item) for item in INVENTORY_ITEMS]
        + [resource.achievement_count_weight(name) for name in ACHIEVEMENTS],
        dtype=np.float64,
    )


def credited_unlocks(ordinal: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Whether each unlock earns a credit. The name's earlier credits (the task app's
    ``prior``) are min(ordinal, limit): every earlier unlock was credited until the limit was
    reached. So ``prior < limit`` is ``ordinal < limit``; a limit <= 0 credits every unlock.
    For a credited unlock min(ordinal, limit) is the ordinal itself: its ``count_prior``.

    Args:
        ordinal: Per unlock, earlier unlocks of the same name in the episode.
        limit: Per unlock, its achievement's k-limit.

    Returns:
        bool, one per unlock.
    """
    return (limit <= 0) | (ordinal < limit)


_TASK_APP_IGNORES = (
    "an unknown strategy spelling (runs consistent, quirk 5)",
    "indicator_lambda 0 or missing (scales by 1.0, quirk 2)",
    "step_beta (read, never used)",
)
#: The task app's consistent strategy.
CONSISTENT_RULE = RewardRule(
    CONSISTENT,
    ("indicator",),
    1.0,
    AS_GIVEN,
    (
        "weights, k_limits and resource tables (unread)",
        "how many achievements a decision unlocked (1.0 for any, quirk 6)",
        *_TASK_APP_IGNORES,
    ),
    "1.0 for every decision that unlocks an achievement, times lambda (0 reads as 1)",
)
#: The task app's per_achievement strategy.
PER_ACHIEVEMENT_RULE = RewardRule(
    PER_ACHIEVEMENT,
    tuple(kind for kind in KINDS if kind != "indicator"),
    1.0,
    AS_GIVEN,
    (
        "k_limits above 1 (an achievement unlocks once an episode, quirk 1)",
        "names in weights or k_limits that are not Crafter achievements (quirk 5)",
        "k_limits for resource shaping (uncapped: every rise pays, quirk 3)",
        "losses of items or counts (only rises pay, quirk 4)",
        *_TASK_APP_IGNORES,
    ),
    "a credit per unlock up to its k-limit plus uncapped resource shaping, times lambda (0 reads as 1)",
)
#: The indicator-only loop of synth-ai 0.2.16-0.2.24 (``producers.INDICATOR``).
INDICATOR_ONLY_RULE = RewardRule(
    "indicator_only",
    ("indicator",),
    0.0,
    FLOAT_OR_ZERO,
    ("strategy, weights, k_limits and resource tables (unread)", "how many achievements a decision unlocked"),
    "lambda x any unlock; lambda 0 or omitted pays 0",
)
#: The task app's rules by the strategy names it runs (``normalize_strategy``'s outputs).
RULES: Mapping[str, RewardRule] = {rule.name: rule for rule in (CONSISTENT_RULE, PER_ACHIEVEMENT_RULE)}


def rule_for(strategy: Any) -> RewardRule:
    """The task app's rule for a configured strategy (any spelling; junk runs consistent).

    Args:
        strategy: A table's ``strategy`` value, any type.

    Returns:
        ``CONSISTENT_RULE`` or ``PER_ACHIEVEMENT_RULE``.
    """
    return RULES[normalize_strategy(strategy)]


#: Per strategy name (as logged), whether its rule logs every rise: asked per decision of an import.
_LOGS_RISES = {name: rule.pays_resources for name, rule in RULES.items()}


def logs_rises(logged: Any) -> bool:
    """Whether a decision's logged ``info.stepwise`` comes from a rule that logs every rise
    (``inventory_deltas``, ``achievement_count_deltas``): its ``strategy`` names, exactly as the
    task app logs it (normalised), a rule with resource shaping.

    Args:
        logged: One decision's ``info.stepwise`` as logged (any type).

    Returns:
        True for a per_achievement log; False for consistent, the indicator-only loop's keys, junk.
    """
    if type(logged) is not dict and not isinstance(logged, Mapping):  # dict first: no ABC check
        return False
    strategy = logged.get("strategy")
    return _LOGS_RISES.get(strategy, False) if isinstance(strategy, str) else False
