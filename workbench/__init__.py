"""Crafter Reward Workbench: design the synth-ai task app's shaped rewards on recorded episodes.

The names most sessions need, importable from the top level::

    import workbench
    corpus = workbench.sample_corpus()
    config = workbench.RewardConfig.from_file("configs/recommended.yaml")
    scores = workbench.score(corpus, config)

Each name is imported on first use (PEP 562's module ``__getattr__``), so ``import workbench``
(and through it every ``workbench`` command's start-up, ``--help`` included) does not pay for
numpy, pandas and pyarrow before something needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.util.lazy_names import lazy_names

if TYPE_CHECKING:  # what the names below resolve to, for type checkers and readers
    from workbench.core.config import ConfigError, RewardConfig
    from workbench.core.episode_reward import score_episode
    from workbench.core.reward import compute_stepwise_reward
    from workbench.data.episodes import Corpus, Episode
    from workbench.data.sample import sample_corpus
    from workbench.data.storage import load_corpus
    from workbench.scoring import compare, crafter_score, score, verify, verify_logged

#: Each top-level name and the module it is imported from on first use.
_HOMES = {
    "ConfigError": "workbench.core.config",
    "RewardConfig": "workbench.core.config",
    "score_episode": "workbench.core.episode_reward",
    "compute_stepwise_reward": "workbench.core.reward",
    "Corpus": "workbench.data.episodes",
    "Episode": "workbench.data.episodes",
    "sample_corpus": "workbench.data.sample",
    "load_corpus": "workbench.data.storage",
    "compare": "workbench.scoring",
    "crafter_score": "workbench.scoring",
    "score": "workbench.scoring",
    "verify": "workbench.scoring",
    "verify_logged": "workbench.scoring",
}

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


def __getattr__(name: str) -> Any:
    """The top-level name ``name``, imported from its home module (then cached here).

    Raises:
        AttributeError: ``name`` is not one of the package's top-level names.
    """
    if name == "__version__":
        return _version()
    return _named(name)


_named = lazy_names(__name__, _HOMES)


def _version() -> str:
    """The installed distribution's version (``importlib.metadata`` costs ~20 ms: read on first use)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("crafter-reward-workbench")
    except PackageNotFoundError:  # a source checkout on sys.path that pip never installed
        found = "0+unknown"
    globals()["__version__"] = found
    return found


def __dir__() -> list[str]:
    """The module's names, the lazily imported ones included."""
    return sorted({*globals(), *_HOMES, "__version__"})
