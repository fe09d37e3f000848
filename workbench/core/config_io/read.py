"""Reading a config file (our YAML or a synth-ai TOML) into a plain, strictly checked step_rewards table."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path
from typing import Any, Literal

import yaml

from workbench.core.config_io.checks import checked
from workbench.core.config_io.locate import (
    TOML_SUFFIX,
    YAML_SUFFIXES,
    StepRewardsLocation,
    extract,
    find_step_rewards,
    show_value,
)
from workbench.errors import ConfigError

#: The largest config file read (a step_rewards table is a few hundred bytes; a training TOML a
#: few KB): anything bigger is not a config, and would only cost memory.
MAX_CONFIG_BYTES = 10_000_000


def read_table(path: str | Path) -> dict[str, Any]:
    """The step_rewards table of our YAML (.yaml/.yml) or a TOML (.toml, style detected), read
    strictly (see ``workbench.core.config_io``).

    Args:
        path: The file.

    Returns:
        The table, values checked and typed.

    Raises:
        ConfigError: The file cannot be read or parsed, or a key is unknown or holds a wrong
            value; names the file, the dotted key and what was expected.
    """
    path = Path(path)
    kind = file_kind(path)
    text = read_text(path)
    if kind == "yaml":
        return _table_from_yaml(text, str(path))
    return _table_from_toml(text, str(path))


def file_kind(path: Path) -> Literal["yaml", "toml"]:
    """``yaml`` or ``toml`` by the file's suffix; ``ConfigError`` for any other."""
    suffix = path.suffix.lower()
    if suffix in YAML_SUFFIXES:
        return "yaml"
    if suffix == TOML_SUFFIX:
        return "toml"
    raise ConfigError(f"{path}: unknown file type {suffix or '(none)'!r}; expected .yaml, .yml or .toml")


def read_text(path: Path) -> str:
    """The file's UTF-8 text; ``ConfigError`` naming the file when it cannot be read or is not a
    regular file (a FIFO or device would block or never end)."""
    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError
        if not stat.S_ISREG(mode):
            raise ConfigError(f"{path}: not a regular file (a FIFO, socket or device); expected a config file")
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: {path.stat().st_size} bytes; a config file is at most {MAX_CONFIG_BYTES} bytes")
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a config file") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (bad byte at offset {error.start})") from None


class _StrictYamlLoader(yaml.SafeLoader):
    """safe_load, except that a key given twice in one mapping is an error, not "last wins"."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        self.flatten_mapping(node)
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            if duplicate:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _table_from_yaml(text: str, file: str) -> dict[str, Any]:
    try:
        data = yaml.load(text, Loader=_StrictYamlLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        detail = "; ".join(part for part in (error.context, error.problem) if part)
        raise ConfigError(f"{file}: {where}invalid YAML: {detail}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{file}: invalid YAML: {error}") from None
    except RecursionError:
        raise ConfigError(f"{file}: invalid YAML: nested too deeply to read") from None
    except ValueError as error:  # an integer of thousands of digits (Python's int() limit)
        raise ConfigError(f"{file}: invalid YAML: {_short(error)}") from None
    if data is None:
        raise ConfigError(f"{file}: empty file; expected step_rewards keys (enabled, mode, strategy, ...)")
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a mapping of step_rewards keys at the top level, got {show_value(data)}")
    return checked(data, StepRewardsLocation("yaml"), file)


def parse_toml(text: str, file: str) -> dict[str, Any]:
    """The parsed TOML; ``ConfigError`` with the line and column of a syntax error."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{file}: invalid TOML: {error}") from None  # says "(at line N, column M)"
    except RecursionError:
        raise ConfigError(f"{file}: invalid TOML: nested too deeply to read") from None
    except ValueError as error:  # an integer of thousands of digits (Python's int() limit)
        raise ConfigError(f"{file}: invalid TOML: {_short(error)}") from None


def _short(error: Exception) -> str:
    text = str(error)
    return text if len(text) <= 160 else text[:157] + "..."


def _table_from_toml(text: str, file: str) -> dict[str, Any]:
    doc = parse_toml(text, file)
    location = find_step_rewards(doc, file)
    if location is None:
        raise ConfigError(
            f"{file}: no step_rewards found; expected [rollout.env_config.step_rewards] or "
            "[rollout.policy_config.step_rewards] (task-app style), step_rewards_* keys under "
            "[training] (trainer style) or a [step_rewards] table (workbench TOML)"
        )
    return checked(extract(doc, location), location, file)
