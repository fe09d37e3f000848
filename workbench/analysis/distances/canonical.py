"""Reward canonicalisations that remove potential shaping (EPIC, SRRD, STARC-VAL) and the distances built on them, in numpy.

A reward here is a vectorised function ``reward(x, y) -> (K,)`` of state pairs ``x -> y`` (rows
of (K, F) arrays); Crafter's stepwise reward depends on the states only, not on the action, so
the expectations over actions of the papers drop out. Transitions are (N, F) ``before`` /
``after`` rows, sampled from the coverage distribution (the corpus).

- EPIC (Gleave et al. 2021, *Quantifying Differences in Reward Functions*, ICLR):
  ``C(R)(s, s') = R(s, s') + E[gamma R(s', S') - R(s, S') - gamma R(S, S')]`` with ``S, S'``
  independent draws of the state distribution; distance ``sqrt((1 - rho) / 2)``, rho the
  Pearson correlation of the canonical rewards over the transitions.
- SRRD (Nyanhongo, Henrique and Santos 2025, *Reward Distance Comparisons Under Transition
  Sparsity*, TMLR): ``C(R)(s, s') = R(s, s') + E[gamma R(s', S1) - R(s, S2) - gamma R(S3, S4)
  + gamma^2 R(S1, S5) - gamma R(S2, S6) + gamma R(S3, S6) - gamma^2 R(S4, S5)]`` where S1 are
  states observed after ``s'``, S2 after ``s``, S3 / S4 the starts / ends of sampled
  transitions, S5 states observed after S1 and S6 after S2: the expectations stay on
  transitions the data has (EPIC's ``R(s, S')`` pairs mostly never happen). Pearson distance.
- STARC (Skalse et al. 2024, *STARC: A General Framework For Quantifying Differences Between
  Reward Functions*, ICLR) with value-adjusted levelling: ``C(R)(s, s') = R(s, s') +
  gamma V(s') - V(s)``, V the behaviour policy's value under R estimated by LSTD over linear
  state features (Bradtke and Barto 1996; 0 after a terminal transition); normalised to unit L2
  norm over the transitions; distance half the L2 distance of the normalised rewards, in [0, 1].
  Skalse et al. define it for ``gamma`` in (0, 1) with ``V`` the *exact* value ``V^pi`` of a fixed
  policy ``pi`` under R; their bounds (the distance against the regret of optimising one reward
  for the other) hold for that ``V``. Here ``V`` is LSTD's linear estimate of the behaviour
  policy's value from the corpus's transitions, so it is exact only when that value is linear in
  the features. ``gamma`` = 1 is refused: recorded episodes end at a step limit, not an
  absorbing state, so the undiscounted value is not finite and the LSTD system has no solution
  (on the search corpus: rank 30 of 38, condition ~1e19, canonical rewards 7-82x the reward
  and distances 0.01-0.12 across seeded 5,000-transition subsamples). A system without a
  solution at any gamma (relative residual above ``LSTD_TOLERANCE``) is refused too.

Every expectation is a mean over fixed samples (a seeded generator), and each sample array is
reused wherever the formula pairs it, so ``gamma Phi(s') - Phi(s)`` cancels exactly for any
``Phi`` (EPIC, SRRD) or any ``Phi`` linear in the features (STARC with LSTD, where LSTD's matrix
identifies V: a feature that is 0 in every start state but not in some end state leaves V, and
so that part of Phi, undetermined; the minimum-norm solution is used).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from workbench.errors import AnalysisError

__all__ = [
    "Reward",
    "epic_canonical",
    "pearson_distance",
    "srrd_canonical",
    "srrd_pairs",
    "starc_canonical",
    "starc_distance",
    "successor_samples",
]

#: LSTD's system ``A w = b`` counts as solved when ``|A w - b| <= LSTD_TOLERANCE |b|``.
LSTD_TOLERANCE = 1e-8

#: A reward as a function of state pairs: ``reward(x (K, F), y (K, F)) -> (K,)``.
Reward = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _check(before: np.ndarray, after: np.ndarray, gamma: float) -> None:
    if before.shape != after.shape or before.ndim != 2 or not len(before):
        raise AnalysisError(
            f"before and after must be non-empty (N, F) of one shape, got {before.shape}, {after.shape}"
        )
    if not 0.0 <= gamma <= 1.0:
        raise AnalysisError(f"gamma must be within [0, 1], got {gamma}")


def _mean_pairs(reward: Reward, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``mean_k reward(x[:, k], y[:, k])`` for (N, K, F) sample arrays: (N,)."""
    n, k, f = x.shape
    return reward(x.reshape(n * k, f), y.reshape(n * k, f)).reshape(n, k).mean(axis=1)


