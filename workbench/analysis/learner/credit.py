"""Per-decision credit for step-level trainers: GAE (Schulman et al. 2016) over episodes, vectorised.

``gae`` runs the backward recursion ``A_t = delta_t + gamma lambda A_{t+1}`` of every episode at
once, as a parallel prefix scan of affine maps (Hillis and Steele 1986; Blelloch 1990): about
log2(longest episode) passes of whole-array numpy operations, no Python loop per decision or
episode, and no ``(gamma lambda)^-t`` rescaling (which would overflow on long episodes).
"""

from __future__ import annotations

import numpy as np

from workbench.errors import AnalysisError

__all__ = ["discounted_sums", "gae"]


def discounted_sums(values: np.ndarray, lengths: np.ndarray, factor: float) -> np.ndarray:
    """Per episode, ``out_t = sum_{k >= 0} factor^k values_{t+k}`` up to the episode's end.

    Args:
        values: (N,) float, per decision, episodes one after the other.
        lengths: (E,) int, decisions per episode (summing to N).
        factor: the per-step discount (e.g. ``gamma * lambda``), in [0, 1].

    Returns:
        (N,) float64 discounted sums to the end of each episode.

    Raises:
        AnalysisError: lengths that do not sum to N or are negative; a factor outside [0, 1].
    """
    values = np.asarray(values, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if values.ndim != 1 or lengths.ndim != 1 or int(lengths.sum()) != len(values) or (lengths < 0).any():
        raise AnalysisError(
            f"lengths must be non-negative and sum to the number of decisions ({len(values)}), got {int(lengths.sum())}"
        )
    if not 0.0 <= factor <= 1.0:
        raise AnalysisError(f"the discount factor must be within [0, 1], got {factor}")
    # Reversed, the recursion is y_i = a_i + b_i y_{i-1}, b_i = factor except at an episode's
    # (reversed) first row, where b_i = 0. Composing maps i-d .. i doubles d each pass.
    a = values[::-1].copy()
    b = np.full(len(a), factor)
    ends = np.cumsum(lengths)[lengths > 0]
    b[len(a) - ends] = 0.0  # the last decision of each episode, reversed
    d = 1
    longest = int(lengths.max(initial=0))
    while d < longest:
        a[d:] += b[d:] * a[:-d]
        b[d:] *= b[:-d]
        d *= 2
    return a[::-1].copy()


def gae(
    rewards: np.ndarray,
    lengths: np.ndarray,
    *,
    gamma: float = 0.99,
    lam: float = 0.95,
    values: np.ndarray | None = None,
    last_values: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimates per decision (Schulman et al. 2016).

    ``delta_t = r_t + gamma V(s_{t+1}) - V(s_t)``; ``A_t = sum_k (gamma lambda)^k delta_{t+k}``
    within the episode. Without a critic (``values`` None) V is 0, so ``A_t`` is the
    ``gamma lambda``-discounted reward to go: the credit a critic-free step-level trainer gives.

    Args:
        rewards: (N,) float, per decision, episodes one after the other.
        lengths: (E,) int, decisions per episode.
        gamma: the discount, in [0, 1].
        lam: GAE's lambda, in [0, 1].
        values: (N,) float V(s_t) of the state each decision starts from, or None for 0.
        last_values: (E,) float V of each episode's final state (0 for a terminal state, the
            critic's estimate for a truncated one), or None for 0.

    Returns:
        ``(advantages, returns)``, each (N,): ``returns = advantages + values`` (the critic's
        regression target).

    Raises:
        AnalysisError: mismatched shapes, gamma or lambda outside [0, 1], non-finite input.
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise AnalysisError(f"gamma and lambda must be within [0, 1], got gamma={gamma}, lambda={lam}")
    v = np.zeros(len(rewards)) if values is None else np.asarray(values, dtype=np.float64)
    if v.shape != rewards.shape:
        raise AnalysisError(f"values must have one entry per decision ({len(rewards)}), got shape {v.shape}")
    last = np.zeros(len(lengths)) if last_values is None else np.asarray(last_values, dtype=np.float64)
    if last.shape != lengths.shape:
        raise AnalysisError(f"last_values must have one entry per episode ({len(lengths)}), got shape {last.shape}")
    if not (np.isfinite(rewards).all() and np.isfinite(v).all() and np.isfinite(last).all()):
        raise AnalysisError("rewards and values must be finite numbers")
    # V(s_{t+1}): the next decision's V, or the episode's last value after its final decision.
    following = np.empty_like(v)
    following[:-1] = v[1:]
    ends = np.cumsum(lengths)[lengths > 0] - 1
    following[ends] = last[lengths > 0]
    delta = rewards + gamma * following - v
    advantages = discounted_sums(delta, lengths, gamma * lam)
    return advantages, advantages + v
