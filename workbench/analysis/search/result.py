"""What ``search`` returns: the best config, its held-out score and what chose it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.analysis.search.held_out import HeldOutScore
from workbench.analysis.search.split import Split
from workbench.core.config import RewardConfig

__all__ = ["SearchResult"]


@dataclass
class SearchResult:
    """What ``search`` found.

    Attributes:
        config: The best config (lint clean when only task-app settings were searched).
        params: Its trial's settings.
        weights: Its weight per achievement, as written.
        held_out: Its score on the held-out episodes.
        baseline: The base config's score on the same episodes, for comparison.
        cross_validated: The best trial's objective on out-of-fold returns of the fit episodes
            (what chose it: optimistic, as any selection score).
        fitted: The final config's agreement on the fit episodes (in-sample, never held out).
        trials: One row per trial (``study.trials_table``).
        importance: Per achievement its weight, share of the fit episodes' returns and the
            in-sample agreement lost when it is set to 0.
        split: Which episodes were fit on and which held out.
        warnings: What to keep in mind (few episodes, a wide interval).
        study: The optuna study (None when not kept).
    """

    config: RewardConfig
    params: dict[str, Any]
    weights: dict[str, float]
    held_out: HeldOutScore
    baseline: HeldOutScore
    cross_validated: float
    fitted: float
    trials: pd.DataFrame
    importance: pd.DataFrame
    split: Split
    warnings: list[str] = field(default_factory=list)
    study: Any = field(default=None, repr=False)

    def to_file(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the best config (YAML or standalone TOML, ``RewardConfig.to_file``).

        Args:
            path: The file to write (``.yaml``, ``.yml`` or ``.toml``).
            overwrite: Replace an existing file.

        Returns:
            The path written.

        Raises:
            TargetExistsError: ``path`` exists and ``overwrite`` is False.
            ConfigError: The config would not read back, or the suffix is unknown.
        """
        return self.config.to_file(path, overwrite=overwrite)

    def export_into(self, toml_path: str | Path) -> Path:
        """Write the best config into an existing training TOML (``RewardConfig.export_into``).

        Args:
            toml_path: The training TOML to update in place (its other keys kept).

        Returns:
            The path updated.

        Raises:
            ConfigError: The file cannot be updated (it is left unchanged).
        """
        return self.config.export_into(toml_path)

    def summary(self) -> str:
        """A few lines for people: the held-out score first, then what chose the config.

        Returns:
            The lines, joined by newlines, the warnings last as ``note:`` lines.
        """
        lines = [
            f"held-out: {self.held_out}"
            + ("" if math.isnan(self.held_out.overpay) else f", overpay {self.held_out.overpay:+.1%}"),
            f"baseline (base config) on the same episodes: {self.baseline.metric} {self.baseline.value:.3f}",
            f"cross-validated objective of the best trial (fit episodes, selection score): {self.cross_validated:.3f}",
            f"in-sample agreement on the {len(self.split.fit)} fit episodes (not a held-out score): {self.fitted:.3f}",
            f"strategy {self.config.rule.name}, {len(self.trials)} trial(s)",
        ]
        return "\n".join(lines + [f"note: {w}" for w in self.warnings])
