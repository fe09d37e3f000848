"""Reward distances that ignore potential shaping: EPIC, STARC (value-adjusted) and SRRD, with a coverage report.

``reward_distance(corpus, config_a, config_b, kind)`` compares two configs' rewards over the
corpus's transitions (``workbench.analysis.distances.corpus``); the canonicalisations and
distances themselves are numpy functions of any reward of state pairs
(``workbench.analysis.distances.canonical``). ``workbench compare A B CORPUS --distance
epic|starc|srrd`` prints one beside the comparison.
"""

from workbench.analysis.distances.canonical import (
    Reward,
    epic_canonical,
    pearson_distance,
    srrd_canonical,
    srrd_pairs,
    starc_canonical,
    starc_distance,
    successor_samples,
)
from workbench.analysis.distances.corpus import (
    DEFAULT_GAMMA,
    DISTANCES,
    Coverage,
    Distance,
    DistanceSpread,
    distance_spread,
    pair_reward,
    reward_distance,
)

__all__ = [
    "DEFAULT_GAMMA",
    "DISTANCES",
    "Coverage",
    "Distance",
    "DistanceSpread",
    "Reward",
    "distance_spread",
    "epic_canonical",
    "pair_reward",
    "pearson_distance",
    "reward_distance",
    "srrd_canonical",
    "srrd_pairs",
    "starc_canonical",
    "starc_distance",
    "successor_samples",
]
