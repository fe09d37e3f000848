"""Compatibility names for reading and writing configs; the work is in ``workbench.config_io``
(plain tables) and ``RewardConfig.from_file`` / ``to_file`` / ``export_into``."""

from __future__ import annotations

from pathlib import Path

from workbench.config import RewardConfig
from workbench.config_io import ExportResult, StepRewardsLocation, export_table, find_step_rewards

__all__ = [
    "ExportResult",
    "StepRewardsLocation",
    "export_config",
    "export_into",
    "find_step_rewards",
    "read_config",
    "write_config",
]


def read_config(path: str | Path) -> RewardConfig:
    """``RewardConfig.from_file(path)``."""
    return RewardConfig.from_file(path)


def write_config(config: RewardConfig, path: str | Path, *, overwrite: bool = False) -> Path:
    """``config.to_file(path, overwrite=overwrite)``."""
    return config.to_file(path, overwrite=overwrite)


def export_config(config: RewardConfig, toml_path: str | Path) -> ExportResult:
    """Export ``config``'s step_rewards into a training TOML; what was done (see ``export_table``)."""
    return export_table(config.to_task_app_dict(), toml_path, resource_overrides=bool(config.resource_overrides))


def export_into(config: RewardConfig, toml_path: str | Path) -> Path:
    """``config.export_into(toml_path)``."""
    return config.export_into(toml_path)
