"""The strict checks a config file's values pass before they become a step_rewards table."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from workbench.core.config_io.locate import (
    INFO_KEYS,
    RESOURCE_KEY,
    TRAINER_PREFIX,
    StepRewardsLocation,
    config_error,
    show_value,
)
from workbench.core.resource_weights import RESOURCE_OVERRIDE_KEYS
from workbench.util.suggest import key_suggestion

#: The largest magnitude a weight, lambda or beta may have: far beyond any sensible reward, and
#: small enough that a score (at most 22 achievements x 2**31 counts x this) stays finite.
MAX_MAGNITUDE = 1e9
#: The k_limit range: Crafter's counts are int32, so a larger limit can never bind (and TOML
#: integers stop at 2**63 - 1); a limit <= 0 means unlimited.
MIN_K_LIMIT, MAX_K_LIMIT = -(2**31), 2**31 - 1


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
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits
        raise config_error(
            file, at, f"expected a number in -{MAX_MAGNITUDE:g}..{MAX_MAGNITUDE:g}, got {show_value(value)}"
        ) from None
    if not math.isfinite(number):
        raise config_error(file, at, f"expected a finite number, got {value!r}")
    if abs(number) > MAX_MAGNITUDE:
        raise config_error(file, at, f"expected a number in -{MAX_MAGNITUDE:g}..{MAX_MAGNITUDE:g}, got {number:g}")
    return number


def _number_hint(value: Any) -> str:
    """Why a number-looking string is a string: quotes, or YAML 1.1's dotless exponents."""
    if not isinstance(value, str):
        return ""
    try:
        float(value)
    except ValueError:
        return ""
    text = value.strip().lower()
    if "e" in text and "." not in text:
        return " (YAML reads 1e-3 as text: write 1.0e-3)"
    if "e" in text and not re.search(r"e[-+]", text):
        return " (YAML reads 1.0e3 as text: write the exponent's sign, 1.0e+3)"
    if not math.isfinite(float(value)):
        return " (write a finite number)"
    return " (a string: remove the quotes)"


def _check_integer(value: Any, file: str, at: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise config_error(file, at, f"expected an integer, got {show_value(value)}")
    if not MIN_K_LIMIT <= value <= MAX_K_LIMIT:
        raise config_error(file, at, f"expected an integer in {MIN_K_LIMIT}..{MAX_K_LIMIT}, got {show_value(value)}")
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
