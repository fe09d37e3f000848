"""Which episodes a search may fit on and which it keeps back: seeded splits stratified by policy.

The search fits weights on the *fit* episodes only (with cross-validation folds inside them to
choose the rest of the config) and reports its score on the *held-out* episodes, which no fit
and no trial ever sees. Splits are stratified (each group, e.g. each policy, is split in the
same proportion, so the held-out set is not all scripted episodes) and seeded (the same seed
gives the same split).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.errors import CorpusError, SearchError

__all__ = ["Split", "split_episodes", "stratified_folds"]


@dataclass(frozen=True)
class Split:
    """Fit and held-out episodes of one corpus, disjoint, each in corpus order.

    ``fit`` / ``held_out``: episode ids; ``groups``: id -> the group it was stratified by;
    ``seed``, ``held_out_fraction`` and ``stratify`` (the grouping column) say how it was made;
    ``unsplit_groups``: groups with a single episode, which all go to the fit side.
    """

    fit: tuple[str, ...]
    held_out: tuple[str, ...]
    groups: dict[str, str]
    seed: int
    held_out_fraction: float
    stratify: str
    unsplit_groups: tuple[str, ...] = ()

    def mask(self, ids: Sequence[str], side: str = "held_out") -> np.ndarray:
        """Boolean mask over ``ids`` of the episodes on ``side`` ("fit" or "held_out")."""
        if side not in ("fit", "held_out"):
            raise SearchError(f"side must be 'fit' or 'held_out', not {side!r}")
        chosen = set(getattr(self, side))
        return np.array([episode in chosen for episode in ids], dtype=bool)

    def table(self) -> dict[str, dict[str, int]]:
        """Per group, how many episodes each side holds: {group: {"fit": n, "held_out": m}}."""
        counts: dict[str, dict[str, int]] = {}
        for side in ("fit", "held_out"):
            for episode in getattr(self, side):
                entry = counts.setdefault(self.groups[episode], {"fit": 0, "held_out": 0})
                entry[side] += 1
        return counts


def split_episodes(
    ids: Sequence[str],
    groups: Sequence[str],
    *,
    held_out: float = 0.3,
    seed: int = 0,
    stratify: str = "policy",
) -> Split:
    """Split episodes into fit and held-out sets, stratified by ``groups`` and seeded.

    Each group of n >= 2 episodes sends round(held_out * n) of them to the held-out side,
    at least 1 and at most n - 1 (so every group is fitted on and checked); a group of one
    episode stays on the fit side (named in ``unsplit_groups``). Which episodes go is drawn
    from ``numpy.random.default_rng(seed)``, group by group in first-seen order.

    Raises ``CorpusError`` when the corpus is too small to split (fewer than 3 episodes, or no
    group of two) and ``ValueError`` for a fraction outside (0, 1) or mismatched lengths.
    """
    ids = [str(i) for i in ids]
    groups = [str(g) for g in groups]
    if len(ids) != len(groups):
        raise SearchError(f"one group per episode: {len(groups)} groups for {len(ids)} episodes")
    if not 0.0 < held_out < 1.0:
        raise SearchError(f"the held-out fraction must be in (0, 1), got {held_out}")
    if len(set(ids)) != len(ids):
        raise SearchError("episode ids must be unique")
    if len(ids) < 3:
        raise CorpusError(f"cannot split {len(ids)} episode(s) into fit and held-out sets: a search needs at least 3")
    rng = np.random.default_rng(seed)
    members: dict[str, list[int]] = {}
    for position, group in enumerate(groups):
        members.setdefault(group, []).append(position)
    chosen: set[int] = set()
    unsplit = []
    for group, positions in members.items():
        n = len(positions)
        if n < 2:
            unsplit.append(group)
            continue
        take = min(n - 1, max(1, round(held_out * n)))
        chosen.update(int(p) for p in rng.permutation(positions)[:take])
    if not chosen:
        raise CorpusError(
            f"cannot hold out any episode: every {stratify} group has a single episode "
            f"({', '.join(unsplit)}); record more episodes or stratify by another column"
        )
    return Split(
        fit=tuple(ids[p] for p in range(len(ids)) if p not in chosen),
        held_out=tuple(ids[p] for p in range(len(ids)) if p in chosen),
        groups=dict(zip(ids, groups)),
        seed=seed,
        held_out_fraction=held_out,
        stratify=stratify,
        unsplit_groups=tuple(unsplit),
    )


def stratified_folds(groups: Sequence[str], folds: int, *, seed: int = 0) -> np.ndarray:
    """A fold number (0 .. folds - 1) per item, stratified by ``groups`` and seeded.

    Items are shuffled within each group and dealt round-robin, the count carrying on from one
    group to the next, so every fold gets about the same number of items and of each group.
    ``folds`` is capped at the number of items. Raises ``ValueError`` for ``folds < 2`` or
    fewer than two items.
    """
    n = len(groups)
    if folds < 2:
        raise SearchError(f"cross-validation needs at least 2 folds, got {folds}")
    if n < 2:
        raise SearchError(f"cannot make folds of {n} item(s)")
    folds = min(folds, n)
    rng = np.random.default_rng(seed)
    members: dict[str, list[int]] = {}
    for position, group in enumerate(groups):
        members.setdefault(str(group), []).append(position)
    fold_of = np.empty(n, dtype=np.int64)
    dealt = 0
    for positions in members.values():
        for position in rng.permutation(positions):
            fold_of[position] = dealt % folds
            dealt += 1
    return fold_of