def epic_canonical(
    reward: Reward, before: np.ndarray, after: np.ndarray, states: np.ndarray, gamma: float
) -> np.ndarray:
    """EPIC's canonical reward of each transition.

    Args:
        reward: the reward of state pairs.
        before: (N, F) start states of the transitions.
        after: (N, F) end states.
        states: (M, F) draws of the state distribution (used for both S and S').
        gamma: the discount.

    Returns:
        (N,) float64 canonical rewards.

    Raises:
        AnalysisError: bad shapes or gamma.
    """
    _check(before, after, gamma)
    n, m = len(before), len(states)
    tiled = np.broadcast_to(states, (n, m, states.shape[1]))
    out = reward(before, after).astype(np.float64)
    out += gamma * _mean_pairs(reward, np.broadcast_to(after[:, None], tiled.shape), tiled)
    out -= _mean_pairs(reward, np.broadcast_to(before[:, None], tiled.shape), tiled)
    shifted = np.roll(states, 1, axis=0)  # S and S' independent: pair each draw with another
    out -= gamma * reward(states, shifted).mean()
    return out


def successor_samples(
    state_id: np.ndarray, next_id: np.ndarray, of: np.ndarray, k: int, rng: np.random.Generator
) -> np.ndarray:
    """For each state in ``of``, ``k`` draws of the states observed right after it.

    Args:
        state_id: (N,) int, each transition's start state id.
        next_id: (N,) int, each transition's end state id.
        of: (Q,) int, the state ids to draw successors of.
        k: draws per state.
        rng: the generator.

    Returns:
        (Q, k) int state ids; a state never seen as a start (an episode's end) stays where it is.
    """
    order = np.argsort(state_id, kind="stable")
    starts = state_id[order]
    lo = np.searchsorted(starts, of, side="left")
    count = np.searchsorted(starts, of, side="right") - lo
    pick = lo[:, None] + np.floor(rng.random((len(of), k)) * np.maximum(count, 1)[:, None]).astype(np.int64)
    drawn = next_id[order][np.minimum(pick, len(order) - 1)]
    return np.where(count[:, None] > 0, drawn, of[:, None])


def srrd_pairs(
    state_id: np.ndarray, next_id: np.ndarray, *, k: int = 16, seed: int = 0
) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """The state pairs SRRD's expectations average over, with their coefficients.

    Args:
        state_id: (N,) int, each transition's start state.
        next_id: (N,) int, each transition's end state.
        k: draws per expectation and transition.
        seed: the generator's seed (the same seed gives the same draws for every reward).

    Returns:
        Seven ``(power of gamma, x, y)`` terms in the formula's order, x and y (N, k)
        state ids: ``(s', S1), (s, S2), (S3, S4), (S1, S5), (S2, S6), (S3, S6), (S4, S5)``.
    """
    rng = np.random.default_rng(seed)
    n = len(state_id)
    s1 = successor_samples(state_id, next_id, next_id, k, rng)  # after s'
    s2 = successor_samples(state_id, next_id, state_id, k, rng)  # after s
    s3 = state_id[rng.integers(0, n, size=(n, k))]  # starts of sampled transitions
    s4 = next_id[rng.integers(0, n, size=(n, k))]  # ends of sampled transitions
    s5 = successor_samples(state_id, next_id, s1.ravel(), 1, rng).reshape(n, k)  # after S1
    s6 = successor_samples(state_id, next_id, s2.ravel(), 1, rng).reshape(n, k)  # after S2
    here = np.broadcast_to(state_id[:, None], (n, k))
    there = np.broadcast_to(next_id[:, None], (n, k))
    # the power of gamma each term carries (signs: + - - + - + -, applied by srrd_canonical)
    return [(1, there, s1), (0, here, s2), (1, s3, s4), (2, s1, s5), (1, s2, s6), (1, s3, s6), (2, s4, s5)]


