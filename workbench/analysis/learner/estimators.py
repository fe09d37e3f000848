"""Advantage estimators over groups of rollouts (GRPO, Dr.GRPO, RLOO, GDPO) and per-decision GAE, in numpy.

Every function is vectorised over all groups at once: ``group`` labels each rollout (episode)
with a group number ``0 .. G - 1`` (rollouts of one seed, and one policy version when known),
so a corpus of a million decisions is a handful of ``bincount`` calls.

Conventions (stated because trainers differ):

- GRPO (Shao et al. 2024, *DeepSeekMath*, arXiv:2402.03300):
  ``A_i = (r_i - mean_g r) / (std_g r + eps)``. ``std`` is the *sample* standard deviation
  (``ddof=1``, what ``torch.std`` returns and what verl and TRL use) unless ``ddof=0`` asks for
  the population one; ``eps`` defaults to 1e-6 (verl; TRL adds 1e-4).
- Dr.GRPO (Liu et al. 2025, *Understanding R1-Zero-Like Training*, arXiv:2503.20783):
  ``A_i = r_i - mean_g r`` (no division by the standard deviation).
- RLOO (Kool et al. 2019, *Buy 4 REINFORCE samples, get a baseline for free!*; Ahmadian et
  al. 2024, *Back to Basics*, arXiv:2402.14740): ``A_i = r_i - mean_{j != i} r_j
  = G/(G-1) (r_i - mean_g r)``.
- GDPO (Liu et al. 2026, *GDPO: Group reward-Decoupled Normalization Policy Optimization*,
  arXiv:2601.05242): each reward component is normalised within its group as GRPO does, the
  normalised components are summed, and the sum is normalised over the whole batch.
- GAE (Schulman et al. 2016, *High-Dimensional Continuous Control Using Generalized Advantage
  Estimation*, arXiv:1506.02438): ``delta_t = r_t + gamma V(s_{t+1}) - V(s_t)``,
  ``A_t = sum_k (gamma lambda)^k delta_{t+k}`` within an episode.

A group of one rollout has no baseline: every group estimator gives it advantage 0.
"""

from __future__ import annotations

import numpy as np

from workbench.errors import AnalysisError

__all__ = ["EPS", "dr_grpo", "gdpo", "group_moments", "grpo", "rloo"]

#: GRPO's default epsilon added to the group standard deviation (verl's value).
EPS = 1e-6


