"""The learner's view: group advantages (GRPO, Dr.GRPO, RLOO, GDPO) and per-decision GAE credit of a config.

``learner_view(corpus, config)`` groups rollouts by seed (and policy version when the corpus
index has a ``policy_version`` column), computes what each estimator would feed the policy
gradient, and flags groups that give no gradient, groups whose advantage order contradicts
progress, and rollouts whose sign GDPO's per-component normalisation flips. The estimators are
plain numpy functions over arrays (``workbench.analysis.learner.estimators``,
``workbench.analysis.learner.credit``), usable on any rewards.
"""

from workbench.analysis.learner.credit import discounted_sums, gae
from workbench.analysis.learner.estimators import EPS, dr_grpo, gdpo, group_moments, grpo, rloo
from workbench.analysis.learner.pairs import discordant_pairs
from workbench.analysis.learner.view import METHODS, LearnerView, group_labels, learner_view

__all__ = [
    "EPS",
    "METHODS",
    "LearnerView",
    "discordant_pairs",
    "discounted_sums",
    "dr_grpo",
    "gae",
    "gdpo",
    "group_labels",
    "group_moments",
    "grpo",
    "learner_view",
    "rloo",
]
