"""Lint a RewardConfig: what the task app would do with it that its author may not expect.

The task app never complains: it ignores unknown names, runs ``consistent`` for a strategy it
does not know, treats lambda 0 as 1.0. ``lint`` says so, with a stable ``code`` per kind of
finding (for scripts and tests) and a suggestion where there is an obvious fix.

Levels: ``error`` for what is certainly a mistake (a name or strategy spelling the task app
does not know, a non-finite number); ``warning`` for what runs but rarely means what it says
(k-limits, lambda 0, shaping off, ignored weights, negative weights, resource overrides that
cannot be exported); ``info`` for task app behaviour worth knowing (uncapped resource shaping,
strategy aliases, the unused step_beta).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from workbench.core.crafter_facts import ACHIEVEMENT_ALIASES, ACHIEVEMENTS
from workbench.core.reward import CONSISTENT, PER_ACHIEVEMENT, STEPWISE_MODE, STRATEGY_ALIASES
from workbench.util.suggest import close_match

__all__ = ["CODES", "Finding", "LintedConfig", "lint"]


class LintedConfig(Protocol):
    """What lint reads of a config: a ``RewardConfig`` (lint is below ``config``, which imports
    it for ``RewardConfig.lint``, so it names the fields it reads rather than the class)."""

    @property
    def enabled(self) -> bool:
        """Whether the table switches shaping on."""

    @property
    def mode(self) -> str:
        """The mode as written."""

    @property
    def strategy(self) -> str:
        """The strategy as written."""

    @property
    def weights(self) -> Mapping[str, float]:
        """Achievement weights as given (unknown names kept)."""

    @property
    def k_limits(self) -> Mapping[str, int]:
        """Achievement k-limits as given."""

    @property
    def indicator_lambda(self) -> float:
        """The lambda as written (0 means 1.0)."""

    @property
    def step_beta(self) -> float:
        """step_beta as written (unused by the reward)."""

    @property
    def resource_overrides(self) -> Mapping[str, Any]:
        """The workbench's resource-table overrides."""

    @property
    def effective_mode(self) -> str:
        """The mode the task app reads."""

    @property
    def effective_strategy(self) -> str:
        """The strategy the task app runs."""


Level = Literal["error", "warning", "info"]
_LEVEL_ORDER = {"error": 0, "warning": 1, "info": 2}

#: Every finding code with its level (stable: scripts and tests match on them).
CODES: Mapping[str, Level] = {
    "unknown-achievement": "error",
    "unknown-strategy": "error",
    "not-finite": "error",
    "shaping-disabled": "warning",
    "shaping-mode-off": "warning",
    "ignored-by-consistent": "warning",
    "k-limit-above-one": "warning",
    "k-limit-unlimited": "warning",
    "lambda-zero": "warning",
    "negative-lambda": "warning",
    "negative-weight": "warning",
    "resource-overrides-not-exported": "warning",
    "strategy-alias": "info",
    "uncapped-resource-shaping": "info",
    "step-beta-unused": "info",
}


@dataclass(frozen=True)
class Finding:
    """One thing lint has to say about one key of a config.

    Attributes:
        code: A stable short code for the kind of finding.
        level: ``error``, ``warning`` or ``info``.
        key: The dotted key path, e.g. ``weights.collect_food``.
        message: What is wrong, for people.
        suggestion: A fix (e.g. the closest achievement name), or None.
    """

    code: str
    level: Level
    key: str  # dotted path, e.g. "weights.collect_food"
    message: str
    suggestion: str | None = None

    def __str__(self) -> str:
        text = f"{self.level} {self.code} {self.key}: {self.message}"
        return f"{text} ({self.suggestion})" if self.suggestion else text


def lint(config: LintedConfig) -> list[Finding]:
    """Every finding for ``config``: errors, then warnings, then info. Never changes ``config``.

    Args:
        config: A ``RewardConfig`` (anything with its fields and ``effective_*`` properties).

    Returns:
        The findings, most severe first; empty when there is nothing to say.
    """
    findings = [
        *_shaping_off(config),
        *_strategy(config),
        *_names(config),
        *_weights(config),
        *_k_limits(config),
        *_numbers(config),
        *_resources(config),
    ]
    return sorted(findings, key=lambda finding: _LEVEL_ORDER[finding.level])


def _finding(code: str, key: str, message: str, suggestion: str | None = None) -> Finding:
    return Finding(code, CODES[code], key, message, suggestion)


# -- checks ---------------------------------------------------------------------------------------
def _shaping_off(config: LintedConfig) -> Iterator[Finding]:
    if not config.enabled:
        yield _finding(
            "shaping-disabled",
            "enabled",
            "enabled is false: the task app computes no stepwise reward with this table",
            "set enabled: true to train with it",
        )
    mode = config.effective_mode
    if mode != STEPWISE_MODE:
        close = close_match(mode, [STEPWISE_MODE])
        yield _finding(
            "shaping-mode-off",
            "mode",
            f"mode {config.mode!r} is not {STEPWISE_MODE!r}: the task app computes no stepwise reward",
            f"did you mean {STEPWISE_MODE}?" if close else f"set mode: {STEPWISE_MODE} to train with it",
        )


