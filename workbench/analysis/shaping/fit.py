"""Least-squares potentials: how much of each reward component some ``gamma Phi(s') - Phi(s)`` explains.

For a component paying ``r_t`` on transition ``s_t -> s'_t`` and a linear potential
``Phi(s) = theta . x(s)`` over state features ``x``, the shaping it would be is ``D theta`` with
design rows ``D_t = gamma x(s'_t) - x(s_t)`` (``x(s') = 0`` into an absorbing state). The best
potential minimises ``|r - D theta|^2``; what remains, ``e = r - D theta``, is the part of the
component that *no* potential over these features explains: 0 for potential-based shaping,
which leaves optimal policies unchanged (Ng, Harada and Russell 1999), and everything a loop pays
(around a loop back to one state, at gamma = 1, any potential sums to 0).

Adding ``gamma Phi(s') - Phi(s)`` for any linear ``Phi`` to a component moves its fit by exactly
that potential and leaves ``e`` unchanged (``D theta`` spans every such shaping).

The sums are accumulated in ``Moments`` so a corpus can be fitted batch by batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.errors import AnalysisError

__all__ = ["Moments", "PotentialFit", "fit_potential", "moments", "shaping_design", "solve"]


def shaping_design(
    before: np.ndarray, after: np.ndarray, gamma: float, terminal: np.ndarray | None = None
) -> np.ndarray:
    """The design rows ``gamma x(s') - x(s)`` (``x(s') = 0`` where ``terminal``).

    Args:
        before: (N, F) features of the states transitions start from.
        after: (N, F) features of the states they end in.
        gamma: the discount, in [0, 1].
        terminal: (N,) bool transitions into an absorbing state, or None.

    Returns:
        (N, F) float64 design matrix.

    Raises:
        AnalysisError: mismatched shapes or gamma outside [0, 1].
    """
    before = np.asarray(before, dtype=np.float64)
    after = np.asarray(after, dtype=np.float64)
    if before.shape != after.shape or before.ndim != 2:
        raise AnalysisError(f"before and after must be (N, F) of one shape, got {before.shape} and {after.shape}")
    if not 0.0 <= gamma <= 1.0:
        raise AnalysisError(f"gamma must be within [0, 1], got {gamma}")
    scaled = gamma * after
    if terminal is not None:
        scaled[np.asarray(terminal, dtype=bool)] = 0.0
    return scaled - before


@dataclass(frozen=True)
class Moments:
    """The sums a least-squares potential needs, addable across batches of transitions
    (D the (N, F) design rows, R the (N, C) component rewards).

    Attributes:
        gram: (F, F) float64, D'D.
        cross: (F, C) float64, D'R.
        design_sums: (F,) float64, D'1.
        paid: (C,) float64, R'1: each component's total.
        squares: (C,) float64, the squared norm of each component column.
    """

    gram: np.ndarray
    cross: np.ndarray
    design_sums: np.ndarray
    paid: np.ndarray
    squares: np.ndarray

    def __add__(self, other: Moments) -> Moments:
        return Moments(*(a + b for a, b in zip(self.__dict__.values(), other.__dict__.values())))


def moments(design: np.ndarray, rewards: np.ndarray, weights: np.ndarray | None = None) -> Moments:
    """The ``Moments`` of one batch.

    Args:
        design: (N, F) design rows (``shaping_design``).
        rewards: (N, C) float, each component's reward per transition.
        weights: (N,) how many transitions each row stands for (None: one each).

    Returns:
        The batch's ``Moments``.

    Raises:
        AnalysisError: mismatched row counts or non-finite rewards.
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    if rewards.ndim != 2 or len(rewards) != len(design):
        raise AnalysisError(f"rewards must be (N, C) with N = {len(design)} transitions, got {rewards.shape}")
    if not np.isfinite(rewards).all():
        raise AnalysisError("rewards must be finite numbers")
    w = np.ones(len(design)) if weights is None else np.asarray(weights, dtype=np.float64)
    weighted = design * w[:, None]
    return Moments(
        weighted.T @ design,
        weighted.T @ rewards,
        weighted.sum(axis=0),
        w @ rewards,
        w @ rewards**2,
    )


@dataclass(frozen=True)
class PotentialFit:
    """The best potential per component c (F features, C components).

    Attributes:
        theta: (F, C) the fitted potential's weights (the minimum-norm one when features never vary).
        paid: (C,) what each component paid.
        explained: (C,) the sum of the fitted shaping ``D theta``.
        residual: (C,) ``|r - D theta|^2``.
        squares: (C,) ``|r|^2``.
    """

    theta: np.ndarray
    paid: np.ndarray
    explained: np.ndarray
    residual: np.ndarray
    squares: np.ndarray

    @property
    def unexplained(self) -> np.ndarray:
        """(C,) the part of each component's total that no potential explains: ``sum_t e_t``."""
        return self.paid - self.explained

    @property
    def unexplained_signal(self) -> np.ndarray:
        """(C,) ``|e| / |r|``: 0 for potential-based shaping, 1 when no potential explains any of it."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.squares > 0, np.sqrt(self.residual / np.where(self.squares > 0, self.squares, 1)), 0.0)


def solve(m: Moments, residual: np.ndarray | None = None) -> PotentialFit:
    """The least-squares potentials of accumulated ``Moments``.

    Args:
        m: the moments of all transitions.
        residual: (C,) the squared residual norms when computed in a second pass over the data
            (exact); None computes them from the moments (``|r|^2 - theta' D'r``, clipped at 0).

    Returns:
        The ``PotentialFit``.
    """
    theta = np.linalg.pinv(m.gram, rcond=1e-10, hermitian=True) @ m.cross
    if residual is None:
        residual = np.maximum(m.squares - np.einsum("fc,fc->c", theta, m.cross), 0.0)
    return PotentialFit(theta, m.paid, m.design_sums @ theta, residual, m.squares)


def fit_potential(design: np.ndarray, rewards: np.ndarray) -> PotentialFit:
    """Fit one least-squares potential per reward component (residuals computed exactly).

    Args:
        design: (N, F) design rows (``shaping_design``).
        rewards: (N, C) each component's reward per transition.

    Returns:
        The ``PotentialFit``.

    Raises:
        AnalysisError: mismatched shapes or non-finite rewards.
    """
    fitted = solve(moments(design, rewards))
    error = np.asarray(rewards, dtype=np.float64) - design @ fitted.theta
    return PotentialFit(fitted.theta, fitted.paid, fitted.explained, (error**2).sum(axis=0), fitted.squares)
