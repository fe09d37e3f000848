"""Crafter Reward Workbench: design the synth-ai task app's shaped rewards on recorded episodes.

The names most sessions need, importable from the top level::

    import workbench
    corpus = workbench.sample_corpus()
    config = workbench.RewardConfig.from_file("configs/recommended.yaml")
    scores = workbench.score(corpus, config)
"""

from workbench.core.config import ConfigError, RewardConfig
from workbench.core.episode_reward import score_episode
from workbench.core.reward import compute_stepwise_reward
from workbench.data.episodes import Corpus, Episode
from workbench.data.sample import sample_corpus
from workbench.data.storage import load_corpus
from workbench.scoring import compare, crafter_score, score, verify, verify_logged

__all__ = [
    "ConfigError",
    "Corpus",
    "Episode",
    "RewardConfig",
    "compare",
    "compute_stepwise_reward",
    "crafter_score",
    "load_corpus",
    "sample_corpus",
    "score",
    "score_episode",
    "verify",
    "verify_logged",
]