def _strategy(config: LintedConfig) -> Iterator[Finding]:
    strategy = config.strategy
    if not isinstance(strategy, str):
        yield _finding(
            "unknown-strategy",
            "strategy",
            f"strategy {strategy!r} is not a string: the task app silently runs {CONSISTENT}",
            f"write {CONSISTENT} or {PER_ACHIEVEMENT}",
        )
        return
    spelled = strategy.strip().lower()
    if spelled and spelled not in STRATEGY_ALIASES:
        close = close_match(spelled, list(STRATEGY_ALIASES))
        yield _finding(
            "unknown-strategy",
            "strategy",
            f"strategy {strategy!r} is not one the task app knows: it silently runs {CONSISTENT}",
            f"did you mean {close}?" if close else f"write {CONSISTENT} or {PER_ACHIEVEMENT}",
        )
    elif spelled not in (CONSISTENT, PER_ACHIEVEMENT):
        yield _finding(
            "strategy-alias",
            "strategy",
            f"strategy {strategy!r} is the task app's alias for {config.effective_strategy}",
            f"write {config.effective_strategy} to say what runs",
        )


def _names(config: LintedConfig) -> Iterator[Finding]:
    for table in ("weights", "k_limits"):
        for name in getattr(config, table):
            if name not in ACHIEVEMENTS:
                yield _finding(
                    "unknown-achievement",
                    f"{table}.{name}",
                    f"{name!r} is not a Crafter achievement: the task app ignores this entry",
                    _achievement_suggestion(name),
                )


def _achievement_suggestion(name: str) -> str | None:
    """The achievements ``name`` probably means: known aliases first, then spelling."""
    candidates = ACHIEVEMENT_ALIASES.get(name) or ACHIEVEMENT_ALIASES.get(name.strip().lower())
    if not candidates:
        match = close_match(name.strip().lower(), ACHIEVEMENTS)
        candidates = (match,) if match else ()
    return f"did you mean {' or '.join(candidates)}?" if candidates else None


def _weights(config: LintedConfig) -> Iterator[Finding]:
    if config.effective_strategy == CONSISTENT:
        for table in ("weights", "k_limits"):
            if getattr(config, table):
                yield _finding(
                    "ignored-by-consistent",
                    table,
                    f"the {CONSISTENT} strategy pays 1.0 for any decision that unlocks something; it ignores {table}",
                    f"set strategy: {PER_ACHIEVEMENT} to use them",
                )
    for name, weight in config.weights.items():
        if _is_number(weight) and weight < 0:
            yield _finding(
                "negative-weight",
                f"weights.{name}",
                f"weight {weight} punishes unlocking {name}",
                "use 0 to stop paying for it",
            )


def _k_limits(config: LintedConfig) -> Iterator[Finding]:
    for name, limit in config.k_limits.items():
        if name not in ACHIEVEMENTS or not _is_number(limit):
            continue  # unknown names are reported once, as unknown-achievement
        if limit > 1:
            yield _finding(
                "k-limit-above-one",
                f"k_limits.{name}",
                f"k_limit {limit} acts like 1: an achievement unlocks at most once per Crafter episode",
                "remove it: 1 is the default",
            )
        elif limit <= 0:
            yield _finding(
                "k-limit-unlimited",
                f"k_limits.{name}",
                f"k_limit {limit} means unlimited, not 'never pay'; and as an achievement unlocks "
                "at most once per episode it acts like 1",
                f"to stop paying for {name} set its weight to 0; otherwise remove the limit",
            )


def _numbers(config: LintedConfig) -> Iterator[Finding]:
    numbers = {
        "indicator_lambda": config.indicator_lambda,
        "step_beta": config.step_beta,
        **{f"weights.{name}": weight for name, weight in config.weights.items()},
        **_resource_numbers(config.resource_overrides),
    }
    for key, value in numbers.items():
        if _is_number(value) and not math.isfinite(value):
            yield _finding(
                "not-finite", key, f"{value} is not a finite number: every reward it touches becomes {value}"
            )
    lam = config.indicator_lambda
    if _is_number(lam) and lam == 0:
        yield _finding(
            "lambda-zero",
            "indicator_lambda",
            "indicator_lambda 0 (or missing) scales rewards by 1.0: it does not switch shaping off",
            "write 1.0 to say what runs; set enabled: false to switch shaping off",
        )
    elif _is_number(lam) and lam < 0:
        yield _finding(
            "negative-lambda",
            "indicator_lambda",
            f"indicator_lambda {lam} flips the sign of every stepwise reward",
        )
    if _is_number(config.step_beta) and config.step_beta:
        yield _finding(
            "step-beta-unused",
            "step_beta",
            "step_beta is read and echoed in the rollout summary, but the reward does not use it",
        )


def _resource_numbers(overrides: Mapping[str, Any], prefix: str = "resource_weights") -> dict[str, Any]:
    numbers: dict[str, Any] = {}
    for key, value in overrides.items():
        if isinstance(value, Mapping):
            numbers.update(_resource_numbers(value, f"{prefix}.{key}"))
        else:
            numbers[f"{prefix}.{key}"] = value
    return numbers


def _resources(config: LintedConfig) -> Iterator[Finding]:
    if config.resource_overrides:
        yield _finding(
            "resource-overrides-not-exported",
            "resource_weights",
            "the task app cannot express resource-table overrides: export drops them and training "
            "uses the task app's own tables",
        )
    if config.effective_strategy == PER_ACHIEVEMENT:
        yield _finding(
            "uncapped-resource-shaping",
            "strategy",
            f"{PER_ACHIEVEMENT} also pays every rise of an inventory item or achievement count, "
            "uncapped and ignoring k_limits: repeatable events (drinking, eating, saplings, "
            "placing stone, health recovering) pay every time",
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