def _check_groups(values: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    values = np.asarray(values, dtype=np.float64)
    group = np.asarray(group)
    if group.ndim != 1 or values.shape[0] != group.shape[0]:
        raise AnalysisError(
            f"group must be 1-D with one label per rollout: {values.shape[0]} rollouts, group {group.shape}"
        )
    if len(group) and (group.dtype.kind not in "iu" or int(group.min()) < 0):
        raise AnalysisError("group labels must be non-negative integers (0 .. G - 1)")
    if not np.isfinite(values).all():
        raise AnalysisError("rewards must be finite numbers (a NaN or infinity is in the input)")
    n_groups = int(group.max()) + 1 if len(group) else 0
    return values, group.astype(np.intp, copy=False), n_groups


def group_moments(rewards: np.ndarray, group: np.ndarray, ddof: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Size, mean and standard deviation of each group.

    Args:
        rewards: (E,) float, one return per rollout.
        group: (E,) int, each rollout's group number (0 .. G - 1).
        ddof: 1 for the sample standard deviation, 0 for the population one.

    Returns:
        ``(size, mean, std)``, each (G,): ``std`` is 0 for a group of ``ddof`` rollouts or fewer.

    Raises:
        AnalysisError: mismatched shapes, negative or non-integer labels, non-finite rewards.
    """
    rewards, group, n_groups = _check_groups(rewards, group)
    size = np.bincount(group, minlength=n_groups)
    mean = np.bincount(group, weights=rewards, minlength=n_groups) / np.maximum(size, 1)
    # two passes (deviations from the mean), not E[x^2] - E[x]^2: no cancellation
    squares = np.bincount(group, weights=(rewards - mean[group]) ** 2, minlength=n_groups)
    std = np.sqrt(squares / np.maximum(size - ddof, 1))
    std[size <= ddof] = 0.0
    return size, mean, std


def grpo(rewards: np.ndarray, group: np.ndarray, *, eps: float = EPS, ddof: int = 1) -> np.ndarray:
    """GRPO's advantages: ``(r_i - mean_g) / (std_g + eps)`` (Shao et al. 2024).

    Args:
        rewards: (E,) float, one return per rollout.
        group: (E,) int, each rollout's group number.
        eps: added to the group standard deviation (a zero-variance group gets advantage 0).
        ddof: 1 sample standard deviation (verl, TRL), 0 population.

    Returns:
        (E,) float64 advantages; 0 for a group of one rollout, and for a zero-variance group.

    Raises:
        AnalysisError: bad shapes or labels, non-finite rewards.
    """
    rewards, group, _ = _check_groups(rewards, group)
    size, mean, std = group_moments(rewards, group, ddof)
    centred = rewards - mean[group]
    scale = std[group] + eps
    # a zero-variance group (with eps = 0) is 0 / 0: no gradient, advantage 0
    advantage = np.divide(centred, scale, out=np.zeros_like(centred), where=scale > 0)
    # A group whose rollouts are all equal is zero-variance whatever rounding left in its std
    # (0.0225 three times has a std of ~1e-18, and 1e-18 / 1e-18 is not 0).
    low, high = np.full(len(size), np.inf), np.full(len(size), -np.inf)
    np.minimum.at(low, group, rewards)
    np.maximum.at(high, group, rewards)
    advantage[(size[group] < 2) | (low == high)[group]] = 0.0
    return advantage


def dr_grpo(rewards: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Dr.GRPO's advantages: ``r_i - mean_g`` (Liu et al. 2025).

    Args:
        rewards: (E,) float, one return per rollout.
        group: (E,) int, each rollout's group number.

    Returns:
        (E,) float64 advantages; 0 for a group of one rollout.

    Raises:
        AnalysisError: bad shapes or labels, non-finite rewards.
    """
    rewards, group, _ = _check_groups(rewards, group)
    _, mean, _ = group_moments(rewards, group)
    return rewards - mean[group]


def rloo(rewards: np.ndarray, group: np.ndarray) -> np.ndarray:
    """RLOO's advantages: ``r_i`` minus the mean of the other rollouts of its group (Kool et al.
    2019; Ahmadian et al. 2024), ``G/(G-1) (r_i - mean_g)``.

    Args:
        rewards: (E,) float, one return per rollout.
        group: (E,) int, each rollout's group number.

    Returns:
        (E,) float64 advantages; 0 for a group of one rollout (no other rollout to compare with).

    Raises:
        AnalysisError: bad shapes or labels, non-finite rewards.
    """
    rewards, group, _ = _check_groups(rewards, group)
    size, mean, _ = group_moments(rewards, group)
    g = size[group].astype(np.float64)
    return np.where(g > 1, g / np.maximum(g - 1, 1) * (rewards - mean[group]), 0.0)


def gdpo(
    components: np.ndarray, group: np.ndarray, *, eps: float = EPS, ddof: int = 1, batch_normalise: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """GDPO's advantages: each component normalised within its group, summed, then normalised over
    the batch (Liu et al. 2026).

    Args:
        components: (E, C) float, per rollout the return of each reward component.
        group: (E,) int, each rollout's group number.
        eps: added to every standard deviation (group-wise and batch-wise).
        ddof: 1 sample, 0 population standard deviation (both steps).
        batch_normalise: apply the final batch-wise normalisation (the paper does).

    Returns:
        ``(advantage, terms)``: (E,) the advantages and (E, C) each component's group-normalised
        term before the sum (so ``terms.sum(1)`` is the advantage before batch normalisation).

    Raises:
        AnalysisError: ``components`` not 2-D, bad shapes or labels, non-finite rewards.
    """
    components = np.asarray(components, dtype=np.float64)
    if components.ndim != 2:
        raise AnalysisError(f"components must be (rollouts, components), got shape {components.shape}")
    terms = np.column_stack([grpo(components[:, c], group, eps=eps, ddof=ddof) for c in range(components.shape[1])])
    terms = terms.reshape(len(components), components.shape[1])
    summed = terms.sum(axis=1)
    # rollouts alone in their group have no baseline: they stay 0 and do not enter the batch statistics
    size = np.bincount(np.asarray(group, dtype=np.intp), minlength=1)
    paired = size[np.asarray(group, dtype=np.intp)] > 1
    if not batch_normalise or paired.sum() < 2:
        return summed, terms
    std = float(np.std(summed[paired], ddof=ddof))
    centred = np.where(paired, summed - summed[paired].mean(), 0.0)
    advantage = np.divide(centred, std + eps, out=np.zeros_like(centred), where=std + eps > 0)
    return advantage, terms
