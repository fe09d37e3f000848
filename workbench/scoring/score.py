"""``score``: one config's weights recombined with a prepared corpus's arrays."""

from __future__ import annotations

import numpy as np

from workbench.config import RewardConfig
from workbench.episodes import Corpus
from workbench.reward import PER_ACHIEVEMENT
from workbench.scoring.prepare import PreparedCorpus, as_prepared
from workbench.scoring.scores import Scores
from workbench.scoring.weights import achievement_limits, achievement_weights, credited_unlocks, slot_weights


def score(corpus: Corpus | PreparedCorpus, config: RewardConfig) -> Scores:
    """What ``config`` pays on every decision of ``corpus`` (a ``Corpus`` or ``prepare(corpus)``).

    Equal, decision by decision and component by component, to ``rollout.score_episode`` on
    each episode. Raises ``CorpusError`` for an empty corpus.
    """
    prepared = as_prepared(corpus)
    active = len(prepared.active)
    base: np.ndarray
    resource: np.ndarray
    if config.effective_strategy == PER_ACHIEVEMENT:
        limit = achievement_limits(config)[prepared.unlock_name]
        credited = credited_unlocks(prepared.unlock_ordinal, limit)
        credit = achievement_weights(config)[prepared.unlock_name[credited]]
        gain = slot_weights(config.resource_weights)[prepared.gain_slot] * prepared.gain_delta
        credit_sum = np.bincount(prepared.unlock_active[credited], weights=credit, minlength=active)
        resource = np.bincount(prepared.gain_active, weights=gain, minlength=active)
        base = credit_sum + resource  # credits first, then the resource reward (as the task app adds them)
    else:
        # consistent: 1.0 for a decision that unlocked anything, no per-name credits or resources.
        credited = np.zeros(len(prepared.unlock_name), dtype=bool)
        gain = np.zeros(0)
        resource = np.zeros(active)
        base = prepared.active_unlocking.astype(np.float64)
    indicator = (prepared.active_unlocking | (base > 0)).astype(np.int32)
    return Scores(prepared, config, base, resource, indicator, credited, gain)
