"""Potential-based shaping (Ng, Harada and Russell 1999): Crafter state features, a config's potential, F = gamma Phi(s') - Phi(s).

The task app's resource shaping pays every rise of an inventory item and of an achievement
count, and nothing for a loss: mining a stone and placing it returns to the same state having
been paid twice. Shaping of the form ``F(s, s') = gamma Phi(s') - Phi(s)`` cannot do that: it
sums to 0 around any loop (at gamma = 1), and it leaves the optimal policy unchanged (Ng et al.
1999, *Policy invariance under reward transformations*, ICML).

The state a potential may depend on is what Crafter's state determines: the 16 inventory entries
(health, food, drink and energy included) and which achievements are unlocked (a count beyond
the first unlock is history, not state). ``config_potential`` is the config's *potential-based
counterpart*: ``Phi(s) = lambda (sum_i w_i inventory_i + sum_a c_a unlocked_a)`` with the
config's resource weights ``w`` (inventory) and ``c`` (achievement counts), so an item's gain
pays ``w_i`` as now and its loss costs ``w_i``; a count's first rise pays ``c_a`` and later rises
nothing. A death is absorbing: its potential is 0 (the convention that keeps episodic shaping
policy-invariant; Grzes 2017, *Reward shaping in episodic reinforcement learning*, AAMAS).
``workbench.env.CrafterStepwiseEnv(shaping="potential")`` pays the credits plus this ``F``.
"""

from __future__ import annotations

import numpy as np

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import DecisionArrays
from workbench.errors import ConfigError
from workbench.scoring.pay import slot_pay

__all__ = [
    "FEATURE_NAMES",
    "config_potential",
    "decision_rows",
    "potential_shaping",
    "row_potential",
    "state_potential",
    "shaping_payments",
    "state_features",
    "terminal_decisions",
]

#: The state features a potential is a function of: inventory (Crafter order), then unlocked achievements.
FEATURE_NAMES: tuple[str, ...] = (*INVENTORY_ITEMS, *(f"unlocked:{name}" for name in ACHIEVEMENTS))
_HEALTH = INVENTORY_ITEMS.index("health")


def state_features(inventory: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The feature rows of states: inventory, then 1.0 for each unlocked achievement.

    Args:
        inventory: (R, 16) int, inventory in ``INVENTORY_ITEMS`` order.
        counts: (R, 22) int, achievement counts in ``ACHIEVEMENTS`` order.

    Returns:
        (R, 38) float64, columns ``FEATURE_NAMES``.
    """
    inventory = np.asarray(inventory)
    counts = np.asarray(counts)
    out = np.empty((len(inventory), len(FEATURE_NAMES)))
    out[:, : len(INVENTORY_ITEMS)] = inventory
    out[:, len(INVENTORY_ITEMS) :] = counts > 0
    return out


def config_potential(config: RewardConfig) -> np.ndarray:
    """The weights of ``config``'s potential-based counterpart: ``Phi(s) = weights . features(s)``.

    Args:
        config: the reward config.

    Returns:
        (38,) float64 over ``FEATURE_NAMES``: lambda times the inventory weights and the
        achievement-count weights (per_achievement); zeros under consistent (no resource shaping).
    """
    return slot_pay(config)  # the features' order is the slots' order


def potential_shaping(
    before: np.ndarray, after: np.ndarray, weights: np.ndarray, gamma: float, terminal: np.ndarray | None = None
) -> np.ndarray:
    """``F = gamma Phi(s') - Phi(s)`` per transition, ``Phi(s') = 0`` where the transition is terminal.

    Args:
        before: (N, F) features of the states decisions start from.
        after: (N, F) features of the states they end in.
        weights: (F,) the potential's weights.
        gamma: the learner's discount, in [0, 1].
        terminal: (N,) bool, transitions into an absorbing state (a death), or None.

    Returns:
        (N,) float64 shaping payments.

    Raises:
        ConfigError: gamma outside [0, 1].
    """
    if not 0.0 <= gamma <= 1.0:
        raise ConfigError(f"gamma must be within [0, 1], got {gamma}")
    phi_after = after @ weights
    if terminal is not None:
        phi_after = np.where(terminal, 0.0, phi_after)
    return gamma * phi_after - before @ weights


def decision_rows(arrays: DecisionArrays) -> tuple[np.ndarray, np.ndarray]:
    """The state rows each decision starts from and ends in.

    Args:
        arrays: stacked episodes (each episode's reset row, then one row per decision).

    Returns:
        ``(before, after)``: (N,) int64 row indices, decisions in corpus order.
    """
    after = np.flatnonzero(arrays.is_decision)
    return after - 1, after


def terminal_decisions(arrays: DecisionArrays) -> np.ndarray:
    """(N,) bool: decisions that ended the episode with the player dead (health 0: Crafter's
    discount 0, ``terminated`` in the env), as opposed to a length limit or an unfinished episode.

    Args:
        arrays: Stacked decision columns (``Corpus.decision_arrays``).

    Returns:
        One bool per decision.
    """
    _, after = decision_rows(arrays)
    return arrays.done[after] & (arrays.inventory[after, _HEALTH] == 0)


def shaping_payments(arrays: DecisionArrays, config: RewardConfig, gamma: float = 1.0) -> np.ndarray:
    """What ``config``'s potential-based counterpart pays on each decision of ``arrays``
    (the shaping only: add the config's credits for the whole reward).

    Args:
        arrays: stacked episodes.
        config: the reward config.
        gamma: the learner's discount, in [0, 1].

    Returns:
        (N,) float64 ``gamma Phi(s') - Phi(s)`` per decision, 0 potential after a death.

    Raises:
        ConfigError: gamma outside [0, 1].
    """
    if not 0.0 <= gamma <= 1.0:
        raise ConfigError(f"gamma must be within [0, 1], got {gamma}")
    before, after = decision_rows(arrays)
    phi = row_potential(arrays, config_potential(config))
    phi_after = np.where(terminal_decisions(arrays), 0.0, phi[after])
    return gamma * phi_after - phi[before]


def row_potential(arrays: DecisionArrays, weights: np.ndarray) -> np.ndarray:
    """``Phi`` of every state row, column by column (no (R, 38) temporary on a large corpus).

    Args:
        arrays: stacked episodes.
        weights: (38,) the potential's weights over ``FEATURE_NAMES``.

    Returns:
        (R,) float64 potentials, equal to ``state_features(...) @ weights`` up to rounding.
    """
    phi = np.zeros(arrays.n_rows)
    n_items = len(INVENTORY_ITEMS)
    for c in np.flatnonzero(weights):
        if c < n_items:
            phi += weights[c] * arrays.inventory[:, c]
        else:
            phi += weights[c] * (arrays.achievement_counts[:, c - n_items] > 0)
    return phi


def state_potential(inventory: np.ndarray, counts: np.ndarray, weights: np.ndarray) -> float:
    """``Phi`` of one state, with the same operations in the same order as ``row_potential``
    (so the env's payments equal ``shaping_payments`` on the recorded episode, bit for bit).

    Args:
        inventory: (16,) int, the inventory in ``INVENTORY_ITEMS`` order.
        counts: (22,) int, the achievement counts in ``ACHIEVEMENTS`` order.
        weights: (38,) the potential's weights.

    Returns:
        The potential.
    """
    phi = np.zeros(1)
    n_items = len(INVENTORY_ITEMS)
    for c in np.flatnonzero(weights):
        value = inventory[c] if c < n_items else counts[c - n_items] > 0
        phi += weights[c] * np.array([value])
    return float(phi[0])
