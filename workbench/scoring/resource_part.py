"""The part of a score that only the resource weights change, kept per prepared corpus for the next re-score."""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from workbench.core.reward_rule import RewardRule
from workbench.scoring.prepare import PreparedCorpus


@dataclass(frozen=True)
class ResourcePart:
    """What one strategy and one set of resource weights pay on a prepared corpus, before the
    achievement credits (read-only arrays, shared by every ``Scores`` that uses them).

    A decision that unlocks nothing has base = 0.0 + its resource reward, which is its resource
    reward bit for bit (the resource sum starts at 0.0, so it is never -0.0), and its indicator
    is ``resource > 0``; a decision that unlocks something has indicator 1 whatever it pays. So
    the indicator, its per-episode sums and the resource reward do not depend on the achievement
    weights or k-limits: a weight slider's re-score recomputes only the credits.

    Attributes:
        gain: Per resource gain, weight * delta (G; empty under consistent).
        resource: Resource reward per active decision (A; zeros under consistent).
        indicator: int32 indicator per active decision (A).
        resource_reward: Resource reward per episode (E; zeros under consistent).
        indicator_sum: Indicators per episode, as floats (E).
    """

    gain: np.ndarray
    resource: np.ndarray
    indicator: np.ndarray
    resource_reward: np.ndarray
    indicator_sum: np.ndarray


#: One part per prepared corpus: the last strategy and resource weights it was scored with (a
#: weight slider keeps them; another set is computed again, in the time a first score takes).
_LAST: weakref.WeakKeyDictionary[PreparedCorpus, tuple[bytes, ResourcePart]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def resource_part(prepared: PreparedCorpus, rule: RewardRule, slots: np.ndarray) -> ResourcePart:
    """The ``ResourcePart`` of ``prepared`` under a rule and resource weights, computed once
    for the last ones asked for.

    Args:
        prepared: The prepared corpus.
        rule: The config's rule (a rule without resource shaping pays none).
        slots: The 38 resource weights (``rule.slot_pay``), read when the rule pays resources.

    Returns:
        The part (its arrays are read-only).
    """
    paid = rule.pays_resources
    key = (b"p" + slots.astype(np.float64).tobytes()) if paid else b"c"
    with _LOCK:
        held = _LAST.get(prepared)
    if held is not None and held[0] == key:
        return held[1]
    part = _compute(prepared, paid, slots)  # outside the lock: two sessions score at once
    with _LOCK:
        _LAST[prepared] = (key, part)
    return part


def _compute(prepared: PreparedCorpus, paid: bool, slots: np.ndarray) -> ResourcePart:
    active = len(prepared.active)
    e = prepared.n_episodes
    unlocking = prepared.active_unlocking
    gain: np.ndarray
    resource: np.ndarray
    indicator: np.ndarray
    resource_reward: np.ndarray
    if paid:
        gain = slots.take(prepared.gain_slot)
        gain *= prepared.gain_delta  # in place: each array allocated here is one more to fault in
        # bincount adds each decision's gains in order from 0.0, as the task app's running sum
        resource = np.bincount(prepared.gain_active, weights=gain, minlength=active).astype(np.float64, copy=False)
        indicator = np.greater(resource, 0)
        indicator |= unlocking
        resource_reward = np.bincount(prepared.active_episode, weights=resource, minlength=e)
    else:
        # no resource shaping (consistent): the indicator is whether the decision unlocked anything
        gain, resource, indicator, resource_reward = np.zeros(0), np.zeros(active), unlocking.copy(), np.zeros(e)
    # a count of 0/1 indicators: the same float sum, without a float per decision
    indicator_sum = np.bincount(prepared.active_episode[indicator], minlength=e).astype(np.float64)
    arrays = (gain, resource, indicator.astype(np.int32), resource_reward, indicator_sum)
    for array in arrays:
        array.flags.writeable = False
    return ResourcePart(*arrays)
