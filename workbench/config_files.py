"""Reward configs on disk: our YAML, synth-ai training TOMLs (both styles) and a standalone TOML.

Formats read (``read_config``):

- our YAML (``configs/*.yaml``): the step_rewards keys at the top level, plus optional
  ``resource_weights`` (a workbench extension) and ``name`` / ``description`` (ignored);
- a synth-ai training TOML, style detected as the task app would read it: task-app style
  ``[rollout.policy_config.step_rewards]`` when present and non-empty, else
  ``[rollout.env_config.step_rewards]``; otherwise trainer style, the flat
  ``step_rewards_*`` keys under ``[training]`` (``event_rewards_kind`` is not ours: left alone);
- a standalone TOML with a ``[step_rewards]`` table, as ``write_config`` writes it.

Reading is deliberately stricter than the task app. The task app coerces or silently drops junk
(a weight "abc", a k-limit 1.7, weights that are not a table); ``RewardConfig.from_dict`` keeps
that leniency for parity, but a file is where such junk gets fixed, so the reader refuses it with
a ``ConfigError`` naming the file, the dotted key path and what was expected. Refused: syntax
errors (with line), duplicate YAML keys, wrong types (bools are not numbers, k-limits must be
integers), NaN/inf, unknown keys, a TOML without any step_rewards. Accepted although lint may
object: negative weights, unknown achievement names, unknown strategy spellings, and ``null``
for weights / k_limits / resource_weights in YAML (an empty table, as ``weights:`` with nothing
below it reads). Missing keys take the task app's defaults, exactly as ``from_dict`` does.

``export_into`` updates an existing training TOML in place with tomlkit, so every comment and
every other key keeps its bytes; see its docstring for the edge cases.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

import tomlkit
import yaml
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Comment, InlineTable, Null, Table, Whitespace
from tomlkit.toml_document import TOMLDocument

from workbench.atomic import atomic_write_text
from workbench.config import RESOURCE_OVERRIDE_KEYS, ConfigError, RewardConfig

__all__ = [
    "ExportResult",
    "StepRewardsLocation",
    "export_config",
    "export_into",
    "find_step_rewards",
    "read_config",
    "write_config",
]

YAML_SUFFIXES = (".yaml", ".yml")
TOML_SUFFIX = ".toml"

SCALAR_KEYS = ("enabled", "mode", "strategy", "indicator_lambda", "step_beta")
MAPPING_KEYS = ("weights", "k_limits")
#: The keys of a task app step_rewards table, in the order files are written.
TABLE_KEYS = SCALAR_KEYS + MAPPING_KEYS
RESOURCE_KEY = "resource_weights"
#: Descriptive keys our YAML may carry; read and dropped (a RewardConfig has no name).
INFO_KEYS = ("name", "description")
#: Trainer-style flat keys under [training], by table key.
TRAINER_KEYS = {
    "enabled": "step_rewards_enabled",
    "mode": "step_rewards_mode",
    "strategy": "step_rewards_strategy",
    "indicator_lambda": "step_rewards_indicator_lambda",
    "step_beta": "step_rewards_beta",
    "weights": "step_rewards_weights",
    "k_limits": "step_rewards_k_limits",
}
TRAINER_PREFIX = "step_rewards_"
#: What the task app reads for a key its table lacks (export need not add such a key).
TASK_APP_DEFAULTS: Mapping[str, Any] = {
    "enabled": False,
    "mode": "off",
    "strategy": "consistent",
    "indicator_lambda": 0.0,
    "step_beta": 0.0,
}
POLICY_TABLE = ("rollout", "policy_config", "step_rewards")
ENV_TABLE = ("rollout", "env_config", "step_rewards")
TRAINING_TABLE = ("training",)
STANDALONE_TABLE = ("step_rewards",)

Style = Literal["yaml", "standalone", "task-app", "trainer"]
_STYLE_KEYS: Mapping[str, tuple[str, ...]] = {
    "yaml": TABLE_KEYS + (RESOURCE_KEY,) + INFO_KEYS,
    "standalone": TABLE_KEYS + (RESOURCE_KEY,),
    "task-app": TABLE_KEYS,
    "trainer": TABLE_KEYS,
}


# -- where a file keeps its step_rewards keys ---------------------------------------------------
@dataclass(frozen=True)
class StepRewardsLocation:
    """Where a file keeps its step_rewards keys: a style and the table that holds them."""

    style: Style
    table: tuple[str, ...] = ()

    @property
    def allowed_keys(self) -> tuple[str, ...]:
        return _STYLE_KEYS[self.style]

    def file_key(self, key: str) -> str:
        """The key as spelled in the file (trainer style prefixes it; unknown keys pass through)."""
        return TRAINER_KEYS.get(key, key) if self.style == "trainer" else key

    def key_path(self, key: str) -> str:
        """The dotted path of a key in the file, as error messages show it."""
        return ".".join((*self.table, self.file_key(str(key))))

    def describe(self) -> str:
        if self.style == "trainer":
            return "trainer style: step_rewards_* keys under [training]"
        return f"{self.style} style: [{'.'.join(self.table)}]"


#: Keys of a config being written or exported are reported by their plain names.
_CONFIG_KEYS = StepRewardsLocation("standalone")


def find_step_rewards(doc: Mapping[str, Any], file: str) -> StepRewardsLocation | None:
    """The table the task app (or trainer) reads from a parsed TOML, or None when there is none.

    Precedence follows the task app: policy_config when present and non-empty, else
    env_config; then trainer-style flat keys; then a standalone ``[step_rewards]``.
    """
    policy = _table_at(doc, POLICY_TABLE, file)
    env = _table_at(doc, ENV_TABLE, file)
    if policy:
        return StepRewardsLocation("task-app", POLICY_TABLE)
    if env is not None:
        return StepRewardsLocation("task-app", ENV_TABLE)
    if policy is not None:
        return StepRewardsLocation("task-app", POLICY_TABLE)
    training = doc.get("training")
    if isinstance(training, Mapping) and any(str(k).startswith(TRAINER_PREFIX) for k in training):
        return StepRewardsLocation("trainer", TRAINING_TABLE)
    if _table_at(doc, STANDALONE_TABLE, file) is not None:
        return StepRewardsLocation("standalone", STANDALONE_TABLE)
    return None


def _table_at(doc: Mapping[str, Any], path: tuple[str, ...], file: str) -> Mapping[str, Any] | None:
    node: Any = doc
    for name in path[:-1]:
        node = node.get(name) if isinstance(node, Mapping) else None
    if not isinstance(node, Mapping) or path[-1] not in node:
        return None
    table = node[path[-1]]
    if not isinstance(table, Mapping):
        raise _error(file, ".".join(path), f"expected a table, got {_show(table)}")
    return table


def _extract(doc: Mapping[str, Any], location: StepRewardsLocation) -> dict[str, Any]:
    """The step_rewards values at ``location``, keyed by table key (trainer keys unprefixed)."""
    table: Mapping[str, Any] = doc
    for name in location.table:
        table = table[name]
    if location.style != "trainer":
        return dict(table)
    by_file_key = {file_key: key for key, file_key in TRAINER_KEYS.items()}
    return {
        by_file_key.get(file_key, file_key): value
        for file_key, value in table.items()
        if str(file_key).startswith(TRAINER_PREFIX)
    }


# -- strict checks --------------------------------------------------------------------------------
def _error(file: str, key_path: str, message: str) -> ConfigError:
    return ConfigError(f"{file}: {key_path}: {message}")


def _show(value: Any) -> str:
    """A value as a message shows it: TOML/YAML spellings for bools and null, kinds for tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _closest(word: str, choices: tuple[str, ...]) -> str:
    """A "did you mean" for an unknown key: a key containing it (lambda -> indicator_lambda), else spelling."""
    core = word.removeprefix(TRAINER_PREFIX)
    containing = [
        choice
        for choice in choices
        if core and (core in choice.removeprefix(TRAINER_PREFIX) or choice.removeprefix(TRAINER_PREFIX) in core)
    ]
    matches = containing[:1] or difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {matches[0]}?)" if matches else ""


