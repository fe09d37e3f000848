"""The exact part of a search: achievement weights fitted to rank episodes as progress does.

For a fixed strategy (per_achievement), k-limits and resource tables the shaped return is
linear in the 22 achievement weights (``workbench.analysis.search.objective``). "Episode i should earn
more than episode j whenever it made more progress" is a set of pairwise preferences; between
progress levels they are all expressed by thresholds: an episode at level k should earn more
than threshold b[k-1] and less than b[k] (an all-pairs ranking through K-1 cut points, as in
ordinal regression). The fit minimises the logistic loss of those margins (a smooth, convex
surrogate of the misranked pairs) plus a ridge pull towards the starting weights, under box
bounds on every weight, with L-BFGS-B: a convex problem solved to its optimum, deterministic,
in milliseconds for thousands of episodes (cost linear in episodes, not in pairs).

``temperature`` sets how hard a margin must be won, relative to the spread of returns at the
starting weights; ``ridge`` how strongly weights stay near where they started; with
``penalize``, a squared hinge also pushes a named policy's return per unit of progress down to
that of the other episodes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from workbench.analysis.search.objective import N_ACHIEVEMENTS, Design
from workbench.errors import SearchError
from workbench.util.blas import single_threaded

__all__ = ["LinearFit", "fit_weights"]

#: L-BFGS-B stopping rules: relative loss change and projected gradient (loose enough that a
#: fit takes tens of iterations, tight enough that ranks no longer change).
FTOL = 1e-10
GTOL = 1e-7


@dataclass(frozen=True)
class LinearFit:
    """Fitted achievement weights (22, Crafter order) with how the fit went: the final
    ``loss``, L-BFGS-B ``iterations``, whether it ``converged``, ``levels`` (distinct progress
    values among the fitted episodes; below 2 there is nothing to rank and the starting weights
    come back unchanged), ``thresholds`` and ``seconds``."""

    weights: np.ndarray
    thresholds: np.ndarray
    loss: float
    iterations: int
    converged: bool
    levels: int
    seconds: float


def _checked_range(weight_range: tuple[float, float], temperature: float) -> tuple[float, float]:
    """``weight_range`` as two floats; ``SearchError`` unless they are finite and ordered and
    ``temperature`` is positive."""
    low, high = float(weight_range[0]), float(weight_range[1])
    if not (np.isfinite(low) and np.isfinite(high) and low <= high):
        raise SearchError(f"weight_range must be two finite numbers low <= high, got {weight_range}")
    if not temperature > 0:
        raise SearchError(f"temperature must be > 0, got {temperature}")
    return low, high


def _minimize(
    loss_and_gradient: Callable[[np.ndarray], tuple[float, np.ndarray]],
    theta0: np.ndarray,
    bounds: Sequence[tuple[float | None, float | None]],
    max_iter: int,
) -> Any:
    """SciPy's L-BFGS-B result for ``loss_and_gradient`` from ``theta0`` within ``bounds``."""
    # OpenBLAS threads cost far more than they save on vectors this small (measured 7x slower
    # on this 2-core machine under load), so the solver runs on one.
    with single_threaded():
        return minimize(
            loss_and_gradient,
            theta0,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": max_iter, "ftol": FTOL, "gtol": GTOL},
        )


