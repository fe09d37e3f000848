"""Per-decision rewards split into parts (credit, inventory, achievement counts), after lambda."""

from __future__ import annotations

import numpy as np

from workbench.core.components import KINDS, PAY_PARTS
from workbench.core.config import RewardConfig
from workbench.scoring import PreparedCorpus, kind_pay

__all__ = ["PAY_PARTS", "kind_rewards"]

#: The part each component kind is counted in: the indicator and the achievement credits are the
#: ``credit`` part (what the strategy pays for progress), the resource kinds their own.
_PART_OF = [
    PAY_PARTS.index("credit") if kind in ("indicator", "achievement") else PAY_PARTS.index(kind) for kind in KINDS
]


def kind_rewards(prepared: PreparedCorpus, config: RewardConfig) -> np.ndarray:
    """The reward ``config`` pays on each decision of ``prepared``, split into ``PAY_PARTS``, after lambda.

    The parts of ``workbench.scoring.kind_pay`` (the one place the pay is rebuilt from the
    prepared arrays), so the row sums equal ``score(...).reward`` to float rounding (the task app
    adds a decision's parts in another order).

    Args:
        prepared: the corpus's weight-independent arrays (``workbench.scoring.prepare``).
        config: the reward config.

    Returns:
        (N, 3) float64, one row per decision in corpus order, columns ``PAY_PARTS``.
    """
    by_kind = kind_pay(prepared, config)
    out = np.zeros((prepared.n_decisions, len(PAY_PARTS)))
    for k, kind in enumerate(KINDS):
        if config.rule.pays(kind):  # a kind the rule does not pay adds nothing (not even -0.0)
            out[:, _PART_OF[k]] += by_kind[:, k]
    return out