def srrd_canonical(
    reward: Reward,
    states: np.ndarray,
    state_id: np.ndarray,
    next_id: np.ndarray,
    gamma: float,
    *,
    k: int = 16,
    seed: int = 0,
) -> np.ndarray:
    """SRRD's canonical reward of each transition (the sets S1 .. S6 drawn from the data, ``srrd_pairs``).

    Args:
        reward: the reward of state pairs.
        states: (U, F) the distinct states.
        state_id: (N,) int, each transition's start state (row of ``states``).
        next_id: (N,) int, each transition's end state.
        gamma: the discount.
        k: draws per expectation and transition.
        seed: the generator's seed (the same seed gives the same draws for every reward).

    Returns:
        (N,) float64 canonical rewards.

    Raises:
        AnalysisError: bad shapes or gamma.
    """
    _check(states[state_id], states[next_id], gamma)
    coefficients = (gamma, -1.0, -gamma, gamma**2, -gamma, gamma, -(gamma**2))
    out = reward(states[state_id], states[next_id]).astype(np.float64)
    for c, (_, x, y) in zip(coefficients, srrd_pairs(state_id, next_id, k=k, seed=seed)):
        out += c * _mean_pairs(reward, states[x], states[y])
    return out


def starc_canonical(
    rewards: np.ndarray, features: np.ndarray, next_features: np.ndarray, gamma: float, terminal: np.ndarray
) -> np.ndarray:
    """STARC's value-adjusted levelling ``R + gamma V(s') - V(s)``, V by LSTD over linear features.

    Args:
        rewards: (N,) the reward of each transition.
        features: (N, F) features of the start states.
        next_features: (N, F) features of the end states.
        gamma: the discount.
        terminal: (N,) bool, transitions into an absorbing state (V = 0 there).

    Returns:
        (N,) float64 canonical rewards.

    Raises:
        AnalysisError: bad shapes or gamma, gamma = 1 (see the module), or an LSTD system
            without a solution.
    """
    _check(features, next_features, gamma)
    if gamma >= 1.0:
        raise AnalysisError(
            "STARC needs gamma < 1 (e.g. the learner's 0.99): at gamma = 1 the value of a behaviour whose "
            "episodes end at a step limit is not finite and the LSTD value estimate has no solution; Skalse et al. "
            "define the canonicalisation for gamma in (0, 1) with the policy's exact value"
        )
    following = np.where(np.asarray(terminal, dtype=bool)[:, None], 0.0, next_features)
    # LSTD: sum_t phi_t (r_t + gamma phi'_t w - phi_t w) = 0  =>  A w = b
    a = features.T @ (features - gamma * following)
    b = features.T @ rewards
    w = np.linalg.lstsq(a, b, rcond=None)[0]
    residual, scale = float(np.linalg.norm(a @ w - b)), float(np.linalg.norm(b))
    if residual > LSTD_TOLERANCE * max(scale, 1e-300):
        raise AnalysisError(
            f"STARC's LSTD value estimate has no solution (relative residual {residual / scale:.1e}): the "
            "transitions do not pin a value at this gamma; use a smaller gamma or more transitions"
        )
    return rewards + gamma * (following @ w) - features @ w


def pearson_distance(a: np.ndarray, b: np.ndarray) -> float:
    """``sqrt((1 - rho) / 2)`` for the Pearson correlation rho of two reward vectors (EPIC, SRRD).

    A constant vector has no correlation: the distance is 0 when both are constant, sqrt(1/2)
    (rho taken as 0) when only one is.

    Args:
        a: (N,) canonical rewards under one reward.
        b: (N,) under the other.

    Returns:
        The distance, in [0, 1].
    """
    a, b = a - a.mean(), b - b.mean()
    na, nb = float(np.sqrt(a @ a)), float(np.sqrt(b @ b))
    scale = max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0), 1.0)
    flat_a, flat_b = na <= 1e-12 * scale, nb <= 1e-12 * scale
    if flat_a or flat_b:
        return 0.0 if flat_a and flat_b else float(np.sqrt(0.5))
    rho = float(np.clip((a @ b) / (na * nb), -1.0, 1.0))
    return float(np.sqrt((1.0 - rho) / 2.0))


def starc_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Half the L2 distance of two canonical reward vectors each scaled to unit L2 norm (in [0, 1]);
    0 when both are 0, 0.5 when only one is.

    Args:
        a: (N,) canonical rewards under one reward.
        b: (N,) under the other.

    Returns:
        The distance.
    """
    na, nb = float(np.sqrt(a @ a)), float(np.sqrt(b @ b))
    scale = max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0), 1.0)
    if na <= 1e-12 * scale or nb <= 1e-12 * scale:
        return 0.0 if na <= 1e-12 * scale and nb <= 1e-12 * scale else 0.5
    return float(np.linalg.norm(a / na - b / nb) / 2.0)