def _margins(
    credited: np.ndarray, resource: np.ndarray, level: np.ndarray, k: int, scale: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fit's margins, each linear in theta = (weights, thresholds): ``margins = A @ theta +
    offset``. An episode at progress level ``j`` has a margin above threshold ``j - 1`` (if
    ``j > 0``) and below threshold ``j`` (if ``j < k - 1``), in units of ``scale``. Returns A,
    offset and each margin's weight (every level weighs the same whatever its size, so a
    common level cannot drown a rare one)."""
    has_low, has_high = level > 0, level < k - 1
    below, above = level[has_low] - 1, level[has_high]  # the threshold each margin is measured against
    per_episode = 1.0 / (k * np.bincount(level, minlength=k)[level])
    m_low, m_high = int(has_low.sum()), int(has_high.sum())
    a = np.zeros((m_low + m_high, N_ACHIEVEMENTS + k - 1))
    a[:m_low, :N_ACHIEVEMENTS] = credited[has_low]
    a[np.arange(m_low), N_ACHIEVEMENTS + below] = -1.0
    a[m_low:, :N_ACHIEVEMENTS] = -credited[has_high]
    a[m_low + np.arange(m_high), N_ACHIEVEMENTS + above] = 1.0
    a /= scale
    offset = np.concatenate([resource[has_low], -resource[has_high]]) / scale
    return a, offset, np.concatenate([per_episode[has_low], per_episode[has_high]])


def _excess_rate(
    marked: np.ndarray, progress: np.ndarray, credited: np.ndarray, resource: np.ndarray, initial: np.ndarray
) -> tuple[np.ndarray, float] | None:
    """How much more the ``marked`` rows are paid per unit of progress than the others, as a
    linear function of the weights: (row, offset) with ``excess = row @ weights + offset``, in
    units of the others' rate under the initial weights (``initial`` returns). None when the
    contrast is undefined (no marked or no other row, or a group without progress)."""
    if not (marked.any() and (~marked).any() and progress[marked].mean() > 0 and progress[~marked].mean() > 0):
        return None
    # Linear in the returns: (mean return / mean progress) of the named rows minus the others'.
    contrast = np.where(
        marked, 1.0 / (marked.sum() * progress[marked].mean()), -1.0 / ((~marked).sum() * progress[~marked].mean())
    )
    rate_scale = max(abs(float(initial[~marked].mean() / progress[~marked].mean())), 1e-6)
    return (credited.T @ contrast) / rate_scale, float(contrast @ resource) / rate_scale


def fit_weights(
    design: Design,
    rows: np.ndarray,
    *,
    slot_weights: np.ndarray,
    unlimited: np.ndarray | None = None,
    weight_range: tuple[float, float] = (0.0, 5.0),
    prior: np.ndarray | None = None,
    temperature: float = 0.1,
    ridge: float = 1e-3,
    named: np.ndarray | None = None,
    penalty: float = 0.0,
    max_iter: int = 1000,
) -> LinearFit:
    """Achievement weights that rank the episodes at ``rows`` (positions in ``design``) as their
    progress does, under the ``per_achievement`` strategy with resource weights ``slot_weights``
    (38,) and k-limit 0 for the achievements marked in ``unlimited`` (22,).

    ``weight_range`` bounds every weight; ``prior`` (22,) is where the fit starts and what the
    ridge pulls towards (default 1.0, the task app's weight for an unlisted achievement);
    ``named`` (a bool per row) marks a policy whose return per unit of progress ``penalty``
    holds to the others'. Lambda is left out: a positive lambda scales every return and changes
    no rank. Raises ``ValueError`` for an empty ``rows``, a bad range or a non-positive
    temperature.
    """
    start = time.perf_counter()
    low, high = _checked_range(weight_range, temperature)
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        raise SearchError("fit_weights needs at least one episode")
    w0 = np.clip(np.ones(N_ACHIEVEMENTS) if prior is None else np.asarray(prior, dtype=np.float64), low, high)
    credited = design.credited(unlimited)[rows]
    resource = design.gains[rows] @ slot_weights
    progress = design.progress[rows]
    levels, level = np.unique(progress, return_inverse=True)
    k = len(levels)
    if k < 2:
        return LinearFit(w0, np.zeros(0), 0.0, 0, True, k, time.perf_counter() - start)

    initial = credited @ w0 + resource
    scale = temperature * max(float(initial.std()), 1e-6)
    a, offset, margin_weight = _margins(credited, resource, level, k, scale)
    ridge_weight = ridge / max((high - low) ** 2, 1e-12)
    marked = np.zeros(len(rows), dtype=bool) if named is None or penalty <= 0 else np.asarray(named, dtype=bool)
    excess_of = _excess_rate(marked, progress, credited, resource, initial)

    def loss_and_gradient(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = a @ theta + offset
        loss = float(margin_weight @ np.logaddexp(0.0, -z))
        gradient = a.T @ (-margin_weight * expit(-z))  # d softplus(-z) / dz = -sigmoid(-z)
        delta = theta[:N_ACHIEVEMENTS] - w0
        loss += ridge_weight * float(delta @ delta)
        gradient[:N_ACHIEVEMENTS] += 2.0 * ridge_weight * delta
        if excess_of is not None:
            penalty_row, penalty_offset = excess_of
            excess = float(penalty_row @ theta[:N_ACHIEVEMENTS]) + penalty_offset
            if excess > 0:
                loss += penalty * excess * excess
                gradient[:N_ACHIEVEMENTS] += 2.0 * penalty * excess * penalty_row
        return loss, gradient

    means = np.array([initial[level == j].mean() for j in range(k)])
    thresholds0 = np.maximum.accumulate((means[:-1] + means[1:]) / 2.0)
    theta0 = np.concatenate([w0, thresholds0])
    bounds = [(low, high)] * N_ACHIEVEMENTS + [(None, None)] * (k - 1)
    result = _minimize(loss_and_gradient, theta0, bounds, max_iter)
    weights = np.clip(result.x[:N_ACHIEVEMENTS], low, high)
    elapsed = time.perf_counter() - start
    return LinearFit(
        weights, result.x[N_ACHIEVEMENTS:], float(result.fun), int(result.nit), bool(result.success), k, elapsed
    )
