"""Writing a step_rewards table as our YAML or a standalone TOML, atomically."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit
import yaml
from tomlkit.items import Table

from workbench.core.config_io.checks import checked
from workbench.core.config_io.locate import CONFIG_KEYS, RESOURCE_KEY
from workbench.core.config_io.read import file_kind
from workbench.errors import ConfigError
from workbench.util.atomic import atomic_write_text

YAML_HEADER = "# Reward config for the synth-ai Crafter task app (its step_rewards table), written by the Crafter Reward Workbench.\n"
RESOURCE_NOTE = "Workbench extension: the task app cannot express resource_weights (export drops them)."


def write_table(table: Mapping[str, Any], path: str | Path, *, overwrite: bool = False) -> Path:
    """Write a step_rewards table (``RewardConfig.to_dict()``) as YAML (.yaml/.yml) or a
    standalone ``[step_rewards]`` TOML (.toml), atomically.

    Args:
        table: The table to write.
        path: The file; its suffix picks the format.
        overwrite: Replace an existing file.

    Returns:
        The path written.

    Raises:
        TargetExistsError: ``path`` exists and ``overwrite`` is False.
        ConfigError: An unknown suffix, a table that would not read back (NaN weights, a
            non-string strategy, ...) or a file that cannot be written; nothing is written.
    """
    path = Path(path)
    text = table_text(table, path)
    try:
        return atomic_write_text(path, text, overwrite=overwrite)
    except FileExistsError:
        raise
    except OSError as error:
        raise ConfigError(f"{path}: cannot write: {error.strerror}") from None


def table_text(table: Mapping[str, Any], path: str | Path) -> str:
    """The text ``write_table(table, path)`` writes (YAML or TOML by ``path``'s suffix).

    Args:
        table: The table.
        path: A file name; only its suffix is used.

    Returns:
        The text.

    Raises:
        ConfigError: An unknown suffix, or a table that would not read back.
    """
    path = Path(path)
    kind = file_kind(path)
    table = checked(table, CONFIG_KEYS, f"cannot write {path}")
    return _yaml_text(table) if kind == "yaml" else _toml_text(table)


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
    doc.add(
        tomlkit.comment("Reward config for the synth-ai Crafter task app, written by the Crafter Reward Workbench.")
    )
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
