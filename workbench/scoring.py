"""The stepwise reward over whole corpora, vectorised: what a table would pay, decision by decision.

``score(corpus, config)`` gives the same numbers as ``workbench.rollout.score_episode`` run on
every episode (the reference, one ``compute_stepwise_reward`` call per decision), as three tidy
tables (``Scores.components``, ``Scores.decisions``, ``Scores.episodes``), without a Python loop
per decision. Floats are summed in the task app's order (``np.bincount`` adds its weights
sequentially, starting from 0.0), so rewards match the reference bit for bit in practice; the
tests hold them to 1e-12.

The work splits in two:

- ``prepare(corpus) -> PreparedCorpus`` reads the episodes once and keeps everything that does
  not depend on a config: unlock events (which name, which decision, the per-episode ordinal of
  that name's unlocks), positive inventory and achievement-count deltas, Crafter's rewards,
  per-episode facts. It is cached per ``Corpus`` object, so a second ``score`` reuses it.
- ``score(prepared, config)`` recombines those arrays with the weights: a few gathers and
  ``bincount``s. The per-episode table is built at once; the large per-decision and
  per-component tables are built on first access, so a weight slider re-scores a million
  decisions in milliseconds.

Like ``score_episode``, scoring ignores ``config.active``: it answers "what would this table
pay", and lint says when the task app would not shape at all.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Sequence

import numpy as np
import pandas as pd

from workbench.config import RewardConfig
from workbench.episodes import Corpus, Episode
from workbench.reward import INDICATOR_COMPONENT_NAME, PER_ACHIEVEMENT, coerce_k_limits, coerce_weights
from workbench.tables import ACHIEVEMENTS, INVENTORY_ITEMS, ResourceWeights

__all__ = [
    "Comparison",
    "PreparedCorpus",
    "Scores",
    "compare",
    "crafter_score",
    "prepare",
    "score",
    "success_rates",
    "verify_logged",
]

N_ACHIEVEMENTS = len(ACHIEVEMENTS)
N_ITEMS = len(INVENTORY_ITEMS)
#: Component kinds, in the order a decision lists them.
KINDS = ("indicator", "achievement", "inventory", "achievement_count")
#: Every component name: the indicator, then achievements (codes 1..22), then items (23..38).
COMPONENT_NAMES = (INDICATOR_COMPONENT_NAME, *ACHIEVEMENTS, *INVENTORY_ITEMS)
_ACHIEVEMENT_CODE0 = 1
_ITEM_CODE0 = 1 + N_ACHIEVEMENTS
#: Decisions read per batch in ``prepare``: small enough that the temporary state arrays (~8 MB)
#: stay in cache and are reused between batches (measured fastest at 1 << 14 .. 1 << 15).
_BATCH_DECISIONS = 1 << 15
#: |logged - recomputed| above which ``verify_logged`` reports a float field.
VERIFY_TOLERANCE = 1e-9


# -- preparation (weight-independent) ---------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PreparedCorpus:
    """Everything scoring needs from a corpus that no config changes. Arrays are read-only.

    Decisions are numbered globally (episode after episode, in corpus order).

    Per episode (E): ``ids``, ``starts`` (global index of the first decision), ``lengths``
    (decisions), ``steps`` (env steps, from ``corpus.index``), ``env_return``,
    ``new_achievements_total``, and (E, 22) bool ``reset_status`` / ``final_status`` /
    ``ever_status`` / ``seen_status``: true after reset, at the end, in some state after reset,
    and seen by the rollout (true after reset or unlocked at some decision).
    Per decision (N): ``episode_of`` (episode position), ``decision`` (1-based within its
    episode), ``env_reward``, ``n_unlocked`` (names turning true), ``n_first`` (names unlocked
    for the first time this episode: the rollout's ``unique_delta``).
    Unlock events (U, by decision then Crafter order, which is the status map's order):
    ``unlock_decision``, ``unlock_name`` (0..21), ``unlock_ordinal`` (earlier unlocks of the same
    name in the episode), ``unlock_first``.
    Resource gains (G, by decision, inventory items then counts, each in Crafter order):
    ``gain_decision``, ``gain_slot`` (0..15 item, 16..37 achievement count: the order in which
    a decision lists its resource components), ``gain_delta`` (> 0).
    Active decisions (A), the only ones that can pay or set the indicator (something unlocked
    or rose): ``active`` (sorted global indices), ``active_episode``, ``active_unlocking``; and
    each unlock's and gain's position among them, ``unlock_active`` and ``gain_active``.
    """

    ids: tuple[str, ...]
    starts: np.ndarray
    lengths: np.ndarray
    steps: np.ndarray
    env_return: np.ndarray
    reset_status: np.ndarray
    final_status: np.ndarray
    ever_status: np.ndarray
    seen_status: np.ndarray
    episode_of: np.ndarray
    decision: np.ndarray
    env_reward: np.ndarray
    n_unlocked: np.ndarray
    n_first: np.ndarray
    unlock_decision: np.ndarray
    unlock_name: np.ndarray
    unlock_ordinal: np.ndarray
    unlock_first: np.ndarray
    gain_decision: np.ndarray
    gain_slot: np.ndarray
    gain_delta: np.ndarray
    active: np.ndarray
    active_episode: np.ndarray
    active_unlocking: np.ndarray
    unlock_active: np.ndarray
    gain_active: np.ndarray
    new_achievements_total: np.ndarray
    _names: dict[str, list[list[str]]] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        return (f"<PreparedCorpus: {self.n_episodes} episodes, {self.n_decisions} decisions, "
                f"{len(self.unlock_name)} unlocks, {len(self.gain_slot)} resource gains>")

    @property
    def n_episodes(self) -> int:
        return len(self.ids)

    @property
    def n_decisions(self) -> int:
        return len(self.episode_of)

    def name_lists(self, status: str) -> list[list[str]]:
        """Per episode, the names true in a per-episode status array (``"final_status"``,
        ``"seen_status"``, ...), sorted as the rollout's summary lists them."""
        if status not in self._names:
            rows, columns = np.nonzero(getattr(self, status))
            names = np.array(ACHIEVEMENTS, dtype=object)[columns]
            bounds = np.cumsum(np.bincount(rows, minlength=self.n_episodes))[:-1]
            self._names[status] = [part.tolist() for part in np.split(names, bounds)]
        return [list(names) for names in self._names[status]]

    def episode_column(self, episode_of: np.ndarray) -> pd.Categorical:
        """Episode ids for rows given by episode position: categorical, so a million rows cost
        a million small ints rather than a million strings."""
        return pd.Categorical.from_codes(episode_of, categories=pd.Index(self.ids, dtype=object))


_PREPARED: "weakref.WeakKeyDictionary[Corpus, PreparedCorpus]" = weakref.WeakKeyDictionary()


def prepare(corpus: Corpus) -> PreparedCorpus:
    """The weight-independent arrays of ``corpus``, computed once per ``Corpus`` object.

    The cache holds the corpus weakly and assumes its episodes are not modified in place
    (build a new ``Corpus`` after editing episodes). Raises ``ValueError`` for an empty corpus
    or an episode without decisions.
    """
    cached = _PREPARED.get(corpus)
    if cached is None:
        cached = _PREPARED[corpus] = _prepare(corpus)
    return cached


def _prepare(corpus: Corpus) -> PreparedCorpus:
    if len(corpus) == 0:
        raise ValueError("cannot score an empty corpus: it has no episodes")
    steps = corpus.index["steps"].to_numpy(dtype=np.int64)
    batches: list[dict[str, Any]] = []
    batch: list[Episode] = []
    batch_decisions = first_decision = first_episode = 0
    for episode in corpus:
        if episode.n_decisions == 0:
            raise ValueError(f"episode {episode.id!r} has no decisions; every scored episode needs at least one")
        batch.append(episode)
        batch_decisions += episode.n_decisions
        if batch_decisions >= _BATCH_DECISIONS:
            batches.append(_prepare_batch(batch, first_decision, first_episode))
            first_decision, first_episode = first_decision + batch_decisions, first_episode + len(batch)
            batch, batch_decisions = [], 0
    if batch:
        batches.append(_prepare_batch(batch, first_decision, first_episode))
    joined = {key: np.concatenate([b[key] for b in batches]) for key in batches[0] if key != "ids"}
    joined.update(_active_decisions(joined))
    for array in joined.values():
        array.flags.writeable = False
    return PreparedCorpus(ids=tuple(i for b in batches for i in b["ids"]), steps=steps, **joined)


def _prepare_batch(episodes: Sequence[Episode], first_decision: int, first_episode: int) -> dict[str, Any]:
    """The prepared arrays of some whole episodes, their decisions numbered from ``first_decision``.

    The episodes' states are stacked into one array per kind (row ``row_starts[k]`` is episode
    k's reset state), so each decision is the transition between two consecutive rows; the
    transitions from one episode's last row to the next one's reset row are dropped.
    """
    lengths = np.array([e.n_decisions for e in episodes], dtype=np.int64)
    n, e = int(lengths.sum()), len(episodes)
    row_starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]])
    row_ends = row_starts + lengths  # last state row of each episode
    decision_of = np.arange(n + e - 1, dtype=np.int64)  # transition row -> local decision, -1 across episodes
    decision_of -= np.repeat(np.arange(e), lengths + 1)[:-1]
    decision_of[row_ends[:-1]] = -1
    local_episode = np.repeat(np.arange(e, dtype=np.int64), lengths)
    status = np.concatenate([ep.achievement_status for ep in episodes])

    # Unlocks: status truthy now and not before, per name (reward.md step 1), listed by
    # decision, then in the status map's (Crafter's) order.
    rows, names, _ = _transitions(status[1:] & ~status[:-1], decision_of)
    ordinal = _group_ordinal(local_episode[rows] * N_ACHIEVEMENTS + names)
    reset_status, final_status = status[row_starts], status[row_ends]
    # Seen by the rollout = true after reset or unlocked before; an unlock is new to it exactly
    # when it is the name's first unlock this episode and the name was not true at reset.
    first = (ordinal == 0) & ~reset_status[local_episode[rows], names]
    seen = reset_status.copy()
    seen[local_episode[rows], names] = True
    # Rows after reset, per episode: reduceat over [start + 1, next start) and the reset rows between.
    segments = np.empty(2 * e - 1, dtype=np.int64)
    segments[0::2], segments[1::2] = row_starts + 1, row_starts[1:]
    ever_status = np.logical_or.reduceat(status, segments, axis=0)[0::2]

    gain_rows, gain_slots, gain_deltas = _resource_gains(episodes, decision_of)
    starts = first_decision + np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return {
        "ids": [ep.id for ep in episodes],
        "starts": starts,
        "lengths": lengths,
        "env_return": np.array([ep.env_return for ep in episodes], dtype=np.float64),
        "reset_status": reset_status,
        "final_status": final_status,
        "ever_status": ever_status,
        "seen_status": seen,
        "episode_of": (local_episode + first_episode).astype(np.int32),
        "decision": (np.arange(n, dtype=np.int64) - np.repeat(starts - first_decision, lengths) + 1).astype(np.int32),
        "env_reward": np.concatenate([ep.env_reward for ep in episodes]),
        "n_unlocked": np.bincount(rows, minlength=n).astype(np.int32),
        "n_first": np.bincount(rows[first], minlength=n).astype(np.int32),
        "unlock_decision": rows + first_decision,
        "unlock_name": names.astype(np.int8),
        "unlock_ordinal": ordinal,
        "unlock_first": first,
        "gain_decision": gain_rows + first_decision,
        "gain_slot": gain_slots,
        "gain_delta": gain_deltas,
    }


