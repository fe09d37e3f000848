"""Within-group pair counts: how often an advantage order contradicts progress, vectorised over groups."""

from __future__ import annotations

import numpy as np

__all__ = ["discordant_pairs"]


def discordant_pairs(
    advantage: np.ndarray, progress: np.ndarray, group: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group, the pairs of rollouts whose advantage order contradicts their progress order.

    A pair (i, j) of one group is *comparable* when their progress differs and *discordant*
    when ``(A_i - A_j) (p_i - p_j) < 0``: the learner pushes up the rollout that did less.

    Args:
        advantage: (E,) float, each rollout's advantage.
        progress: (E,) float, each rollout's progress (achievements unlocked, Crafter's reward).
        group: (E,) int, each rollout's group number (0 .. n_groups - 1).
        n_groups: the number of groups G.

    Returns:
        ``(discordant, comparable, example)``, each (G,): counts of discordant and comparable
        pairs, and per group one discordant pair's rollouts encoded ``i * E + j`` (i the rollout
        the learner favours, j the one with more progress), -1 when there is none.
    """
    n = len(group)
    order = np.argsort(group, kind="stable")
    sorted_group = group[order]
    size = np.bincount(group, minlength=n_groups)
    discordant = np.zeros(n_groups, dtype=np.int64)
    comparable = np.zeros(n_groups, dtype=np.int64)
    example = np.full(n_groups, -1, dtype=np.int64)
    for k in range(1, int(size.max(initial=0))):  # one pass per offset inside a group
        i, j = order[:-k], order[k:]
        same = sorted_group[:-k] == sorted_group[k:]
        i, j, g = i[same], j[same], sorted_group[:-k][same]
        dp = progress[i] - progress[j]
        bad = (advantage[i] - advantage[j]) * dp < 0
        comparable += np.bincount(g[dp != 0], minlength=n_groups)
        discordant += np.bincount(g[bad], minlength=n_groups)
        favoured = np.where(progress[i] < progress[j], i, j)[bad]
        better = np.where(progress[i] < progress[j], j, i)[bad]
        unset = example[g[bad]] < 0
        example[g[bad][unset]] = favoured[unset] * n + better[unset]
    return discordant, comparable, example
