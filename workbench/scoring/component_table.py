"""The large per-component table and the small array helpers ``Scores`` builds its tables with."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from workbench.core.components import KINDS
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.reward import INDICATOR_COMPONENT_NAME
from workbench.data.episodes.events import N_ACHIEVEMENTS, N_ITEMS
from workbench.scoring.prepare import PreparedCorpus

#: Every component name: the indicator, then achievements (codes 1..22), then items (23..38).
COMPONENT_NAMES = (INDICATOR_COMPONENT_NAME, *ACHIEVEMENTS, *INVENTORY_ITEMS)
ACHIEVEMENT_CODE0 = 1
ITEM_CODE0 = 1 + N_ACHIEVEMENTS


def running_sums(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Per-episode cumulative sums. One cumsum per episode (not one over the corpus minus
    offsets, which would carry the corpus total's rounding error into every episode)."""
    out = np.empty_like(values, dtype=np.float64)
    for start, length in zip(starts.tolist(), lengths.tolist()):
        np.cumsum(values[start : start + length], out=out[start : start + length])
    return out


def totals_by(
    codes: np.ndarray, rewards: np.ndarray, lam: float, size: int, kind: str, names: Sequence[str]
) -> pd.DataFrame:
    """Count, reward sum and scaled sum of components grouped by name code."""
    return pd.DataFrame(
        {
            "kind": kind,
            "name": list(names),
            "count": np.bincount(codes, minlength=size),
            "reward": np.bincount(codes, weights=rewards, minlength=size),
            "scaled": np.bincount(codes, weights=lam * rewards, minlength=size),
        }
    )


def components_table(p: PreparedCorpus, config: RewardConfig, credited: np.ndarray, gain: np.ndarray) -> pd.DataFrame:
    """The components of every decision (see ``Scores.components``), from what ``Scores`` holds.

    Args:
        p: the prepared corpus.
        config: the config scored with.
        credited: per unlock of ``p``, whether it was paid a credit (a rule with credits).
        gain: per resource gain of ``p``, what it paid before lambda (a rule with resource shaping).

    Returns:
        One row per component, decision after decision.
    """
    lam = config.effective_lambda
    rule = config.rule
    if not rule.pays_indicator:
        names = p.unlock_name[credited].astype(np.int64)
        limit = rule.credit_limits(config.k_limits)[names]
        credit = rule.credit_weights(config.weights)[names]
        credit_decision = p.unlock_decision[credited]
        gain_slot = p.gain_slot.astype(np.int64)
        is_item = gain_slot < N_ITEMS
        # Merge two decision-sorted lists without a sort: a credit goes before the gains of its
        # decision, a gain after the credits of its own decision.
        credit_at = np.arange(len(credit_decision)) + np.searchsorted(p.gain_decision, credit_decision, side="left")
        gain_at = np.arange(len(p.gain_decision)) + np.searchsorted(credit_decision, p.gain_decision, side="right")
        total = len(credit_at) + len(gain_at)
        decision = np.empty(total, dtype=np.int64)
        kind = np.empty(total, dtype=np.int8)
        name = np.empty(total, dtype=np.int64)
        delta = np.empty(total, dtype=np.int64)
        weight = np.empty(total)
        reward = np.empty(total)
        prior = np.zeros(total, dtype=np.int64)
        limits = np.zeros(total, dtype=np.int64)
        resource_row = np.zeros(total, dtype=bool)
        decision[credit_at], decision[gain_at] = credit_decision, p.gain_decision
        kind[credit_at], kind[gain_at] = (
            KINDS.index("achievement"),
            np.where(is_item, KINDS.index("inventory"), KINDS.index("achievement_count")),
        )
        name[credit_at] = names + ACHIEVEMENT_CODE0
        name[gain_at] = np.where(is_item, gain_slot + ITEM_CODE0, gain_slot - N_ITEMS + ACHIEVEMENT_CODE0)
        delta[credit_at], delta[gain_at] = 1, p.gain_delta
        weight[credit_at], weight[gain_at] = credit, rule.slot_pay(config.resource_weights)[gain_slot]
        reward[credit_at], reward[gain_at] = credit, gain
        prior[credit_at] = p.unlock_ordinal[credited]  # see credited_unlocks
        limits[credit_at] = limit
        resource_row[gain_at] = True
    else:
        decision = np.flatnonzero(p.n_unlocked > 0)
        total = len(decision)
        kind = np.full(total, KINDS.index("indicator"), dtype=np.int8)
        name = np.zeros(total, dtype=np.int64)
        delta = np.ones(total, dtype=np.int64)
        weight, reward = np.ones(total), np.ones(total)
        prior, limits = np.zeros(total, dtype=np.int64), np.ones(total, dtype=np.int64)
        resource_row = np.zeros(total, dtype=bool)
    return pd.DataFrame(
        {
            "episode": p.episode_column(p.episode_of[decision]),
            "decision": p.decision[decision],
            "kind": pd.Categorical.from_codes(kind, categories=list(KINDS)),
            "name": pd.Categorical.from_codes(name, categories=list(COMPONENT_NAMES)),
            "delta": delta,
            "weight": weight,
            "count_prior": pd.arrays.IntegerArray(prior, resource_row),
            "count_limit": pd.arrays.IntegerArray(limits, resource_row.copy()),
            "reward": reward,
            "scaled": lam * reward,
        }
    )
