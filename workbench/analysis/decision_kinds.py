"""Per-decision rewards split by component kind (credits, inventory, achievement counts), after lambda."""

from __future__ import annotations

import numpy as np

from workbench.core.config import RewardConfig
from workbench.core.reward import PER_ACHIEVEMENT
from workbench.data.episodes.events import N_ITEMS
from workbench.scoring import PreparedCorpus, achievement_limits, achievement_weights, credited_unlocks, slot_weights

__all__ = ["KIND_COLUMNS", "kind_rewards"]

#: The columns of ``kind_rewards``: what one decision's reward is made of. ``credit`` is the
#: achievement credits (per_achievement) or the indicator's 1.0 (consistent); ``inventory``
#: and ``achievement_count`` the resource shaping.
KIND_COLUMNS = ("credit", "inventory", "achievement_count")


def kind_rewards(prepared: PreparedCorpus, config: RewardConfig) -> np.ndarray:
    """The reward ``config`` pays on each decision of ``prepared``, split by kind, after lambda.

    Built from the prepared corpus's public event arrays and ``workbench.scoring``'s weight
    helpers (the same arithmetic as ``score``), so the row sums equal ``score(...).reward`` to
    float rounding (the task app adds a decision's parts in another order).

    Args:
        prepared: the corpus's weight-independent arrays (``workbench.scoring.prepare``).
        config: the reward config.

    Returns:
        (N, 3) float64, one row per decision in corpus order, columns ``KIND_COLUMNS``.
    """
    n = prepared.n_decisions
    lam = config.effective_lambda
    out = np.zeros((n, len(KIND_COLUMNS)))
    if config.effective_strategy != PER_ACHIEVEMENT:
        # consistent: 1.0 for a decision that unlocked anything, however many names.
        unlocking = np.unique(prepared.unlock_decision)
        out[unlocking, 0] = lam * 1.0
        return out
    credited = credited_unlocks(prepared.unlock_ordinal, achievement_limits(config)[prepared.unlock_name])
    credit = achievement_weights(config)[prepared.unlock_name[credited]]
    out[:, 0] = lam * np.bincount(prepared.unlock_decision[credited], weights=credit, minlength=n)
    gain = slot_weights(config.resource_weights)[prepared.gain_slot] * prepared.gain_delta
    items = prepared.gain_slot < N_ITEMS
    out[:, 1] = lam * np.bincount(prepared.gain_decision[items], weights=gain[items], minlength=n)
    out[:, 2] = lam * np.bincount(prepared.gain_decision[~items], weights=gain[~items], minlength=n)
    return out
