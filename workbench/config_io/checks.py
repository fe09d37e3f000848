"""The strict checks a config file's values pass before they become a step_rewards table."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from workbench.config_io.locate import (
    INFO_KEYS,
    RESOURCE_KEY,
    TRAINER_PREFIX,
    StepRewardsLocation,
    config_error,
    show_value,
)
from workbench.resource_weights import RESOURCE_OVERRIDE_KEYS
from workbench.suggest import key_suggestion


def _closest(word: str, choices: tuple[str, ...]) -> str:
    """A " (did you mean ...?)" for an unknown key, or ""."""
    match = key_suggestion(word, choices, prefix=TRAINER_PREFIX)
    return f" (did you mean {match}?)" if match else ""


def check_unknown_keys(values: Mapping[Any, Any], location: StepRewardsLocation, file: str) -> None:
    """Raise ``ConfigError`` naming the first key of ``values`` that ``location``'s style does not allow, with a suggestion."""
    allowed = location.allowed_keys
    for key in values:
        if key not in allowed:
            spelled = tuple(location.file_key(k) for k in allowed)
            raise config_error(
                file,
                location.key_path(key),
                f"unknown key; expected one of {', '.join(spelled)}{_closest(location.file_key(str(key)), spelled)}",
            )


def checked(values: Mapping[Any, Any], location: StepRewardsLocation, file: str) -> dict[str, Any]:
    """``values`` with every key known and every value of the right type. Raises ``ConfigError``
    naming the file and key otherwise."""
    check_unknown_keys(values, location, file)
    checked: dict[str, Any] = {}
    for key, value in values.items():
        if key in INFO_KEYS:
            _check_string(value, file, location.key_path(key))
            continue
        checked[key] = _CHECKS[key](value, file, location.key_path(key))
    return checked


def _check_bool(value: Any, file: str, at: str) -> bool:
    if not isinstance(value, bool):
        raise config_error(file, at, f"expected true or false, got {show_value(value)}")
    return value


def _check_string(value: Any, file: str, at: str) -> str:
    if not isinstance(value, str):
        raise config_error(file, at, f"expected a string, got {show_value(value)}")
    return value


def _check_number(value: Any, file: str, at: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise config_error(file, at, f"expected a number, got {show_value(value)}{_number_hint(value)}")
    if not math.isfinite(value):
        raise config_error(file, at, f"expected a finite number, got {value!r}")
    return float(value)


def _number_hint(value: Any) -> str:
    """Why a number-looking string is a string: quotes, or YAML 1.1's dotless exponents."""
    if not isinstance(value, str):
        return ""
    try:
        float(value)
    except ValueError:
        return ""
    if "e" in value.lower() and "." not in value:
        return " (YAML reads 1e-3 as text: write 1.0e-3)"
    return " (a string: remove the quotes)"


def _check_integer(value: Any, file: str, at: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise config_error(file, at, f"expected an integer, got {show_value(value)}")
    return value


def _check_table(value: Any, file: str, at: str, check_item: Callable[[Any, str, str], Any]) -> dict[str, Any]:
    if value is None:  # YAML "weights:" with nothing below it
        return {}
    if not isinstance(value, Mapping):
        raise config_error(file, at, f"expected a table of achievement = value, got {show_value(value)}")
    table: dict[str, Any] = {}
    for name, item in value.items():
        if not isinstance(name, str):
            raise config_error(file, at, f"expected names as keys, got {show_value(name)}")
        table[name] = check_item(item, file, f"{at}.{name}")
    return table


def _check_weights(value: Any, file: str, at: str) -> dict[str, float]:
    return _check_table(value, file, at, _check_number)


def _check_k_limits(value: Any, file: str, at: str) -> dict[str, int]:
    return _check_table(value, file, at, _check_integer)


def _check_resource_weights(value: Any, file: str, at: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise config_error(file, at, f"expected a table, got {show_value(value)}")
    checked: dict[str, Any] = {}
    for key, item in value.items():
        if key not in RESOURCE_OVERRIDE_KEYS:
            raise config_error(
                file,
                f"{at}.{key}",
                f"unknown key; expected one of {', '.join(RESOURCE_OVERRIDE_KEYS)}"
                f"{_closest(str(key), RESOURCE_OVERRIDE_KEYS)}",
            )
        if key.endswith("_default"):
            checked[key] = _check_number(item, file, f"{at}.{key}")
        else:
            checked[key] = _check_table(item, file, f"{at}.{key}", _check_number)
    return checked


_CHECKS: Mapping[str, Callable[[Any, str, str], Any]] = {
    "enabled": _check_bool,
    "mode": _check_string,
    "strategy": _check_string,
    "indicator_lambda": _check_number,
    "step_beta": _check_number,
    "weights": _check_weights,
    "k_limits": _check_k_limits,
    RESOURCE_KEY: _check_resource_weights,
}