def _check_unknown_keys(values: Mapping[Any, Any], location: StepRewardsLocation, file: str) -> None:
    allowed = location.allowed_keys
    for key in values:
        if key not in allowed:
            spelled = tuple(location.file_key(k) for k in allowed)
            raise _error(
                file,
                location.key_path(key),
                f"unknown key; expected one of {', '.join(spelled)}{_closest(location.file_key(str(key)), spelled)}",
            )


def _checked(values: Mapping[Any, Any], location: StepRewardsLocation, file: str) -> dict[str, Any]:
    """``values`` with every key known and every value of the right type, or a ConfigError."""
    _check_unknown_keys(values, location, file)
    checked: dict[str, Any] = {}
    for key, value in values.items():
        if key in INFO_KEYS:
            _check_string(value, file, location.key_path(key))
            continue
        checked[key] = _CHECKS[key](value, file, location.key_path(key))
    return checked


def _check_bool(value: Any, file: str, at: str) -> bool:
    if not isinstance(value, bool):
        raise _error(file, at, f"expected true or false, got {_show(value)}")
    return value


def _check_string(value: Any, file: str, at: str) -> str:
    if not isinstance(value, str):
        raise _error(file, at, f"expected a string, got {_show(value)}")
    return value


def _check_number(value: Any, file: str, at: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _error(file, at, f"expected a number, got {_show(value)}{_number_hint(value)}")
    if not math.isfinite(value):
        raise _error(file, at, f"expected a finite number, got {value!r}")
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
        raise _error(file, at, f"expected an integer, got {_show(value)}")
    return value


def _check_table(value: Any, file: str, at: str, check_item: Callable[[Any, str, str], Any]) -> dict[str, Any]:
    if value is None:  # YAML "weights:" with nothing below it
        return {}
    if not isinstance(value, Mapping):
        raise _error(file, at, f"expected a table of achievement = value, got {_show(value)}")
    table: dict[str, Any] = {}
    for name, item in value.items():
        if not isinstance(name, str):
            raise _error(file, at, f"expected names as keys, got {_show(name)}")
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
        raise _error(file, at, f"expected a table, got {_show(value)}")
    checked: dict[str, Any] = {}
    for key, item in value.items():
        if key not in RESOURCE_OVERRIDE_KEYS:
            raise _error(
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


# -- reading --------------------------------------------------------------------------------------
def read_config(path: str | Path) -> RewardConfig:
    """Read our YAML (.yaml/.yml) or a TOML (.toml, style detected), strictly (module docstring)."""
    path = Path(path)
    kind = _kind(path)
    text = _read_text(path)
    if kind == "yaml":
        return _config_from_yaml(text, str(path))
    return _config_from_toml(text, str(path))


def _kind(path: Path) -> Literal["yaml", "toml"]:
    suffix = path.suffix.lower()
    if suffix in YAML_SUFFIXES:
        return "yaml"
    if suffix == TOML_SUFFIX:
        return "toml"
    raise ConfigError(f"{path}: unknown file type {suffix or '(none)'!r}; expected .yaml, .yml or .toml")


def _read_text(path: Path) -> str:
    try:
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
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
        return super().construct_mapping(node, deep=deep)


def _config_from_yaml(text: str, file: str) -> RewardConfig:
    try:
        data = yaml.load(text, Loader=_StrictYamlLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        detail = "; ".join(part for part in (error.context, error.problem) if part)
        raise ConfigError(f"{file}: {where}invalid YAML: {detail}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{file}: invalid YAML: {error}") from None
    if data is None:
        raise ConfigError(f"{file}: empty file; expected step_rewards keys (enabled, mode, strategy, ...)")
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a mapping of step_rewards keys at the top level, got {_show(data)}")
    return RewardConfig.from_dict(_checked(data, StepRewardsLocation("yaml"), file))


def _parse_toml(text: str, file: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{file}: invalid TOML: {error}") from None  # says "(at line N, column M)"


def _config_from_toml(text: str, file: str) -> RewardConfig:
    doc = _parse_toml(text, file)
    location = find_step_rewards(doc, file)
    if location is None:
        raise ConfigError(
            f"{file}: no step_rewards found; expected [rollout.env_config.step_rewards] or "
            "[rollout.policy_config.step_rewards] (task-app style), step_rewards_* keys under "
            "[training] (trainer style) or a [step_rewards] table (workbench TOML)"
        )
    return RewardConfig.from_dict(_checked(_extract(doc, location), location, file))


# -- writing --------------------------------------------------------------------------------------
YAML_HEADER = "# Reward config for the synth-ai Crafter task app (its step_rewards table), written by the Crafter Reward Workbench.\n"
RESOURCE_NOTE = "Workbench extension: the task app cannot express resource_weights (export drops them)."


def write_config(config: RewardConfig, path: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``config`` as YAML (.yaml/.yml) or a standalone ``[step_rewards]`` TOML (.toml).

    The write is atomic. An existing file is replaced only with ``overwrite=True``, otherwise
    ``FileExistsError`` names it. A config that would not read back (NaN weights, a
    non-string strategy, ...) raises ``ConfigError`` and nothing is written.
    """
    path = Path(path)
    kind = _kind(path)
    table = _checked(config.to_dict(), _CONFIG_KEYS, f"cannot write {path}")
    text = _yaml_text(table) if kind == "yaml" else _toml_text(table)
    try:
        return atomic_write_text(path, text, overwrite=overwrite)
    except FileExistsError:
        raise
    except OSError as error:
        raise ConfigError(f"{path}: cannot write: {error.strerror}") from None


class _Dumper(yaml.SafeDumper):
    """SafeDumper that double-quotes strings holding YAML line breaks (NEL, LS, PS): with
    ``allow_unicode`` PyYAML writes them raw inside single quotes, and reading folds them into
    a space, so the file would not read back as written."""


_YAML_BREAKS = ("\x85", "\u2028", "\u2029")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if any(ch in value for ch in _YAML_BREAKS) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _dump_yaml(value: Mapping[str, Any]) -> str:
    return yaml.dump(value, Dumper=_Dumper, sort_keys=False, allow_unicode=True)


def _yaml_text(table: Mapping[str, Any]) -> str:
    main = {key: value for key, value in table.items() if key != RESOURCE_KEY}
    text = YAML_HEADER + _dump_yaml(main)
    if RESOURCE_KEY in table:
        text += f"# {RESOURCE_NOTE}\n" + _dump_yaml({RESOURCE_KEY: table[RESOURCE_KEY]})
    return text


def _toml_text(table: Mapping[str, Any]) -> str:
    doc = tomlkit.document()
    doc.add(tomlkit.comment("Reward config for the synth-ai Crafter task app, written by the Crafter Reward Workbench."))
    doc.add(tomlkit.comment("To train with it: workbench config export THIS_FILE YOUR_TRAINING.toml"))
    doc.add(tomlkit.nl())
    step_rewards = tomlkit.table()
    for key, value in table.items():
        if key == RESOURCE_KEY:
            step_rewards.add(key, _nested_table(value, comment=RESOURCE_NOTE))
        elif isinstance(value, Mapping):
            step_rewards.add(key, _nested_table(value))
        else:
            step_rewards.add(key, value)
    doc.add("step_rewards", step_rewards)
    return doc.as_string()


def _nested_table(values: Mapping[str, Any], comment: str | None = None) -> Table:
    """A tomlkit table, scalars first (TOML needs them before sub-tables), sub-tables after."""
    table = tomlkit.table()
    if comment:
        table.add(tomlkit.comment(comment))
    for key, value in values.items():
        if not isinstance(value, Mapping):
            table.add(key, value)
    for key, value in values.items():
        if isinstance(value, Mapping):
            table.add(key, _nested_table(value))
    return table


# -- export into a training TOML ------------------------------------------------------------------
@dataclass(frozen=True)
class ExportResult:
    """What ``export_config`` did: the file, the table it updated, and what it could not write."""

    path: Path
    location: StepRewardsLocation
    changed: bool
    dropped_resource_overrides: bool


def export_into(config: RewardConfig, toml_path: str | Path) -> Path:
    """Update the step_rewards keys of an existing training TOML in place (see ``export_config``)."""
    return export_config(config, toml_path).path


def export_config(config: RewardConfig, toml_path: str | Path) -> ExportResult:
    """Write ``config``'s step_rewards into an existing training TOML, keeping everything else.

    The table updated is the one the task app reads (see ``find_step_rewards``): task-app style
    updates that table, trainer style the flat ``step_rewards_*`` keys under ``[training]``.
    Values that did not change keep their line (and its comment) untouched; changed values are
    replaced in place keeping their trailing comment; weights / k_limits the config lacks are
    removed, new ones appended. A key missing from the file is added only where the task app's
    default for it differs from the config (so a minimal file stays minimal), except when the
    file has no step_rewards keys yet: then every key is written explicitly.

    Refused with ``ConfigError`` (file unchanged):
    - a file with no step_rewards at all, unless it has a ``[training]`` table and no
      ``[rollout]`` table (then trainer-style keys are added; with ``[rollout]`` the intent is
      ambiguous: add an empty ``[rollout.env_config.step_rewards]`` to choose task-app style);
    - a standalone workbench TOML (``[step_rewards]``): that is a config, not a training file;
    - unknown keys in the step_rewards table (export would have to delete something it does
      not understand);
    - a layout tomlkit cannot edit so that the file reads back as ``config`` (checked before
      writing).

    Resource overrides cannot be expressed in a training TOML; they are not written and
    ``dropped_resource_overrides`` says so (lint reports it too). The write is atomic, and
    skipped when nothing changed.
    """
    path = Path(toml_path)
    if path.suffix.lower() != TOML_SUFFIX:
        raise ConfigError(f"{path}: expected a training TOML (.toml), got {path.suffix or 'no extension'!r}")
    text = _read_text(path)
    location = _export_location(_parse_toml(text, str(path)), str(path))
    table = _checked(config.to_task_app_dict(), _CONFIG_KEYS, f"cannot export into {path}")
    doc = tomlkit.parse(text)
    try:
        _update_step_rewards(_tomlkit_table(doc, location.table), location, table)
    except TOMLKitError as error:
        raise ConfigError(f"{path}: could not update {location.describe()} in place: {error}; the file is unchanged") from None
    new_text = doc.as_string()
    _verify_export(new_text, location, table, path)
    if new_text != text:
        atomic_write_text(path, new_text, overwrite=True)
    return ExportResult(path, location, new_text != text, bool(config.resource_overrides))


def _export_location(doc: Mapping[str, Any], file: str) -> StepRewardsLocation:
    location = find_step_rewards(doc, file)
    if location is None:
        if isinstance(doc.get("training"), Mapping) and "rollout" not in doc:
            return StepRewardsLocation("trainer", TRAINING_TABLE)
        raise ConfigError(
            f"{file}: has no step_rewards keys to update; expected task-app style "
            "[rollout.env_config.step_rewards] or trainer style step_rewards_* keys under [training]. "
            "Add an empty [rollout.env_config.step_rewards] table (or step_rewards_enabled = false "
            "under [training]) to choose where they go"
        )
    if location.style == "standalone":
        raise ConfigError(
            f"{file}: step_rewards: a standalone workbench config, not a training TOML; "
            "replace it with `workbench config convert CONFIG FILE --overwrite` instead"
        )
    _check_unknown_keys(_extract(doc, location), location, file)
    return location


def _tomlkit_table(doc: TOMLDocument, path: tuple[str, ...]) -> Any:
    node: Any = doc
    for name in path:
        node = node[name]
    return node


def _update_step_rewards(container: Any, location: StepRewardsLocation, table: Mapping[str, Any]) -> None:
    """Set the step_rewards keys of ``container`` (a tomlkit table) to ``table``, in place.

    New keys go right after the file's existing step_rewards keys, in table order, so the
    group stays together; new weights / k_limits sub-tables go at the end of their table.
    """
    explicit = not any(location.file_key(key) in container for key in TABLE_KEYS)
    flat = location.style == "trainer" or isinstance(container, InlineTable)
    for key in SCALAR_KEYS:
        _update_scalar(container, location, key, table[key], explicit, flat)
    for key in MAPPING_KEYS:
        _update_mapping(container, location, key, table.get(key, {}), flat)


def _update_scalar(container: Any, location: StepRewardsLocation, key: str, value: Any, explicit: bool, flat: bool) -> None:
    """Update one scalar in place; add it only where reading the file back needs it."""
    file_key = location.file_key(key)
    if file_key in container:
        if not _same(container[file_key], value):
            container[file_key] = value  # tomlkit keeps the line's trailing comment
    elif explicit or not _same(TASK_APP_DEFAULTS[key], value):  # else absent reads the same
        _add_line(container, location, flat, file_key, value)


def _add_line(container: Any, location: StepRewardsLocation, flat: bool, file_key: str, value: Any) -> None:
    """Add ``file_key = value`` right after the last step_rewards line of ``container``.

    Plain assignment would append it after unrelated keys (or blank lines before sub-tables).
    """
    ours = {location.file_key(key) for key in (TABLE_KEYS if flat else SCALAR_KEYS)}
    # A line after a [sub.table] header would land inside that table: only key = value lines.
    lines = [key for key in container if key in ours and not isinstance(container[key], Table)]
    body = getattr(container, "value", None)
    if lines and isinstance(body, Container):
        body._insert_after(lines[-1], file_key, value)  # tomlkit has no public "insert after"
    else:
        container[file_key] = value


def _update_mapping(container: Any, location: StepRewardsLocation, key: str, values: Mapping[str, Any], flat: bool) -> None:
    """Update weights / k_limits: removed when empty, edited entry by entry when a table."""
    file_key = location.file_key(key)
    current = container.get(file_key)
    if not values:
        if isinstance(current, Table):
            _remove_table(container, file_key)
        elif current is not None:
            del container[file_key]
    elif isinstance(current, Table):
        _update_entries(current, values)
    elif current is not None:
        if not _same_mapping(current, values):
            container[file_key] = _inline_table(values)  # replaced where it stands, comment kept
    elif flat:
        _add_line(container, location, flat, file_key, _inline_table(values))
    else:
        new = tomlkit.table()
        new.update(values)
        _append_table(container, file_key, new)


def _update_entries(table: Table, values: Mapping[str, Any]) -> None:
    """Make ``table``'s entries ``values``: unchanged lines stay, new ones go before its tail."""
    tail = _pop_tail(table)
    for name in [name for name in table if name not in values]:
        del table[name]
    for name, value in values.items():
        if name not in table or not _same(table[name], value):
            table[name] = value
    if tail:
        table.add(Whitespace(tail))


def _inline_table(values: Mapping[str, Any]) -> InlineTable:
    table = tomlkit.inline_table()
    table.update(values)
    return table


# A table's trailing comments and blank lines belong to whatever follows it in the file (a
# comment above the next [section], the blank line before it). tomlkit keeps them inside the
# table, so removing or appending a sub-table moves them along to keep them where they were.
def _pop_tail(table: Any) -> str:
    """Remove the comments and blank lines that end ``table``; return them as text.

    Tables tomlkit does not keep as a body of items (dotted keys, inline) have no such tail.
    """
    if not isinstance(getattr(table, "value", None), Container):
        return ""
    body = table.value.body
    tail: list[Any] = []
    while body and body[-1][0] is None and isinstance(body[-1][1], (Whitespace, Comment, Null)):
        tail.append(body.pop()[1])
    return "".join(item.as_string() for item in reversed(tail))


def _remove_table(container: Any, key: str) -> None:
    """Delete the sub-table ``key``, leaving its trailing comments and blank lines in place."""
    tail = _pop_tail(container[key])
    if not tail or not isinstance(getattr(container, "value", None), Container):
        del container[key]
        return
    body = container.value.body
    index = next(i for i, (k, _) in enumerate(body) if k is not None and k.key == key)
    del container[key]  # tomlkit leaves a Null placeholder at ``index``
    body[index] = (None, Whitespace(tail))


def _append_table(container: Any, key: str, table: Table) -> None:
    """Add a sub-table at the end of ``container``, before the comments and blank lines that end it."""
    body = container.value.body if isinstance(getattr(container, "value", None), Container) else []
    tables = [item for _, item in body if isinstance(item, Table)]
    tail = _pop_tail(tables[-1] if tables else container)
    if tail:
        table.add(Whitespace(tail))
    container[key] = table


def _plain(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


def _same(item: Any, value: Any) -> bool:
    """Equal as the strict reader reads them: bools only equal bools, integers only integers."""
    current = _plain(item)
    if isinstance(current, bool) or isinstance(value, bool) or type(value) is int:
        return type(current) is type(value) and current == value  # a k_limit 2.0 is not 2
    return type(current) in (int, float, str) and current == value


def _same_mapping(item: Any, values: Mapping[str, Any]) -> bool:
    current = _plain(item)
    return (
        isinstance(current, Mapping)
        and current.keys() == values.keys()
        and all(_same(current[name], value) for name, value in values.items())
    )


def _verify_export(text: str, location: StepRewardsLocation, table: Mapping[str, Any], path: Path) -> None:
    """Refuse to write an edit that would not read back as the exported table."""
    try:
        doc = _parse_toml(text, str(path))
        found = find_step_rewards(doc, str(path))
        if found == location:
            written = RewardConfig.from_dict(_checked(_extract(doc, location), location, str(path)))
            if written == RewardConfig.from_dict(table):
                return
    except ConfigError:
        pass  # reported below: the edit, not the user's file, is at fault
    raise ConfigError(
        f"{path}: could not update {location.describe()} in place with this layout "
        "(tomlkit cannot edit it so that it reads back as the config); the file is unchanged"
    )
