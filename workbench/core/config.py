"""``RewardConfig``: one object for a task app ``step_rewards`` table.

A config keeps what the user wrote (the strategy string as spelled, weights and k-limits as
given) so that ``lint`` can point at mistakes the task app would swallow silently; the
properties ``effective_*`` say what the task app actually runs. Files (our YAML, synth-ai
TOMLs) are read and written as plain tables by ``workbench.core.config_io``; ``from_file``,
``to_file`` and ``export_into`` are the front door to it. Lint lives in ``workbench.core.lint``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workbench.core.config_io import read_table
from workbench.core.lint import Finding, lint
from workbench.core.resource_weights import RESOURCE_OVERRIDE_KEYS, TASK_APP_RESOURCE_WEIGHTS, ResourceWeights
from workbench.core.reward import STEPWISE_MODE, TABLE_DEFAULTS, coerce_k_limits, coerce_weights, normalize_strategy
from workbench.core.reward_rule import RewardRule, rule_for
from workbench.errors import ConfigError

__all__ = ["RESOURCE_OVERRIDE_KEYS", "STEPWISE_MODE", "ConfigError", "RewardConfig"]


def _read_float(value: Any) -> float:
    """The task app's ``float(value or 0.0)`` with 0.0 on error."""
    try:
        return float(value or 0.0)
    except Exception:
        return 0.0


