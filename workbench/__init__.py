"""Crafter Reward Workbench: design the synth-ai task app's shaped rewards on recorded episodes.

The names most sessions need, importable from the top level::

    import workbench
    corpus = workbench.sample_corpus()
    config = workbench.RewardConfig.from_file("configs/recommended.yaml")
    scores = workbench.score(corpus, config)
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _installed_version

from workbench.core.config import ConfigError, RewardConfig
from workbench.core.episode_reward import score_episode
from workbench.core.reward import compute_stepwise_reward
from workbench.data.episodes import Corpus, Episode
from workbench.data.sample import sample_corpus
from workbench.data.storage import load_corpus
from workbench.scoring import compare, crafter_score, score, verify, verify_logged

try:
    __version__ = _installed_version("crafter-reward-workbench")
except PackageNotFoundError:  # a source checkout on sys.path that pip never installed
    __version__ = "0+unknown"

__all__ = [
    "__version__",
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
