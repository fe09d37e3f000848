"""``score``: one config's weights recombined with a prepared corpus's arrays."""

from __future__ import annotations

import numpy as np

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import ConfigError
from workbench.scoring.pay import credits
from workbench.scoring.prepare import PreparedCorpus, as_prepared
from workbench.scoring.resource_part import resource_part
from workbench.scoring.scores import Scores


def score(corpus: Corpus | PreparedCorpus, config: RewardConfig) -> Scores:
    """What ``config`` pays on every decision of ``corpus`` (a ``Corpus`` or ``prepare(corpus)``).

    Equal, decision by decision and component by component, to ``workbench.core.episode_reward.score_episode`` on
    each episode.

    Args:
        corpus: The episodes, or ``prepare(corpus)`` to score many configs without re-preparing.
        config: The step_rewards table to pay with.

    Returns:
        Per-decision, per-episode and per-component tables.

    Raises:
        CorpusError: The corpus is empty.
        ConfigError: The rewards would not be finite (e.g. a weight of 1e308); names the
            config's largest value.
    """
    prepared = as_prepared(corpus)
    rule = config.rule
    part = resource_part(prepared, rule, rule.slot_pay(config.resource_weights))
    base: np.ndarray
    credited, credit = credits(prepared, config)
    if rule.pays_indicator:
        # 1.0 for a decision that unlocked anything, however many names (consistent).
        base = prepared.active_unlocking.astype(np.float64)
    else:
        # Only the decisions that unlock something get credits: each one's credits summed in
        # unlock order from 0.0 (as bincount over every active decision would), plus its resource
        # reward (as the task app adds them); elsewhere base is the resource reward (ResourcePart).
        positions = prepared.unlocking_positions
        paid = np.bincount(prepared.unlock_group[credited], weights=credit, minlength=len(positions))
        base = part.resource.copy()
        base[positions] = paid.astype(np.float64, copy=False) + part.resource[positions]
    _check_finite(config, base)
    return Scores(prepared, config, base, part, credited)


def _check_finite(config: RewardConfig, base: np.ndarray) -> None:
    """Refuse a config whose rewards overflow (config files cap values at 1e9; a config built
    in code is not checked until here)."""
    with np.errstate(over="ignore", invalid="ignore"):
        # Every sum the tables take is bounded by len * (|min| + |max|) * |lambda| (min and max
        # allocate nothing, and a NaN or infinity propagates into them).
        low, high = float(base.min(initial=0.0)), float(base.max(initial=0.0))
        bound = (abs(low) + abs(high)) * abs(config.effective_lambda) * max(len(base), 1)
        ok = bool(np.isfinite(bound)) and np.isfinite(config.step_beta) and np.isfinite(config.effective_lambda)
    if ok:
        return
    values = {"indicator_lambda": config.indicator_lambda, "step_beta": config.step_beta}
    values |= {f"weights.{name}": weight for name, weight in config.weights.items()}
    key, value = max(values.items(), key=lambda item: abs(float(item[1])) if np.isfinite(float(item[1])) else np.inf)
    raise ConfigError(f"config {key} = {value!r}: the shaped rewards are not finite; keep every value within +-1e9")
