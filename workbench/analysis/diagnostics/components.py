"""Per episode and component (kind, name): how often it paid, how much, and what its first payment was.

Kept as arrays (tables are built once, at the end), so a diagnosis stays cheap enough to
recompute on every slider move.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.data.episodes import Corpus
from workbench.scoring import Scores

__all__ = ["ComponentTotals", "EpisodeFacts", "component_totals", "episode_facts"]


@dataclass(frozen=True)
class EpisodeFacts:
    """Per episode (corpus order): ``ids``, ``group`` (the ``by`` column as text) and
    ``group_code`` (position of the group in ``groups``, first-seen order), ``counts`` (where the
    achievement counts come from: observed / logged / estimated), ``returns`` (shaped, after
    lambda) and ``achievements`` (distinct ones unlocked)."""

    by: str
    ids: np.ndarray
    group: np.ndarray
    group_code: np.ndarray
    groups: np.ndarray
    counts: np.ndarray
    returns: np.ndarray
    achievements: np.ndarray

    @property
    def estimated(self) -> np.ndarray:
        """Per episode: whether its achievement counts (and so its count shaping) are estimated."""
        return self.counts == "estimated"

    @property
    def scale(self) -> np.ndarray:
        """|return| per episode, NaN where it is 0 (what shares of an episode's return divide by)."""
        magnitude = np.abs(self.returns)
        return np.where(magnitude > 0, magnitude, np.nan)


def episode_facts(scores: Scores, corpus: Corpus, by: str) -> EpisodeFacts:
    """The per-episode facts a diagnosis needs. Raises ``KeyError`` when ``corpus.index`` has
    no column ``by``."""
    ids = scores.episodes["episode"].to_numpy(dtype=object)
    group = corpus.groups(by).reindex(ids).to_numpy(dtype=object)
    codes, groups = pd.factorize(group)
    counts = corpus.index.set_index("episode")["counts"].reindex(ids).fillna("observed").to_numpy(dtype=object)
    return EpisodeFacts(
        by=by,
        ids=ids,
        group=group,
        group_code=codes,
        groups=np.asarray(groups, dtype=object),
        counts=counts,
        returns=scores.reward_sum,
        achievements=scores.episodes["unique_achievements_total"].to_numpy(),
    )


@dataclass(frozen=True)
class ComponentTotals:
    """One entry per (episode, kind, name) that paid at least once, sorted by episode position,
    then kind and name in the order a decision lists them.

    ``episode`` (position), ``kind`` / ``name`` (codes into ``kinds`` / ``names``),
    ``times_paid`` (components: decisions it paid on), ``units`` (summed rises; 1 per credit),
    ``paid`` (summed reward after lambda), ``magnitude`` (summed |reward| after lambda: what
    shares are taken of, so a negative weight cannot cancel a positive one) and ``first_paid``
    (reward after lambda of its first payment in the episode).
    """

    episode: np.ndarray
    kind: np.ndarray
    name: np.ndarray
    times_paid: np.ndarray
    units: np.ndarray
    paid: np.ndarray
    magnitude: np.ndarray
    first_paid: np.ndarray
    kinds: np.ndarray
    names: np.ndarray

    @property
    def repeat_paid(self) -> np.ndarray:
        """What it paid beyond its first payment."""
        return self.paid - self.first_paid

    def kind_is(self, *kinds: str) -> np.ndarray:
        """Mask of the entries of the given kinds."""
        return np.isin(self.kinds[self.kind], kinds)


def component_totals(scores: Scores) -> ComponentTotals:
    """Sum ``scores.components`` per (episode, kind, name)."""
    components = scores.components
    episode = components["episode"].cat.codes.to_numpy().astype(np.int64)
    kind = components["kind"].cat.codes.to_numpy().astype(np.int64)
    name = components["name"].cat.codes.to_numpy().astype(np.int64)
    kinds = np.asarray(components["kind"].cat.categories, dtype=object)
    names = np.asarray(components["name"].cat.categories, dtype=object)
    key = (episode * len(kinds) + kind) * len(names) + name
    scaled = components["scaled"].to_numpy()
    # Components are listed by decision within an episode, so a key's first occurrence is its
    # first payment; np.unique returns the keys sorted, i.e. by (episode, kind, name).
    keys, first_at, inverse = np.unique(key, return_index=True, return_inverse=True)
    size = len(keys)
    return ComponentTotals(
        episode=episode[first_at],
        kind=kind[first_at],
        name=name[first_at],
        times_paid=np.bincount(inverse, minlength=size).astype(np.int64),
        units=np.bincount(inverse, weights=components["delta"].to_numpy(), minlength=size).astype(np.int64),
        paid=np.bincount(inverse, weights=scaled, minlength=size),
        magnitude=np.bincount(inverse, weights=np.abs(scaled), minlength=size),
        first_paid=scaled[first_at],
        kinds=kinds,
        names=names,
    )