@dataclass(frozen=True)
class RewardConfig:
    """A step_rewards table: whether shaping runs, its strategy, weights and limits.

    Field defaults describe an active consistent configuration (the named config ``consistent``,
    ``configs/consistent.yaml``); ``from_dict`` instead applies the task app's defaults to missing
    keys, so ``RewardConfig.from_dict({})`` is "shaping off", exactly as the task app reads an
    empty table (the named config ``task_app_default``; see ``workbench.core.named_configs``).

    Attributes:
        enabled: The table's ``enabled`` switch.
        mode: ``"stepwise"`` shapes; anything else turns shaping off.
        strategy: The strategy as written (``effective_strategy`` is what runs).
        weights: Achievement name -> weight, as given.
        k_limits: Achievement name -> how many unlocks are paid (``per_achievement``).
        indicator_lambda: The factor rewards are scaled by (0 reads as 1.0).
        step_beta: The table's ``step_beta`` (read and kept; the task app does not use it).
        resource_overrides: Overrides merged over the task app's resource tables.
    """

    enabled: bool = True
    mode: str = STEPWISE_MODE
    strategy: str = "consistent"
    weights: Mapping[str, float] = field(default_factory=dict)
    k_limits: Mapping[str, int] = field(default_factory=dict)
    indicator_lambda: float = 1.0
    step_beta: float = 0.0
    #: Overrides merged over the task app's resource tables; {} keeps the task app's tables.
    resource_overrides: Mapping[str, Any] = field(default_factory=dict)

    # -- what the task app runs -------------------------------------------------------------
    @property
    def active(self) -> bool:
        """Whether the task app shapes rewards at all with this table."""
        return bool(self.enabled) and self.effective_mode == STEPWISE_MODE

    @property
    def effective_mode(self) -> str:
        """The mode as the task app reads it: ``str(mode or "off").lower()``."""
        return str(self.mode or "off").lower()

    @property
    def effective_strategy(self) -> str:
        """The strategy the task app runs: ``consistent`` or ``per_achievement`` (normalised)."""
        return normalize_strategy(self.strategy)

    @property
    def rule(self) -> RewardRule:
        """The reward rule the task app runs for this table (``workbench.core.reward_rule``):
        what it pays, how it reads lambda, what it ignores. Ask it instead of the strategy's name."""
        return rule_for(self.strategy)

    @property
    def effective_lambda(self) -> float:
        """The factor rewards are scaled by (0 means 1.0, quirk 2 in workbench.core.reward)."""
        return self.rule.factor(self.indicator_lambda)

    @property
    def resource_weights(self) -> ResourceWeights:
        """The resource tables this config pays with: the task app's, with ``resource_overrides`` merged over them."""
        if not self.resource_overrides:
            return TASK_APP_RESOURCE_WEIGHTS
        return TASK_APP_RESOURCE_WEIGHTS.overridden(**self.resource_overrides)

    # -- task app tables --------------------------------------------------------------------
    @classmethod
    def from_dict(cls, table: Mapping[str, Any] | None) -> RewardConfig:
        """Read a step_rewards table with the task app's rules (junk values coerced or dropped).

        A ``resource_weights`` key (our extension) is taken as resource-table overrides.

        Args:
            table: A step_rewards table; None or missing keys take the task app's defaults.

        Returns:
            The config; never raises on junk values.
        """
        table = dict(table or {})
        return cls(
            enabled=bool(table.get("enabled", TABLE_DEFAULTS["enabled"])),
            mode=str(table.get("mode") or TABLE_DEFAULTS["mode"]).lower(),
            strategy=table["strategy"] if isinstance(table.get("strategy"), str) else TABLE_DEFAULTS["strategy"],
            weights=coerce_weights(table.get("weights")),
            k_limits=coerce_k_limits(table.get("k_limits")),
            indicator_lambda=_read_float(table.get("indicator_lambda")),
            step_beta=_read_float(table.get("step_beta")),
            resource_overrides=_resource_overrides(table.get("resource_weights")),
        )

    def to_task_app_dict(self) -> dict[str, Any]:
        """The step_rewards table the task app reads (without our resource overrides).

        Returns:
            A plain dict: enabled, mode, strategy, indicator_lambda, step_beta, then weights
            and k_limits when set.
        """
        table: dict[str, Any] = {
            "enabled": bool(self.enabled),
            "mode": self.mode,
            "strategy": self.strategy,
            "indicator_lambda": float(self.indicator_lambda),
            "step_beta": float(self.step_beta),
        }
        if self.weights:
            table["weights"] = dict(self.weights)
        if self.k_limits:
            table["k_limits"] = dict(self.k_limits)
        return table

    def to_dict(self) -> dict[str, Any]:
        """``to_task_app_dict`` plus the workbench's resource overrides, when there are any.

        Returns:
            A plain dict that ``from_dict`` reads back into an equal config.
        """
        table = self.to_task_app_dict()
        if self.resource_overrides:
            table["resource_weights"] = _plain(self.resource_overrides)
        return table

    def with_changes(self, **changes: Any) -> RewardConfig:
        """A copy with some fields changed (configs are frozen, so one can be shared between widgets and scores).

        Args:
            **changes: Field name -> new value.

        Returns:
            The new config; this one is unchanged.
        """
        return replace(self, **changes)

    # -- files (plain tables read and written by workbench.core.config_io) -----------------------
    @classmethod
    def from_file(cls, path: str | Path) -> RewardConfig:
        """Read our YAML or a synth-ai TOML (task-app or trainer style, detected), strictly.

        Args:
            path: A ``.yaml``/``.yml`` or ``.toml`` file.

        Returns:
            The config the file's step-rewards table describes.

        Raises:
            ConfigError: The file cannot be read or a key is wrong; names the file, the dotted
                key and what was expected.
        """
        return cls.from_dict(read_table(path))

    def to_file(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write YAML (.yaml/.yml) or a standalone TOML table (.toml), atomically.

        Args:
            path: The file to write; its suffix picks the format.
            overwrite: Replace an existing file.

        Returns:
            The path written.

        Raises:
            TargetExistsError: ``path`` exists and ``overwrite`` is False.
            ConfigError: The config would not read back, or the suffix is unknown.
        """
        from workbench.core.config_io import write_table  # tomlkit: only when writing

        return write_table(self.to_dict(), path, overwrite=overwrite)

    def to_text(self, path: str | Path) -> str:
        """The text ``to_file(path)`` writes, for writers that place the file themselves.

        Args:
            path: A file name whose suffix picks YAML or TOML (nothing is written).

        Returns:
            The file's text.

        Raises:
            ConfigError: As ``to_file`` does.
        """
        from workbench.core.config_io import table_text

        return table_text(self.to_dict(), path)

    def export_into(self, toml_path: str | Path) -> Path:
        """Update the step-rewards keys of an existing training TOML in place, keeping the rest.

        Args:
            toml_path: An existing synth-ai training TOML.

        Returns:
            The path updated.

        Raises:
            ConfigError: The file cannot be updated (it is left unchanged).
        """
        from workbench.core.config_io import export_table

        return export_table(self.to_task_app_dict(), toml_path, resource_overrides=bool(self.resource_overrides)).path

    def lint(self) -> list[Finding]:
        """Problems the task app would not tell you about; never changes the config.

        Returns:
            One ``Finding`` per problem (empty when there is none).
        """
        return lint(self)


def _resource_overrides(value: Any) -> dict[str, Any]:
    """Resource-table overrides read as leniently as the task app reads weights.

    A default whose float() raises is dropped, tables go through ``coerce_weights``; junk
    never raises here (the strict checks live in ``workbench.core.config_io``).
    """
    if not isinstance(value, Mapping):
        return {}
    overrides: dict[str, Any] = {}
    for key in RESOURCE_OVERRIDE_KEYS:
        if key not in value:
            continue
        if key.endswith("_default"):
            try:
                overrides[key] = float(value[key])
            except Exception:
                continue
        else:
            table = value[key]
            overrides[key] = coerce_weights(dict(table) if isinstance(table, Mapping) else table)
    return overrides


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value