def _active_decisions(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The decisions where something unlocked or rose, and where each event falls among them."""
    happened = np.zeros(len(arrays["episode_of"]), dtype=bool)
    happened[arrays["unlock_decision"]] = True
    happened[arrays["gain_decision"]] = True
    active = np.flatnonzero(happened)
    return {
        "active": active,
        "active_episode": arrays["episode_of"][active],
        "active_unlocking": arrays["n_unlocked"][active] > 0,
        "unlock_active": np.searchsorted(active, arrays["unlock_decision"]),
        "gain_active": np.searchsorted(active, arrays["gain_decision"]),
        "new_achievements_total": np.bincount(arrays["episode_of"], weights=arrays["n_unlocked"],
                                              minlength=len(arrays["lengths"])).astype(np.int64),
    }


def _transitions(mask: np.ndarray, decision_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(decision, column, flat index) of the true cells of a (transitions, columns) mask,
    row-major (by decision, then column), dropping transitions between episodes. A flat scan is
    several times faster than a 2-D ``nonzero``."""
    flat = np.flatnonzero(mask)
    transition, column = np.divmod(flat, mask.shape[1])
    decision = decision_of[transition]
    keep = decision >= 0
    return decision[keep], column[keep], flat[keep]


def _group_ordinal(keys: np.ndarray) -> np.ndarray:
    """For each element, how many earlier elements carry the same key (a vectorised cumcount)."""
    order = np.argsort(keys, kind="stable")
    ranked = keys[order]
    position = np.arange(len(keys))
    new_group = np.ones(len(keys), dtype=bool)
    new_group[1:] = ranked[1:] != ranked[:-1]
    group_start = np.maximum.accumulate(np.where(new_group, position, 0))
    ordinal = np.empty(len(keys), dtype=np.int32)
    ordinal[order] = position - group_start
    return ordinal


def _resource_gains(episodes: Sequence[Episode], decision_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positive inventory and achievement-count deltas: (decision, slot, delta) listed by
    decision, inventory items before counts, each in Crafter order (the task app's order)."""
    parts = []
    for slot0, attribute in ((0, "inventory"), (N_ITEMS, "achievement_counts")):
        states = np.concatenate([getattr(ep, attribute) for ep in episodes])
        rows, columns, flat = _transitions(states[1:] > states[:-1], decision_of)
        # Deltas only where something rose (a small fraction of the cells).
        deltas = states[1:].ravel()[flat] - states[:-1].ravel()[flat]
        parts.append((rows, columns + slot0, deltas))
    rows = np.concatenate([p[0] for p in parts])
    order = np.argsort(rows, kind="stable")  # stable: inventory stays before counts per decision
    return (
        rows[order],
        np.concatenate([p[1] for p in parts])[order].astype(np.int8),
        np.concatenate([p[2] for p in parts])[order].astype(np.int32),
    )


# -- scoring (per config) ---------------------------------------------------------------------
def _as_prepared(corpus: Corpus | PreparedCorpus) -> PreparedCorpus:
    return corpus if isinstance(corpus, PreparedCorpus) else prepare(corpus)


def achievement_weights(config: RewardConfig) -> np.ndarray:
    """Credit weight per achievement (Crafter order): ``weights.get(name, 1.0)`` after the task
    app's coercion (a config built in code may hold values ``from_dict`` would have dropped)."""
    weights = coerce_weights(dict(config.weights))
    return np.array([weights.get(name, 1.0) for name in ACHIEVEMENTS], dtype=np.float64)


def achievement_limits(config: RewardConfig) -> np.ndarray:
    """k-limit per achievement (Crafter order): ``k_limits.get(name, 1)`` after the task app's
    coercion; <= 0 is unlimited."""
    limits = coerce_k_limits(dict(config.k_limits))
    return np.array([limits.get(name, 1) for name in ACHIEVEMENTS], dtype=np.int64)


def slot_weights(resource: ResourceWeights) -> np.ndarray:
    """Resource weight per slot: the 16 inventory items, then the 22 achievement counts."""
    return np.array(
        [resource.inventory_weight(item) for item in INVENTORY_ITEMS]
        + [resource.achievement_count_weight(name) for name in ACHIEVEMENTS],
        dtype=np.float64,
    )


def credited_unlocks(ordinal: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Whether each unlock earns a credit. The name's earlier credits (the task app's
    ``prior``) are min(ordinal, limit): every earlier unlock was credited until the limit was
    reached. So ``prior < limit`` is ``ordinal < limit``; a limit <= 0 credits every unlock.
    For a credited unlock min(ordinal, limit) is the ordinal itself: its ``count_prior``."""
    return (limit <= 0) | (ordinal < limit)


def score(corpus: Corpus | PreparedCorpus, config: RewardConfig) -> "Scores":
    """What ``config`` pays on every decision of ``corpus`` (a ``Corpus`` or ``prepare(corpus)``).

    Equal, decision by decision and component by component, to ``rollout.score_episode`` on
    each episode. Raises ``ValueError`` for an empty corpus.
    """
    prepared = _as_prepared(corpus)
    active = len(prepared.active)
    if config.effective_strategy == PER_ACHIEVEMENT:
        limit = achievement_limits(config)[prepared.unlock_name]
        credited = credited_unlocks(prepared.unlock_ordinal, limit)
        credit = achievement_weights(config)[prepared.unlock_name[credited]]
        gain = slot_weights(config.resource_weights)[prepared.gain_slot] * prepared.gain_delta
        credit_sum = np.bincount(prepared.unlock_active[credited], weights=credit, minlength=active)
        resource = np.bincount(prepared.gain_active, weights=gain, minlength=active)
        base = credit_sum + resource  # credits first, then the resource reward (reward.md)
    else:
        # consistent: 1.0 for a decision that unlocked anything, no per-name credits or resources.
        credited = np.zeros(len(prepared.unlock_name), dtype=bool)
        gain = np.zeros(0)
        resource = np.zeros(active)
        base = prepared.active_unlocking.astype(np.float64)
    indicator = (prepared.active_unlocking | (base > 0)).astype(np.int32)
    return Scores(prepared, config, base, resource, indicator, credited, gain)


class Scores:
    """One config's rewards over one corpus, as tidy tables.

    - ``episodes``: a row per episode, the rollout's ``metrics.details["stepwise"]`` numbers
      (``indicator_sum``, ``reward_sum`` = the shaped return, ``resource_reward``,
      ``new_achievements_total``, ``unique_achievements_total``, ``unique_achievements``,
      ``final_achievements``) with ``decisions``, ``steps`` and Crafter's ``env_return``.
      ``summary(episode)`` gives the exact summary dict, config echo included.
    - ``decisions``: a row per decision (built on first access).
    - ``components``: a row per reward component, in the task app's order (first access).
    - ``unlocks``: a row per unlock event, with whether this config credits it (first access).
    - ``contributions``: total reward per component (kind, name) over the corpus.
    Rewards before lambda are ``reward`` in components, ``base`` in decisions; after lambda
    ``scaled`` and ``reward``. Arrays (``reward``, ``base``, ``indicator``, ``resource``) are
    per decision, in corpus order; ``reward_sum`` per episode.
    """

    def __init__(
        self,
        prepared: PreparedCorpus,
        config: RewardConfig,
        base: np.ndarray,
        resource: np.ndarray,
        indicator: np.ndarray,
        credited: np.ndarray,
        gain: np.ndarray,
    ) -> None:
        # Per *active* decision (``prepared.active``): the others pay 0 and have indicator 0.
        self.prepared = prepared
        self.config = config
        self._base = base
        self._reward = config.effective_lambda * base
        self._resource = resource
        self._indicator = indicator
        self._credited = credited
        self._gain = gain
        episode_of = prepared.active_episode
        e = prepared.n_episodes
        # bincount adds each episode's values in decision order from 0.0, as the rollout sums
        # them; skipping inactive decisions skips only zeros.
        self.reward_sum = np.bincount(episode_of, weights=self._reward, minlength=e)
        self.episodes = pd.DataFrame({
            "episode": list(prepared.ids),
            "decisions": prepared.lengths,
            "steps": prepared.steps,
            "env_return": prepared.env_return,
            "reward_sum": self.reward_sum,
            "indicator_sum": np.bincount(episode_of, weights=indicator, minlength=e),
            "resource_reward": np.bincount(episode_of, weights=resource, minlength=e),
            "new_achievements_total": prepared.new_achievements_total,
            "unique_achievements_total": prepared.seen_status.sum(axis=1).astype(np.int64),
            "unique_achievements": prepared.name_lists("seen_status"),
            "final_achievements": prepared.name_lists("final_status"),
        })

    # -- per-decision arrays (corpus order), scattered from the active decisions on first use --
    @cached_property
    def reward(self) -> np.ndarray:
        """Reward per decision, after lambda."""
        # A decision that paid nothing is lambda * 0.0 in the task app: -0.0 for a negative lambda.
        return self._per_decision(self._reward, fill=self.config.effective_lambda * 0.0)

    @cached_property
    def base(self) -> np.ndarray:
        """Base reward per decision, before lambda."""
        return self._per_decision(self._base)

    @cached_property
    def resource(self) -> np.ndarray:
        """Resource reward per decision (per_achievement; 0 under consistent)."""
        return self._per_decision(self._resource)

    @cached_property
    def indicator(self) -> np.ndarray:
        """Indicator per decision: 1 when it unlocked anything or its base is positive."""
        return self._per_decision(self._indicator)

    def _per_decision(self, active_values: np.ndarray, fill: float = 0) -> np.ndarray:
        values = np.full(self.prepared.n_decisions, fill, dtype=active_values.dtype)
        values[self.prepared.active] = active_values
        return values

    def __repr__(self) -> str:
        p = self.prepared
        return (f"<Scores: {self.config.effective_strategy}, {p.n_episodes} episodes, {p.n_decisions} decisions, "
                f"shaped return {self.reward_sum.sum():.4g}>")

    @property
    def per_achievement(self) -> bool:
        return self.config.effective_strategy == PER_ACHIEVEMENT

    # -- the rollout's summary -----------------------------------------------------------------
    def summary(self, episode: str) -> dict[str, Any]:
        """``metrics.details["stepwise"]`` of one episode, keys and types as the rollout's."""
        row = self.episodes.iloc[self.prepared.ids.index(episode)]
        config = self.config
        summary: dict[str, Any] = {
            "indicator_sum": float(row["indicator_sum"]),
            "reward_sum": float(row["reward_sum"]),
            "resource_reward": float(row["resource_reward"]),
            "new_achievements_total": int(row["new_achievements_total"]),
            "mode": str(config.mode or "off").lower(),
            "strategy": config.effective_strategy,
            "indicator_lambda": float(config.indicator_lambda),
        }
        if config.step_beta:
            summary["step_beta"] = float(config.step_beta)
        if self.per_achievement:
            if config.weights:
                summary["weights"] = dict(config.weights)
            if config.k_limits:
                summary["k_limits"] = dict(config.k_limits)
        summary["unique_achievements_total"] = int(row["unique_achievements_total"])
        summary["unique_achievements"] = list(row["unique_achievements"])
        summary["final_achievements"] = list(row["final_achievements"])
        return summary

    def totals(self) -> dict[str, Any]:
        """Corpus totals of the episode table's numeric columns, plus episode count."""
        numeric = self.episodes.drop(columns=["episode", "unique_achievements", "final_achievements"])
        return {"episodes": len(self.episodes), **{k: numeric[k].sum().item() for k in numeric.columns}}

    # -- large tables, built on first access ---------------------------------------------------
    @cached_property
    def decisions(self) -> pd.DataFrame:
        """A row per decision: ``reward`` (after lambda), ``base``, ``indicator``,
        ``resource_reward``, ``new_achievements`` (names unlocked), ``credited`` (per-achievement
        credits), ``unique_new`` (unlocked for the first time this episode), Crafter's
        ``env_reward``, and running per-episode sums ``return`` (shaped) and ``env_return``."""
        p = self.prepared
        credited = np.bincount(p.unlock_decision[self._credited], minlength=p.n_decisions).astype(np.int32)
        # Small ints stay int32 (one block, half the memory traffic of int64 at a million rows).
        return pd.DataFrame({
            "episode": p.episode_column(p.episode_of),
            "decision": p.decision,
            "reward": self.reward,
            "base": self.base,
            "indicator": self.indicator,
            "resource_reward": self.resource,
            "new_achievements": p.n_unlocked,
            "credited": credited,
            "unique_new": p.n_first,
            "env_reward": p.env_reward,
            "return": _running_sums(self.reward, p.starts, p.lengths),
            "env_return": _running_sums(p.env_reward, p.starts, p.lengths),
        })

    @cached_property
    def unlocks(self) -> pd.DataFrame:
        """A row per unlock event: ``name``, ``ordinal`` (earlier unlocks of the name in the
        episode), ``first`` (new to the episode), ``credited`` and ``credit`` (before lambda)
        under this config; consistent credits no names (it pays the indicator instead)."""
        p = self.prepared
        credit = np.zeros(len(p.unlock_name))
        if self.per_achievement:
            credit[self._credited] = achievement_weights(self.config)[p.unlock_name[self._credited]]
        return pd.DataFrame({
            "episode": p.episode_column(p.episode_of[p.unlock_decision]),
            "decision": p.decision[p.unlock_decision],
            "name": pd.Categorical.from_codes(p.unlock_name, categories=list(ACHIEVEMENTS)),
            "ordinal": p.unlock_ordinal.astype(np.int64),
            "first": p.unlock_first,
            "credited": self._credited,
            "credit": credit,
        })

    @cached_property
    def components(self) -> pd.DataFrame:
        """A row per reward component, ordered as the task app lists them: by decision; within
        one, credits (unlock order), inventory items, achievement counts (Crafter order).

        ``kind``: indicator / achievement / inventory / achievement_count; ``delta`` the rise
        (1 for credits and the indicator); ``count_prior`` / ``count_limit`` as in the task
        app's component dicts (NA for resource components); ``reward`` before lambda (the
        weight for credits, weight * delta for resources), ``scaled`` after it.
        """
        return _components_table(self)

    @cached_property
    def contributions(self) -> pd.DataFrame:
        """Corpus totals per component (kind, name): ``count`` of components, ``reward``
        (before lambda) and ``scaled`` (after); only components that occur."""
        p = self.prepared
        lam = self.config.effective_lambda
        frames = []
        if self.per_achievement:
            names = p.unlock_name[self._credited]
            credit = achievement_weights(self.config)[names]
            frames.append(_totals_by(names, credit, lam, N_ACHIEVEMENTS, "achievement", ACHIEVEMENTS))
            items = p.gain_slot < N_ITEMS
            frames.append(_totals_by(p.gain_slot[items], self._gain[items], lam, N_ITEMS, "inventory", INVENTORY_ITEMS))
            counts = ~items
            frames.append(_totals_by(p.gain_slot[counts] - N_ITEMS, self._gain[counts], lam, N_ACHIEVEMENTS,
                                     "achievement_count", ACHIEVEMENTS))
        else:
            paid = int((p.n_unlocked > 0).sum())
            frames.append(pd.DataFrame({"kind": ["indicator"], "name": [INDICATOR_COMPONENT_NAME], "count": [paid],
                                        "reward": [float(paid)], "scaled": [lam * paid]}))
        table = pd.concat(frames, ignore_index=True)
        return table[table["count"] > 0].reset_index(drop=True)


def _running_sums(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Per-episode cumulative sums. One cumsum per episode (not one over the corpus minus
    offsets, which would carry the corpus total's rounding error into every episode)."""
    out = np.empty_like(values, dtype=np.float64)
    for start, length in zip(starts.tolist(), lengths.tolist()):
        np.cumsum(values[start:start + length], out=out[start:start + length])
    return out


def _totals_by(codes: np.ndarray, rewards: np.ndarray, lam: float, size: int, kind: str,
               names: Sequence[str]) -> pd.DataFrame:
    """Count, reward sum and scaled sum of components grouped by name code."""
    return pd.DataFrame({
        "kind": kind,
        "name": list(names),
        "count": np.bincount(codes, minlength=size),
        "reward": np.bincount(codes, weights=rewards, minlength=size),
        "scaled": np.bincount(codes, weights=lam * rewards, minlength=size),
    })


def _components_table(scores: Scores) -> pd.DataFrame:
    """The components of every decision (see ``Scores.components``)."""
    p = scores.prepared
    lam = scores.config.effective_lambda
    if scores.per_achievement:
        credited = scores._credited
        names = p.unlock_name[credited].astype(np.int64)
        limit = achievement_limits(scores.config)[names]
        credit = achievement_weights(scores.config)[names]
        credit_decision = p.unlock_decision[credited]
        gain_slot = p.gain_slot.astype(np.int64)
        is_item = gain_slot < N_ITEMS
        # Merge two decision-sorted lists without a sort: a credit goes before the gains of its
        # decision, a gain after the credits of its own decision.
        credit_at = np.arange(len(credit_decision)) + np.searchsorted(p.gain_decision, credit_decision, side="left")
        gain_at = np.arange(len(p.gain_decision)) + np.searchsorted(credit_decision, p.gain_decision, side="right")
        total = len(credit_at) + len(gain_at)
        decision = np.empty(total, dtype=np.int64)
        kind = np.empty(total, dtype=np.int8)
        name = np.empty(total, dtype=np.int64)
        delta = np.empty(total, dtype=np.int64)
        weight = np.empty(total)
        reward = np.empty(total)
        prior = np.zeros(total, dtype=np.int64)
        limits = np.zeros(total, dtype=np.int64)
        resource_row = np.zeros(total, dtype=bool)
        decision[credit_at], decision[gain_at] = credit_decision, p.gain_decision
        kind[credit_at], kind[gain_at] = KINDS.index("achievement"), np.where(
            is_item, KINDS.index("inventory"), KINDS.index("achievement_count"))
        name[credit_at] = names + _ACHIEVEMENT_CODE0
        name[gain_at] = np.where(is_item, gain_slot + _ITEM_CODE0, gain_slot - N_ITEMS + _ACHIEVEMENT_CODE0)
        delta[credit_at], delta[gain_at] = 1, p.gain_delta
        weight[credit_at], weight[gain_at] = credit, slot_weights(scores.config.resource_weights)[gain_slot]
        reward[credit_at], reward[gain_at] = credit, scores._gain
        prior[credit_at] = p.unlock_ordinal[credited]  # see credited_unlocks
        limits[credit_at] = limit
        resource_row[gain_at] = True
    else:
        decision = np.flatnonzero(p.n_unlocked > 0)
        total = len(decision)
        kind = np.full(total, KINDS.index("indicator"), dtype=np.int8)
        name = np.zeros(total, dtype=np.int64)
        delta = np.ones(total, dtype=np.int64)
        weight, reward = np.ones(total), np.ones(total)
        prior, limits = np.zeros(total, dtype=np.int64), np.ones(total, dtype=np.int64)
        resource_row = np.zeros(total, dtype=bool)
    return pd.DataFrame({
        "episode": p.episode_column(p.episode_of[decision]),
        "decision": p.decision[decision],
        "kind": pd.Categorical.from_codes(kind, categories=list(KINDS)),
        "name": pd.Categorical.from_codes(name, categories=list(COMPONENT_NAMES)),
        "delta": delta,
        "weight": weight,
        "count_prior": pd.arrays.IntegerArray(prior, resource_row),
        "count_limit": pd.arrays.IntegerArray(limits, resource_row.copy()),
        "reward": reward,
        "scaled": lam * reward,
    })


# -- two configs ------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Comparison:
    """Two configs over one corpus.

    - ``episodes``: per episode ``return_a`` / ``return_b`` (shaped returns), ``difference``
      (b - a), ``rank_a`` / ``rank_b`` (1 = highest return; ties share the best rank) and
      ``rank_change`` (rank_b - rank_a: negative means the episode moved up under b), with
      Crafter's ``env_return``.
    - ``achievements``: per component (``kind``, ``name``, ``component`` = "kind: name") the
      corpus total after lambda under each (``total_a``, ``total_b``) and ``difference``.
    ``a`` and ``b`` are the full ``Scores``.
    """

    episodes: pd.DataFrame
    achievements: pd.DataFrame
    a: Scores
    b: Scores

    def largest_changes(self, top: int = 12) -> pd.DataFrame:
        """The ``top`` rows of ``achievements`` with the largest absolute ``difference``,
        largest first (ties in component order)."""
        order = self.achievements["difference"].abs().sort_values(ascending=False, kind="stable").index
        return self.achievements.loc[order].head(top)


def compare(corpus: Corpus | PreparedCorpus, config_a: RewardConfig, config_b: RewardConfig) -> Comparison:
    """How two configs differ on ``corpus``: per-episode returns and ranks, per-component totals."""
    prepared = _as_prepared(corpus)
    a, b = score(prepared, config_a), score(prepared, config_b)
    returns = pd.DataFrame({"episode": list(prepared.ids), "env_return": prepared.env_return,
                            "return_a": a.reward_sum, "return_b": b.reward_sum})
    returns["difference"] = returns["return_b"] - returns["return_a"]
    for side in ("a", "b"):
        returns[f"rank_{side}"] = returns[f"return_{side}"].rank(ascending=False, method="min").astype(np.int64)
    returns["rank_change"] = returns["rank_b"] - returns["rank_a"]
    totals = pd.merge(
        a.contributions[["kind", "name", "scaled"]].rename(columns={"scaled": "total_a"}),
        b.contributions[["kind", "name", "scaled"]].rename(columns={"scaled": "total_b"}),
        on=["kind", "name"], how="outer", sort=False,
    ).fillna({"total_a": 0.0, "total_b": 0.0})
    totals.insert(2, "component", totals["kind"] + ": " + totals["name"])
    totals["difference"] = totals["total_b"] - totals["total_a"]
    return Comparison(returns, totals.sort_values(["kind", "name"], key=_kind_order).reset_index(drop=True), a, b)


def _kind_order(column: pd.Series) -> pd.Series:
    """Sort key: kinds in the order a decision lists them, names alphabetically."""
    return column.map(KINDS.index) if column.name == "kind" else column


# -- Crafter's score --------------------------------------------------------------------------
def success_rates(corpus: Corpus | PreparedCorpus) -> pd.DataFrame:
    """Per achievement (Crafter order): ``success_rate``, the percentage of episodes in which it
    was unlocked at least once (true in some state after reset), and ``episodes``, how many."""
    prepared = _as_prepared(corpus)
    unlocked = prepared.ever_status.sum(axis=0).astype(np.int64)
    return pd.DataFrame({
        "achievement": list(ACHIEVEMENTS),
        "success_rate": 100.0 * unlocked / prepared.n_episodes,
        "episodes": unlocked,
    })


def crafter_score(corpus: Corpus | PreparedCorpus) -> float:
    """Crafter's score in percent: exp(mean_i ln(1 + s_i)) - 1 over the 22 success rates s_i
    (percent), a geometric mean with a 1% offset (crafter.md)."""
    rates = success_rates(corpus)["success_rate"].to_numpy()
    return float(np.exp(np.mean(np.log1p(rates))) - 1.0)


# -- checking imported rollouts ---------------------------------------------------------------
#: Fields of a logged ``info.stepwise`` that ``verify_logged`` checks, with their defaults.
VERIFIED_FIELDS = ("reward", "base_reward", "indicator", "resource_reward", "new_achievements", "credited_achievements")


def verify_logged(corpus: Corpus) -> pd.DataFrame:
    """Decisions whose logged shaped reward the workbench does not reproduce.

    For every episode with ``episode.logged`` (imported task-app rollouts), re-scores it under
    the config it ran with (``RewardConfig.from_dict(logged["config"])``) and compares each
    decision's logged ``info.stepwise`` with the re-computation: ``reward``, ``base_reward``,
    ``resource_reward`` (to ``VERIFY_TOLERANCE``), ``indicator``, and the names in
    ``new_achievements`` / ``credited_achievements``. ``decision_index`` is not compared (the
    task app counts it through the whole rollout).

    Returns one row per decision where any of those differ: ``episode``, ``decision``,
    ``logged`` and ``recomputed`` reward, ``difference`` (recomputed - logged), ``fields``
    (the differing ones, comma-separated) and ``note`` (why a difference may come from the
    import rather than the reward: the first decision after a reset is scored against the
    previous episode's end, which a rollout with ``on_done = "reset"`` does not store, so the
    importer rebuilt it from logged rises and any loss in it is unknown); empty when everything
    matches. ``attrs`` say what
    was checked: ``episodes_checked``, ``decisions_checked``, ``skipped`` (episode -> why it
    was not checked: no log, no config in it), ``unchecked`` (decisions not compared, as
    (episode, decision, reason): no ``info.stepwise`` logged, or the first decision of an episode
    whose predecessor is not in the corpus) and ``carried_over`` (episodes whose first decision
    was re-scored against the previous episode's end, reward.md quirk 7: the task app does not
    reset its snapshots when a rollout resets, and importers name that episode in
    ``metadata["follows"]``).
    """
    skipped: dict[str, str] = {}
    unchecked: list[tuple[str, int, str]] = []
    carried_over: list[str] = []
    predecessor_missing: dict[str, str] = {}
    notes: dict[str, str] = {}  # episode -> why its first decision may not reproduce
    groups: dict[str, tuple[RewardConfig, list[Episode]]] = {}
    ids = set(corpus.ids)
    for episode in corpus:
        logged = episode.logged
        if not logged:
            skipped[episode.id] = "no task-app log"
            continue
        if not isinstance(logged.get("config"), dict):
            skipped[episode.id] = "the log holds no step_rewards config"
            continue
        follows = episode.metadata.get("follows")
        if follows in ids:
            previous = corpus[follows]
            episode = episode.following(previous)
            carried_over.append(episode.id)
            rebuilt = previous.metadata.get("terminal_state")
            if rebuilt:
                notes[episode.id] = f"scored against the end of {follows!r}, not stored by the rollout: {rebuilt}"
        elif follows is not None:
            predecessor_missing[episode.id] = follows
        config = RewardConfig.from_dict(logged["config"])
        key = json.dumps(config.to_dict(), sort_keys=True, default=str)
        groups.setdefault(key, (config, []))[1].append(episode)

    rows: list[dict[str, Any]] = []
    decisions_checked = 0
    for config, episodes in groups.values():
        scores = score(Corpus(episodes), config)
        names = _unlock_names(scores)
        for position, episode in enumerate(episodes):
            start = int(scores.prepared.starts[position])
            logged = list(episode.logged.get("stepwise") or [])
            for i in range(episode.n_decisions):
                stepwise = logged[i] if i < len(logged) else None
                if not isinstance(stepwise, dict):
                    unchecked.append((episode.id, i + 1, "no info.stepwise logged"))
                    continue
                if i == 0 and episode.id in predecessor_missing:
                    unchecked.append((episode.id, 1, f"scored by the task app against the end of "
                                                     f"{predecessor_missing[episode.id]!r}, not in this corpus"))
                    continue
                decisions_checked += 1
                mine = {
                    "reward": float(scores.reward[start + i]),
                    "base_reward": float(scores.base[start + i]),
                    "indicator": int(scores.indicator[start + i]),
                    "resource_reward": float(scores.resource[start + i]),
                    **names.get(start + i, {"new_achievements": [], "credited_achievements": []}),
                }
                differing = [f for f in VERIFIED_FIELDS if not _same(stepwise.get(f, _LOGGED_DEFAULTS.get(f)), mine[f])]
                if differing:
                    logged_reward = _number(stepwise.get("reward"))
                    rows.append({"episode": episode.id, "decision": i + 1, "logged": logged_reward,
                                 "recomputed": mine["reward"], "difference": mine["reward"] - logged_reward,
                                 "fields": ", ".join(differing), "note": notes.get(episode.id, "") if i == 0 else ""})
    table = pd.DataFrame(rows, columns=["episode", "decision", "logged", "recomputed", "difference", "fields", "note"])
    table = table.astype({"decision": np.int64, "logged": np.float64, "recomputed": np.float64, "difference": np.float64})
    table.attrs.update(
        episodes_checked=sum(len(e) for _, e in groups.values()),
        decisions_checked=decisions_checked,
        skipped=skipped,
        unchecked=unchecked,
        carried_over=carried_over,
    )
    return table


#: What a logged ``info.stepwise`` means by a missing optional key (reward.md: keys appear only
#: when non-empty / non-zero).
_LOGGED_DEFAULTS: dict[str, Any] = {"resource_reward": 0.0, "new_achievements": [], "credited_achievements": []}


def _unlock_names(scores: Scores) -> dict[int, dict[str, list[str]]]:
    """Per decision with unlocks: the names unlocked and the names credited (sorted)."""
    p = scores.prepared
    names: dict[int, dict[str, list[str]]] = {}
    for decision, name, credited in zip(p.unlock_decision.tolist(), p.unlock_name.tolist(), scores._credited.tolist()):
        entry = names.setdefault(decision, {"new_achievements": [], "credited_achievements": []})
        entry["new_achievements"].append(ACHIEVEMENTS[name])
        if credited:
            entry["credited_achievements"].append(ACHIEVEMENTS[name])
    return names


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _same(logged: Any, mine: Any) -> bool:
    """Whether a logged field equals the re-computed one (floats to ``VERIFY_TOLERANCE``,
    name lists as sets of names: the order is the logged observation's map order)."""
    if isinstance(mine, list):
        return isinstance(logged, list) and sorted(map(str, logged)) == sorted(mine)
    if isinstance(mine, int):
        return logged == mine
    value = _number(logged)
    return bool(abs(value - mine) <= VERIFY_TOLERANCE)
