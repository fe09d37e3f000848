"""What a config pays on a prepared corpus, event by event and kind by kind, asking its rule.

The one place the pay is rebuilt from the prepared arrays (``core.reward_rule`` says what is paid):
``Scores``, the per-kind split, the shaping certificate and live per-kind totals read it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.core.components import KINDS
from workbench.core.config import RewardConfig
from workbench.core.reward_rule import N_SLOTS, credited_unlocks
from workbench.data.episodes.events import N_ITEMS
from workbench.scoring.prepare import PreparedCorpus

__all__ = ["Payments", "credits", "kind_pay", "payments", "slot_pay"]

_INDICATOR, _ACHIEVEMENT, _INVENTORY, _COUNT = (KINDS.index(k) for k in KINDS)


def credits(prepared: PreparedCorpus, config: RewardConfig) -> tuple[np.ndarray, np.ndarray]:
    """Which unlocks ``config`` credits and what each credit pays, before lambda.

    Args:
        prepared: The prepared corpus.
        config: The config (its rule says whether credits are paid at all).

    Returns:
        ``(credited, credit)``: bool per unlock of ``prepared``, and the weight of each
        credited unlock in unlock order (empty when the rule pays no credits).
    """
    rule = config.rule
    if not rule.pays_credits:
        return np.zeros(len(prepared.unlock_name), dtype=bool), np.zeros(0)
    credited = credited_unlocks(prepared.unlock_ordinal, rule.credit_limits(config.k_limits)[prepared.unlock_name])
    return credited, rule.credit_weights(config.weights)[prepared.unlock_name[credited]]


@dataclass(frozen=True)
class Payments:
    """Every component a config pays on a corpus, before lambda: the indicator's decisions, then
    the credits (unlock order), then the resource gains (gain order).

    Attributes:
        decision: (M,) the decision paid (corpus order index).
        kind: (M,) int8 index into ``core.components.KINDS``.
        slot: (M,) the achievement (credits, Crafter order) or resource slot (16 items then 22
            counts) paid; 0 for the indicator.
        value: (M,) what it pays before lambda (1.0, the weight, or weight * delta).
        factor: The config's lambda factor (``config.effective_lambda``).
    """

    decision: np.ndarray
    kind: np.ndarray
    slot: np.ndarray
    value: np.ndarray
    factor: float

    def of(self, kind: str) -> np.ndarray:
        """Which payments are of ``kind``.

        Args:
            kind: One of ``KINDS``.

        Returns:
            bool (M,).
        """
        return self.kind == KINDS.index(kind)


def payments(
    prepared: PreparedCorpus, config: RewardConfig, credited: np.ndarray | None = None, gain: np.ndarray | None = None
) -> Payments:
    """Every component ``config`` pays on ``prepared`` (see ``Payments``).

    Args:
        prepared: The prepared corpus.
        config: The config.
        credited: Which unlocks are credited, when already known (a ``Scores`` holds it).
        gain: Per resource gain, weight * delta before lambda, when already known (empty when
            the rule pays no resources).

    Returns:
        The payments.
    """
    rule = config.rule
    credit_mask, credit = credits(prepared, config)
    if credited is None:
        credited = credit_mask
    if gain is None:
        gain = np.zeros(0)
        if rule.pays_resources:
            gain = rule.slot_pay(config.resource_weights).take(prepared.gain_slot) * prepared.gain_delta
    paid = np.unique(prepared.unlock_decision) if rule.pays_indicator else np.zeros(0, dtype=np.int64)
    gains = len(gain)  # every gain of the corpus, or none (a rule without resource shaping)
    gain_slot = prepared.gain_slot[:gains].astype(np.int64)
    kind = np.concatenate(
        [
            np.full(len(paid), _INDICATOR, dtype=np.int8),
            np.full(len(credit), _ACHIEVEMENT, dtype=np.int8),
            np.where(gain_slot < N_ITEMS, _INVENTORY, _COUNT).astype(np.int8),
        ]
    )
    return Payments(
        decision=np.concatenate([paid, prepared.unlock_decision[credited], prepared.gain_decision[:gains]]).astype(
            np.int64
        ),
        kind=kind,
        slot=np.concatenate([np.zeros(len(paid), dtype=np.int64), prepared.unlock_name[credited], gain_slot]).astype(
            np.int64
        ),
        value=np.concatenate([np.ones(len(paid)), credit, gain[:gains]]),
        factor=config.effective_lambda,
    )


def kind_pay(prepared: PreparedCorpus, config: RewardConfig, paid: Payments | None = None) -> np.ndarray:
    """The reward ``config`` pays on each decision, one column per component kind, after lambda.

    Each column is ``lambda * (the decision's payments of that kind summed in order from 0.0)``;
    the row sums equal ``score(...).reward`` to float rounding (the task app adds a decision's
    parts in another order).

    Args:
        prepared: The prepared corpus.
        config: The config.
        paid: Its payments, when already built.

    Returns:
        (N, len(KINDS)) float64, decisions in corpus order, columns ``KINDS``.
    """
    paid = paid if paid is not None else payments(prepared, config)
    n = prepared.n_decisions
    out = np.zeros((n, len(KINDS)))
    for k, kind in enumerate(KINDS):
        if config.rule.pays(kind):
            mine = paid.kind == k
            out[:, k] = paid.factor * np.bincount(paid.decision[mine], weights=paid.value[mine], minlength=n)
    return out


def slot_pay(config: RewardConfig) -> np.ndarray:
    """What one unit of rise of each resource slot pays under ``config``, after lambda.

    Args:
        config: The config.

    Returns:
        float (38,): the 16 inventory items, then the 22 achievement counts; zeros (not lambda
        times zeros) when its rule pays no resource shaping.
    """
    rule = config.rule
    if not rule.pays_resources:
        return np.zeros(N_SLOTS)
    return config.effective_lambda * rule.slot_pay(config.resource_weights)
