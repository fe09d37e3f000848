"""``reward_distance``: EPIC, STARC or SRRD between two configs on a corpus's transitions, with a coverage report."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.analysis.distances.canonical import (
    Reward,
    epic_canonical,
    pearson_distance,
    srrd_canonical,
    srrd_pairs,
    starc_canonical,
    starc_distance,
)
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import INVENTORY_ITEMS
from workbench.data.episodes import Corpus
from workbench.errors import AnalysisError
from workbench.scoring.potential import decision_rows, terminal_decisions

__all__ = [
    "DEFAULT_GAMMA",
    "DISTANCES",
    "Coverage",
    "Distance",
    "DistanceSpread",
    "distance_spread",
    "pair_reward",
    "reward_distance",
]

DISTANCES = ("epic", "starc", "srrd")
#: Each distance's default discount: EPIC's and SRRD's expectations are finite at 1; STARC's
#: value estimate is not (``canonical.starc_canonical``), so it takes a learner's usual 0.99.
DEFAULT_GAMMA = {"epic": 1.0, "srrd": 1.0, "starc": 0.99}
#: Draws per expectation (EPIC: states; SRRD: per transition and set) unless told.
SAMPLES = 16
#: Below these a distance rests on too little of the state space: the report warns.
MIN_TRANSITIONS = 500
MIN_STATES = 50
MIN_BRANCHING = 0.05
MIN_OBSERVED = 0.01
N_ITEMS = len(INVENTORY_ITEMS)


def pair_reward(config: RewardConfig) -> Reward:
    """``config``'s stepwise reward as a function of state pairs (inventory 16 then counts 22).

    A credit is paid when an achievement's count leaves 0 (an achievement unlocks once per
    episode, so every k-limit credits it); resource shaping pays every positive difference.
    On a corpus's transitions this is what ``workbench.score`` pays (tested).

    Args:
        config: the reward config.

    Returns:
        ``reward(x (K, 38), y (K, 38)) -> (K,)`` after lambda.
    """
    rule = config.rule
    lam = config.effective_lambda
    credit = rule.credit_weights(config.weights)
    slots = rule.slot_pay(config.resource_weights)

    def reward(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        unlocked = (x[:, N_ITEMS:] == 0) & (y[:, N_ITEMS:] > 0)
        if rule.pays_indicator:  # 1.0 for any unlock, however many
            return lam * unlocked.any(axis=1).astype(np.float64)
        # states are never negative: the difference of two fits their own signed type (int16
        # states: a quarter of int64's traffic; the products below are the same float64s)
        signed = x.dtype if x.dtype.kind == "i" and x.dtype == y.dtype else np.int64
        gained = np.maximum(y.astype(signed, copy=False) - x, 0)
        return lam * (unlocked @ credit + gained @ slots)

    return reward


@dataclass(frozen=True)
class Coverage:
    """How much of the state space the distance rests on.

    Attributes:
        transitions: The transitions (decisions) used.
        states: The distinct states among them.
        distinct_transitions: The distinct (state, successor) pairs among them.
        branching: The share of start states seen with two or more different successors
            (SRRD's expectations over successors rest on one draw otherwise).
        observed_pairs: The share of the state pairs the canonicalisation evaluated that are
            transitions the data has (EPIC evaluates mostly pairs that never happen; SRRD's
            successor terms stay on observed ones).
        warning: Why the coverage is thin, or "".
    """

    transitions: int
    states: int
    distinct_transitions: int
    branching: float
    observed_pairs: float
    warning: str


@dataclass(frozen=True)
class Distance:
    """A distance between two configs on a corpus.

    Attributes:
        kind: ``epic``, ``starc`` or ``srrd``.
        value: The distance, in [0, 1] (0: the same reward up to shaping and scale).
        gamma: The discount the canonicalisation used.
        coverage: How much of the state space it rests on.
        samples: Draws per expectation (EPIC, SRRD; STARC draws none).
        seed: The seed of the transitions' subsample and the draws.
    """

    kind: str
    value: float
    gamma: float
    coverage: Coverage
    samples: int = SAMPLES
    seed: int = 0


def reward_distance(
    corpus: Corpus,
    config_a: RewardConfig,
    config_b: RewardConfig,
    kind: str = "epic",
    *,
    gamma: float | None = None,
    max_transitions: int = 5_000,
    samples: int = SAMPLES,
    seed: int = 0,
) -> Distance:
    """The ``kind`` distance between two configs' rewards over the corpus's decisions.

    Args:
        corpus: the episodes: their decisions are the transitions (a random ``max_transitions``
            of them, seeded, when there are more).
        config_a: one reward config.
        config_b: the other.
        kind: ``epic``, ``starc`` or ``srrd``.
        gamma: the discount, in [0, 1] (STARC: below 1); None: ``DEFAULT_GAMMA[kind]``.
        max_transitions: at most this many transitions are used.
        samples: draws per expectation (EPIC: states; SRRD: per transition and set).
        seed: the generator's seed (the subsample and the draws: ``distance_spread`` varies it).

    Returns:
        The ``Distance`` with its coverage report.

    Raises:
        AnalysisError: an unknown kind, gamma outside [0, 1], STARC at gamma 1, fewer than two
            transitions or than one draw.
    """
    if kind not in DISTANCES:
        raise AnalysisError(f"distance must be one of {list(DISTANCES)}, got {kind!r}")
    if samples < 1:
        raise AnalysisError(f"samples must be at least 1, got {samples}")
    gamma = DEFAULT_GAMMA[kind] if gamma is None else gamma
    arrays = corpus.decision_arrays()
    before, after = decision_rows(arrays)
    terminal = terminal_decisions(arrays)
    rng = np.random.default_rng(seed)
    if len(after) > max_transitions:
        keep = np.sort(rng.choice(len(after), size=max_transitions, replace=False))
        before, after, terminal = before[keep], after[keep], terminal[keep]
    if len(after) < 2:
        raise AnalysisError("a reward distance needs at least two transitions")
    # the state rows of the transitions kept only (stacking all of a 1M-decision corpus's rows
    # first cost ~0.15 s of each distance)
    ends = np.concatenate([before, after])
    rows = np.concatenate([arrays.inventory[ends], arrays.achievement_counts[ends]], axis=1).astype(np.int64)
    states, inverse = np.unique(rows, axis=0, return_inverse=True)
    state_id, next_id = np.split(inverse.ravel(), 2)
    reward_a, reward_b = pair_reward(config_a), pair_reward(config_b)
    x, y = states[state_id], states[next_id]
    if kind == "epic":
        draws = states[state_id[rng.integers(0, len(state_id), size=samples)]]
        value = pearson_distance(*(epic_canonical(r, x, y, draws, gamma) for r in (reward_a, reward_b)))
        drawn = np.repeat(state_id[rng.integers(0, len(state_id), samples)][None], len(state_id), axis=0).ravel()
        observed = float(
            np.mean([_observed(state_id, next_id, np.repeat(ends, samples), drawn) for ends in (state_id, next_id)])
        )
    elif kind == "srrd":
        # SRRD gathers 14 (transitions x samples) sets of states per config: in int16 when they fit
        narrow = states.astype(np.int16) if states.size and states.max() <= np.iinfo(np.int16).max else states
        canonical = [
            srrd_canonical(r, narrow, state_id, next_id, gamma, k=samples, seed=seed) for r in (reward_a, reward_b)
        ]
        value = pearson_distance(*canonical)
        pairs = srrd_pairs(state_id, next_id, k=samples, seed=seed)
        observed = float(np.mean([_observed(state_id, next_id, x.ravel(), y.ravel()) for _, x, y in pairs]))
    else:
        features = np.concatenate([x[:, :N_ITEMS], x[:, N_ITEMS:] > 0], axis=1).astype(np.float64)
        following = np.concatenate([y[:, :N_ITEMS], y[:, N_ITEMS:] > 0], axis=1).astype(np.float64)
        canonical = [starc_canonical(r(x, y), features, following, gamma, terminal) for r in (reward_a, reward_b)]
        value = starc_distance(*canonical)
        observed = 1.0  # only observed transitions are evaluated
    coverage = _coverage(state_id, next_id, len(states), observed)
    return Distance(kind, value, float(gamma), coverage, samples, seed)


@dataclass(frozen=True)
class DistanceSpread:
    """One distance computed with several seeds: how much the subsample and the draws move it.

    Attributes:
        runs: One ``Distance`` per seed, in seed order.
    """

    runs: tuple[Distance, ...]

    @property
    def values(self) -> np.ndarray:
        """(R,) the distances, in seed order."""
        return np.array([run.value for run in self.runs])

    @property
    def low(self) -> float:
        """The smallest distance over the seeds."""
        return float(self.values.min())

    @property
    def high(self) -> float:
        """The largest distance over the seeds."""
        return float(self.values.max())

    @property
    def median(self) -> float:
        """The median distance over the seeds."""
        return float(np.median(self.values))


def distance_spread(
    corpus: Corpus,
    config_a: RewardConfig,
    config_b: RewardConfig,
    kind: str = "epic",
    *,
    seeds: int = 5,
    first_seed: int = 0,
    gamma: float | None = None,
    max_transitions: int = 5_000,
    samples: int = SAMPLES,
) -> DistanceSpread:
    """``reward_distance`` with seeds ``first_seed .. first_seed + seeds - 1``: its spread.

    EPIC's distance rests on ``samples`` state draws and, on a corpus larger than
    ``max_transitions``, a subsample of transitions; STARC's on the subsample; SRRD's on both.
    The spread over seeds says how far one number can be trusted (three EPIC runs on the same
    pair of configs gave 0.19-0.22 with 16 draws).

    Args:
        corpus: as in ``reward_distance``.
        config_a: one reward config.
        config_b: the other.
        kind: ``epic``, ``starc`` or ``srrd``.
        seeds: how many seeds.
        first_seed: the first.
        gamma: as in ``reward_distance``.
        max_transitions: as in ``reward_distance``.
        samples: as in ``reward_distance``.

    Returns:
        The ``DistanceSpread``.

    Raises:
        AnalysisError: fewer than one seed, or what ``reward_distance`` raises.
    """
    if seeds < 1:
        raise AnalysisError(f"seeds must be at least 1, got {seeds}")
    runs = (
        reward_distance(
            corpus, config_a, config_b, kind, gamma=gamma, max_transitions=max_transitions, samples=samples, seed=seed
        )
        for seed in range(first_seed, first_seed + seeds)
    )
    return DistanceSpread(tuple(runs))


def _observed(state_id: np.ndarray, next_id: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """The share of the evaluated state pairs ``x -> y`` that are transitions of the data."""
    width = np.int64(max(int(state_id.max()), int(next_id.max())) + 1)
    seen = np.unique(state_id.astype(np.int64) * width + next_id)
    return float(np.isin(x.astype(np.int64) * width + y, seen).mean())


def _coverage(state_id: np.ndarray, next_id: np.ndarray, n_states: int, observed: float) -> Coverage:
    width = np.int64(n_states)
    distinct = np.unique(state_id.astype(np.int64) * width + next_id)
    starts = distinct // width
    successors = np.bincount(starts, minlength=n_states)
    seen_as_start = successors > 0
    branching = float((successors[seen_as_start] >= 2).mean()) if seen_as_start.any() else 0.0
    reasons = []
    if len(state_id) < MIN_TRANSITIONS:
        reasons.append(f"only {len(state_id)} transitions (< {MIN_TRANSITIONS})")
    if n_states < MIN_STATES:
        reasons.append(f"only {n_states} distinct states (< {MIN_STATES})")
    if observed < MIN_OBSERVED:
        reasons.append(
            f"only {observed:.2%} of the state pairs the canonicalisation evaluates are transitions the data has "
            "(EPIC's expectations pair states Crafter may never connect; SRRD is built for this)"
        )
    if branching < MIN_BRANCHING:
        reasons.append(f"only {branching:.1%} of states seen with two or more successors (< {MIN_BRANCHING:.0%})")
    warning = "thin coverage: " + "; ".join(reasons) if reasons else ""
    return Coverage(len(state_id), n_states, len(distinct), branching, observed, warning)
