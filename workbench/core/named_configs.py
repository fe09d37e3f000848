"""The named starting configs (the task app's default among them), and reading a config by name or file."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from workbench.core.config import RewardConfig
from workbench.core.reward import CONSISTENT, PER_ACHIEVEMENT, STEPWISE_MODE
from workbench.errors import ConfigError

__all__ = [
    "CONSISTENT_CONFIG",
    "NAMED_CONFIGS",
    "PER_ACHIEVEMENT_CONFIG",
    "STARTING_CONFIG",
    "TASK_APP_DEFAULT",
    "NamedConfig",
    "load_config",
]


class NamedConfig(NamedTuple):
    """A starting config with the name it goes by everywhere (the app, the CLI, the env, search)."""

    name: str
    config: RewardConfig
    description: str


#: What the task app does with no step_rewards table (reward.md: enabled false, mode "off"): it
#: shapes nothing. ``RewardConfig.from_dict({})`` reads to exactly this.
TASK_APP_DEFAULT = NamedConfig(
    "task_app_default",
    RewardConfig.from_dict({}),
    "the task app with no step_rewards table: no shaping (enabled false, mode off)",
)
#: The stepwise reward switched on with nothing else chosen: the task app's default strategy
#: pays 1.0 for every decision that unlocks an achievement, lambda 1 (``configs/consistent.yaml``;
#: ``RewardConfig()`` and the env's ``config=None``).
CONSISTENT_CONFIG = NamedConfig(
    CONSISTENT,
    RewardConfig(enabled=True, mode=STEPWISE_MODE, strategy=CONSISTENT, indicator_lambda=1.0),
    "shaping on, consistent strategy, lambda 1: 1.0 for every decision that unlocks an achievement",
)
#: per_achievement with nothing else chosen: every achievement pays the task app's default
#: weight 1.0 once (k-limit 1), plus its uncapped resource shaping, lambda 1 (where the dashboard,
#: the Tuner and search start when given no config).
PER_ACHIEVEMENT_CONFIG = NamedConfig(
    PER_ACHIEVEMENT,
    RewardConfig(enabled=True, mode=STEPWISE_MODE, strategy=PER_ACHIEVEMENT, indicator_lambda=1.0),
    "shaping on, per_achievement, every weight 1 and k-limit 1 (the task app's defaults), lambda 1",
)
#: Where the dashboard, the Tuner and search start when given no config (per_achievement: every
#: lever of the reward is live).
STARTING_CONFIG = PER_ACHIEVEMENT_CONFIG
#: Every named starting config by name.
NAMED_CONFIGS = {named.name: named for named in (TASK_APP_DEFAULT, CONSISTENT_CONFIG, PER_ACHIEVEMENT_CONFIG)}


def load_config(spec: str | Path) -> RewardConfig:
    """The config ``spec`` names: a named starting config or a config file.

    A config file always has a suffix (.yaml, .yml, .toml), so a bare name never shadows one.

    Args:
        spec: a name of ``NAMED_CONFIGS`` (``task_app_default``, ``consistent``,
            ``per_achievement``) or the path of our YAML or a synth-ai TOML.

    Returns:
        The named config, or the file's config (``RewardConfig.from_file``).

    Raises:
        ConfigError: a file that cannot be read (naming the file and key), or a bare word that
            names no starting config.
    """
    text = str(spec)
    if text in NAMED_CONFIGS:
        return NAMED_CONFIGS[text].config
    if not Path(text).suffix:
        raise ConfigError(
            f"{text}: neither a config file (.yaml, .yml, .toml) nor a named config ({', '.join(NAMED_CONFIGS)})"
        )
    return RewardConfig.from_file(text)
