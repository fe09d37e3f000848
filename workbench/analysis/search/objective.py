"""What a search maximises, over per-episode arrays built once from a prepared corpus.

For a fixed strategy and fixed k-limits the shaped return is linear in the weights:

    return[e] = lambda * (sum_a weight[a] * credited[e, a] + sum_s resource[s] * gains[e, s])

where ``credited[e, a]`` is how many unlocks of achievement a the k-limits credit in episode e
and ``gains[e, s]`` the summed rises of resource slot s (16 inventory items, then 22
achievement counts). ``Design`` holds those matrices (k-limit 1 and unlimited, the only limits
that act), built once from ``workbench.scoring.prepare``; every trial of a search recombines
them with a matrix product, and the tests hold the result to ``workbench.scoring.score``.

The objective is the rank agreement between shaped return and a progress measure (Spearman's
rho or Kendall's tau-b), minus ``penalty`` times how much more a named policy is paid per unit
of progress than the other episodes (its overpay ratio minus 1, when positive).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from workbench.analysis.rankstats import kendall_tau, spearman_rho
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.reward_rule import rule_for, slot_weights
from workbench.errors import SearchError, WorkbenchError
from workbench.scoring import PreparedCorpus

__all__ = [
    "METRICS",
    "PROGRESS_MEASURES",
    "Design",
    "Objective",
    "agreement",
    "build_design",
    "overpay",
    "resource_slot_weights",
]

N_ACHIEVEMENTS = len(ACHIEVEMENTS)
#: Resource slots: the 16 inventory items, then the 22 achievement counts (the task app's order).
N_SLOTS = len(INVENTORY_ITEMS) + N_ACHIEVEMENTS
#: Rank agreements a search can maximise.
METRICS = ("spearman", "kendall")
#: Named progress measures: distinct achievements unlocked, or Crafter's own return.
PROGRESS_MEASURES = ("achievements", "env_return")


@dataclass(frozen=True, eq=False)
class Design:
    """Per-episode arrays (E episodes, corpus order) from which any config's returns follow.

    ``first_unlocks`` (E, 22): unlocks credited under k-limit 1 (the first of each name);
    ``all_unlocks`` (E, 22): under k-limit <= 0 (unlimited); ``gains`` (E, 38): summed rises
    per resource slot; ``unlocking_decisions`` (E,): decisions that unlocked anything (what
    ``consistent`` pays); ``progress`` (E,): the progress measure; ``groups`` (E,): the
    stratification label (e.g. policy). Only plain numpy arrays, so a worker process can be
    handed them as they are (``arrays()`` / ``from_arrays``) without pickling a corpus.
    """

    ids: tuple[str, ...]
    first_unlocks: np.ndarray
    all_unlocks: np.ndarray
    gains: np.ndarray
    unlocking_decisions: np.ndarray
    progress: np.ndarray
    groups: np.ndarray

    @property
    def n_episodes(self) -> int:
        """How many episodes (rows) the design has."""
        return len(self.ids)

    @property
    def repeating(self) -> np.ndarray:
        """(22,) bool: achievements that unlock more than once in some episode, the only ones
        whose k-limit (0 = unlimited or 1) changes any return (never, in real Crafter)."""
        return (self.all_unlocks != self.first_unlocks).any(axis=0)

    def credited(self, unlimited: np.ndarray | None = None) -> np.ndarray:
        """(E, 22) credited unlocks when the achievements marked in ``unlimited`` have k-limit 0."""
        if unlimited is None or not np.any(unlimited):
            return self.first_unlocks
        return np.where(np.asarray(unlimited, dtype=bool)[None, :], self.all_unlocks, self.first_unlocks)

    def returns(
        self,
        weights: np.ndarray,
        slot_weights: np.ndarray,
        *,
        strategy: str = "per_achievement",
        unlimited: np.ndarray | None = None,
        lam: float = 1.0,
        rows: np.ndarray | slice = slice(None),
    ) -> np.ndarray:
        """Shaped return per episode (those in ``rows``) under a strategy, weights (22,), resource
        slot weights (38,), k-limit-0 achievements and the effective lambda."""
        if rule_for(strategy).pays_indicator:  # 1.0 per unlocking decision
            return lam * self.unlocking_decisions[rows]
        credited = self.credited(unlimited)[rows]
        return lam * (credited @ weights + self.gains[rows] @ slot_weights)

    def arrays(self) -> dict[str, np.ndarray]:
        """The design as named arrays (e.g. for ``numpy.savez``; ids and groups as str arrays)."""
        return {
            "ids": np.array(self.ids, dtype=str),
            "first_unlocks": self.first_unlocks,
            "all_unlocks": self.all_unlocks,
            "gains": self.gains,
            "unlocking_decisions": self.unlocking_decisions,
            "progress": self.progress,
            "groups": self.groups.astype(str),
        }

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> Design:
        """The design ``arrays()`` gave (e.g. read back with ``numpy.load(..., allow_pickle=False)``)."""
        return cls(
            ids=tuple(str(i) for i in arrays["ids"]),
            groups=np.asarray(arrays["groups"], dtype=object),
            **{
                key: np.asarray(arrays[key], dtype=np.float64)
                for key in ("first_unlocks", "all_unlocks", "gains", "unlocking_decisions", "progress")
            },
        )


def build_design(
    prepared: PreparedCorpus, groups: Sequence[str], progress: str | Mapping[str, float] = "achievements"
) -> Design:
    """The per-episode arrays of a prepared corpus (``workbench.scoring.prepare``).

    ``groups``: one label per episode (corpus order); ``progress``: "achievements" (distinct
    achievements unlocked, ``Scores.episodes["unique_achievements_total"]``), "env_return"
    (Crafter's return) or a mapping episode id -> value. Raises ``WorkbenchError`` for an
    unknown measure or a mapping that misses an episode or holds a non-finite value.
    """
    e = prepared.n_episodes
    if len(groups) != e:
        raise SearchError(f"one group per episode: {len(groups)} for {e} episodes")
    episode = prepared.episode_of[prepared.unlock_decision].astype(np.int64)
    name = prepared.unlock_name.astype(np.int64)
    cells = e * N_ACHIEVEMENTS
    all_unlocks = np.bincount(episode * N_ACHIEVEMENTS + name, minlength=cells)
    first = prepared.unlock_ordinal == 0
    first_unlocks = np.bincount(episode[first] * N_ACHIEVEMENTS + name[first], minlength=cells)
    gain_episode = prepared.episode_of[prepared.gain_decision].astype(np.int64)
    gains = np.bincount(
        gain_episode * N_SLOTS + prepared.gain_slot.astype(np.int64), weights=prepared.gain_delta, minlength=e * N_SLOTS
    )
    unlocking = np.bincount(prepared.episode_of, weights=(prepared.n_unlocked > 0), minlength=e)
    return Design(
        ids=tuple(prepared.ids),
        first_unlocks=first_unlocks.reshape(e, N_ACHIEVEMENTS).astype(np.float64),
        all_unlocks=all_unlocks.reshape(e, N_ACHIEVEMENTS).astype(np.float64),
        gains=gains.reshape(e, N_SLOTS),
        unlocking_decisions=unlocking.astype(np.float64),
        progress=_progress_values(prepared, progress),
        groups=np.array([str(g) for g in groups], dtype=object),
    )


def _progress_values(prepared: PreparedCorpus, progress: str | Mapping[str, float]) -> np.ndarray:
    if isinstance(progress, str):
        if progress == "achievements":
            return prepared.seen_status.sum(axis=1).astype(np.float64)
        if progress == "env_return":
            return np.asarray(prepared.env_return, dtype=np.float64)
        raise WorkbenchError(
            f"unknown progress measure {progress!r}; use one of {list(PROGRESS_MEASURES)} "
            "or a mapping episode id -> value"
        )
    missing = [i for i in prepared.ids if i not in progress]
    if missing:
        raise WorkbenchError(f"the progress mapping has no value for episode(s) {missing[:5]}")
    values = np.array([float(progress[i]) for i in prepared.ids])
    if not np.isfinite(values).all():
        bad = [i for i, v in zip(prepared.ids, values) if not math.isfinite(v)]
        raise WorkbenchError(f"the progress of episode(s) {bad[:5]} is not a finite number")
    return values


#: Weight per resource slot (38,): the 16 inventory items, then the 22 achievement counts
#: (``core.reward_rule.slot_weights``, the rule's own table reading, under the search's name).
resource_slot_weights = slot_weights


def agreement(returns: np.ndarray, progress: np.ndarray, metric: str = "spearman") -> float:
    """Rank agreement of returns with progress: Spearman's rho or Kendall's tau-b
    (``workbench.analysis.alignment``). NaN when either is constant or there are fewer than 2 episodes."""
    if metric == "spearman":
        return float(spearman_rho(returns, progress))
    if metric == "kendall":
        return float(kendall_tau(returns, progress))
    raise WorkbenchError(f"unknown agreement metric {metric!r}; use one of {list(METRICS)}")


def overpay(returns: np.ndarray, progress: np.ndarray, named: np.ndarray) -> float:
    """How much more the ``named`` episodes earn per unit of progress than the others:
    (mean return / mean progress of named) / (same of the rest) - 1. 0.5 means paid 50% more per
    achievement. NaN when either side is empty or has no progress or no return to compare."""
    named = np.asarray(named, dtype=bool)
    if named.all() or not named.any():
        return float("nan")
    ours, theirs = progress[named].mean(), progress[~named].mean()
    if ours <= 0 or theirs <= 0:
        return float("nan")
    rate = returns[~named].mean() / theirs
    if rate <= 0:
        return float("nan")
    return float((returns[named].mean() / ours) / rate - 1.0)


@dataclass(frozen=True)
class Objective:
    """Agreement minus ``penalty`` * max(0, overpay of ``penalize``'s episodes) (0 when
    ``penalize`` is None). A NaN agreement (constant returns: nothing ranked) counts as 0, a
    NaN overpay as no overpay."""

    metric: str = "spearman"
    penalize: str | None = None
    penalty: float = 0.0

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise WorkbenchError(f"unknown agreement metric {self.metric!r}; use one of {list(METRICS)}")
        if not (math.isfinite(self.penalty) and self.penalty >= 0):
            raise WorkbenchError(f"the penalty must be a finite number >= 0, got {self.penalty}")

    def evaluate(self, returns: np.ndarray, progress: np.ndarray, groups: np.ndarray) -> dict[str, float]:
        """``value`` (what a search maximises), ``agreement`` and ``overpay`` of some episodes."""
        rank = agreement(returns, progress, self.metric)
        paid = overpay(returns, progress, groups == self.penalize) if self.penalize is not None else float("nan")
        value = (0.0 if math.isnan(rank) else rank) - self.penalty * (0.0 if math.isnan(paid) else max(0.0, paid))
        return {"value": value, "agreement": rank, "overpay": paid}
