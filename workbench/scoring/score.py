"""``score``: one config's weights recombined with a prepared corpus's arrays."""

from __future__ import annotations

import numpy as np

from workbench.config import RewardConfig
from workbench.episodes import Corpus
from workbench.errors import ConfigError
from workbench.reward import PER_ACHIEVEMENT
from workbench.scoring.prepare import PreparedCorpus, as_prepared
from workbench.scoring.scores import Scores
from workbench.scoring.weights import achievement_limits, achievement_weights, credited_unlocks, slot_weights


def score(corpus: Corpus | PreparedCorpus, config: RewardConfig) -> Scores:
    """What ``config`` pays on every decision of ``corpus`` (a ``Corpus`` or ``prepare(corpus)``).

    Equal, decision by decision and component by component, to ``rollout.score_episode`` on
    each episode. Raises ``CorpusError`` for an empty corpus and ``ConfigError`` naming the
    config's largest value when the rewards would not be finite (e.g. a weight of 1e308).
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
    _check_finite(config, base)
    return Scores(prepared, config, base, resource, indicator, credited, gain)


def _check_finite(config: RewardConfig, base: np.ndarray) -> None:
    """Refuse a config whose rewards overflow (config files cap values at 1e9; a config built
    in code is not checked until here)."""
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = config.effective_lambda * base
        # the total of all magnitudes bounds every return and sum the tables take
        ok = (
            bool(np.isfinite(np.abs(scaled).sum()))
            and np.isfinite(config.step_beta)
            and np.isfinite(config.effective_lambda)
        )
    if ok:
        return
    values = {"indicator_lambda": config.indicator_lambda, "step_beta": config.step_beta}
    values |= {f"weights.{name}": weight for name, weight in config.weights.items()}
    key, value = max(values.items(), key=lambda item: abs(float(item[1])) if np.isfinite(float(item[1])) else np.inf)
    raise ConfigError(f"config {key} = {value!r}: the shaped rewards are not finite; keep every value within +-1e9")
