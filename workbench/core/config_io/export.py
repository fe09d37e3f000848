"""Exporting a step_rewards table into an existing training TOML in place, keeping every other byte."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Comment, InlineTable, Null, Table, Whitespace
from tomlkit.toml_document import TOMLDocument

from workbench.core.config_io.checks import check_unknown_keys, checked
from workbench.core.config_io.insert_after import LinesAfter
from workbench.core.config_io.locate import (
    CONFIG_KEYS,
    MAPPING_KEYS,
    SCALAR_KEYS,
    TABLE_KEYS,
    TOML_SUFFIX,
    TRAINING_TABLE,
    StepRewardsLocation,
    extract,
    find_step_rewards,
)
from workbench.core.config_io.read import parse_toml, read_text
from workbench.core.config_io.target import check_target, same_line_endings, write_target
from workbench.core.reward import TABLE_DEFAULTS
from workbench.errors import ConfigError


@dataclass(frozen=True)
class ExportResult:
    """What ``export_table`` did: the file, the table it updated, and what it could not write.

    Attributes:
        path: The training TOML.
        location: Where its step-rewards keys live.
        changed: Whether the file was rewritten (False when nothing changed).
        dropped_resource_overrides: The config had resource overrides, which were not written.
    """

    path: Path
    location: StepRewardsLocation
    changed: bool
    dropped_resource_overrides: bool


def export_table(
    table: Mapping[str, Any], toml_path: str | Path, *, resource_overrides: bool = False, force: bool = False
) -> ExportResult:
    """Write a step_rewards table (``RewardConfig.to_task_app_dict()``) into an existing
    training TOML, keeping everything else; ``resource_overrides`` says the config had some
    (they cannot be written: ``ExportResult.dropped_resource_overrides``).

    The table updated is the one the task app reads (see ``find_step_rewards``): task-app style
    updates that table, trainer style the flat ``step_rewards_*`` keys under ``[training]``.
    Values that did not change keep their line (and its comment) untouched; changed values are
    replaced in place keeping their trailing comment; weights / k_limits the config lacks are
    removed, new ones appended. A key missing from the file is added only where the task app's
    default for it differs from the config (so a minimal file stays minimal), except when the
    file has no step_rewards keys yet: then every key is written explicitly.

    Resource overrides cannot be expressed in a training TOML; they are not written and
    ``dropped_resource_overrides`` says so (lint reports it too). The write is atomic, keeps
    the file's CRLF line endings, and is skipped when nothing changed.

    Args:
        table: The step_rewards table to write.
        toml_path: An existing training TOML.
        resource_overrides: The config had resource overrides (reported as dropped).
        force: Replace a read-only file (keeping its mode) or update one with other hard links
            in place (so every link sees the change).

    Returns:
        What was done.

    Raises:
        ConfigError: The file is unchanged and: it is not a ``.toml``; it has no step_rewards at
            all, unless it has a ``[training]`` table and no ``[rollout]`` table (then
            trainer-style keys are added; with ``[rollout]`` the intent is ambiguous: add an
            empty ``[rollout.env_config.step_rewards]`` to choose task-app style); it is a
            standalone workbench TOML (``[step_rewards]``: a config, not a training file); its
            step_rewards table has unknown keys (export would have to delete something it does
            not understand); or tomlkit cannot edit the layout so that it reads back as the table.
        OutputError: The file is unchanged and is not a regular file, is read-only or has other
            hard links (unless ``force``), or cannot be written (unwritable folder, disk full).
    """
    path = Path(toml_path)
    if path.suffix.lower() != TOML_SUFFIX:
        raise ConfigError(f"{path}: expected a training TOML (.toml), got {path.suffix or 'no extension'!r}")
    text = read_text(path)  # refuses a FIFO or device before opening it
    location = _export_location(parse_toml(text, str(path)), str(path))
    table = checked(table, CONFIG_KEYS, f"cannot export into {path}")
    try:
        doc = tomlkit.parse(text)
        container = _tomlkit_table(doc, location.table)
        added = _update_step_rewards(container, location, table)
        new_text = same_line_endings(added.render(doc), text)
    except (TOMLKitError, RecursionError, ValueError) as error:
        raise ConfigError(
            f"{path}: could not update {location.describe()} in place: {error}; the file is unchanged"
        ) from None
    _verify_export(new_text, location, table, path)
    if new_text != text:
        write_target(path, new_text, check_target(path, force=force))
    return ExportResult(path, location, new_text != text, resource_overrides)


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
    check_unknown_keys(extract(doc, location), location, file)
    return location


def _tomlkit_table(doc: TOMLDocument, path: tuple[str, ...]) -> Any:
    node: Any = doc
    for name in path:
        node = node[name]
    return node


def _update_step_rewards(container: Any, location: StepRewardsLocation, table: Mapping[str, Any]) -> LinesAfter:
    """Set the step_rewards keys of ``container`` (a tomlkit table) to ``table``, in place.

    New keys go right after the file's existing step_rewards keys, in table order, so the
    group stays together: they are returned, to be rendered into the document's text; new
    weights / k_limits sub-tables go at the end of their table.
    """
    explicit = not any(location.file_key(key) in container for key in TABLE_KEYS)
    flat = location.style == "trainer" or isinstance(container, InlineTable)
    ours = {location.file_key(key) for key in (TABLE_KEYS if flat else SCALAR_KEYS)}
    added = LinesAfter(container, () if isinstance(container, InlineTable) else ours)
    for key in SCALAR_KEYS:
        _update_scalar(container, location, key, table[key], explicit, added)
    for key in MAPPING_KEYS:
        _update_mapping(container, location, key, table.get(key, {}), flat, added)
    return added


def _update_scalar(
    container: Any, location: StepRewardsLocation, key: str, value: Any, explicit: bool, added: LinesAfter
) -> None:
    """Update one scalar in place; add it only where reading the file back needs it."""
    file_key = location.file_key(key)
    if file_key in container:
        if not _same(container[file_key], value):
            container[file_key] = value  # tomlkit keeps the line's trailing comment
    elif explicit or not _same(TABLE_DEFAULTS[key], value):  # else absent reads the same
        added.add(file_key, value)  # plain assignment would put it after unrelated keys


def _update_mapping(
    container: Any, location: StepRewardsLocation, key: str, values: Mapping[str, Any], flat: bool, added: LinesAfter
) -> None:
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
        added.add(file_key, _inline_table(values))
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
        doc = parse_toml(text, str(path))
        found = find_step_rewards(doc, str(path))
        if found == location:
            written = checked(extract(doc, location), location, str(path))
            if _as_read(written) == _as_read(table):
                return
    except ConfigError:
        pass  # reported below: the edit, not the user's file, is at fault
    raise ConfigError(
        f"{path}: could not update {location.describe()} in place with this layout "
        "(tomlkit cannot edit it so that it reads back as the config); the file is unchanged"
    )


def _as_read(table: Mapping[str, Any]) -> dict[str, Any]:
    """A table as the task app reads it, keys it lacks taking its defaults."""
    return {**TABLE_DEFAULTS, "weights": {}, "k_limits": {}, **table}
