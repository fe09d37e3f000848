"""Reward configs on disk: our YAML, synth-ai training TOMLs and a standalone TOML.

Each is read into and written from plain step_rewards tables (``RewardConfig`` builds on these);
training TOMLs come in both styles.

Formats read (``read_table``):

- our YAML (``configs/*.yaml``): the step_rewards keys at the top level, plus optional
  ``resource_weights`` (a workbench extension) and ``name`` / ``description`` (ignored);
- a synth-ai training TOML, style detected as the task app would read it: task-app style
  ``[rollout.policy_config.step_rewards]`` when present and non-empty, else
  ``[rollout.env_config.step_rewards]``; otherwise trainer style, the flat
  ``step_rewards_*`` keys under ``[training]`` (``event_rewards_kind`` is not ours: left alone);
- a standalone TOML with a ``[step_rewards]`` table, as ``write_table`` writes it.

Reading is deliberately stricter than the task app. The task app coerces or silently drops junk
(a weight "abc", a k-limit 1.7, weights that are not a table); ``RewardConfig.from_dict`` keeps
that leniency for parity, but a file is where such junk gets fixed, so the reader refuses it with
a ``ConfigError`` naming the file, the dotted key path and what was expected. Refused: syntax
errors (with line), duplicate YAML keys, wrong types (bools are not numbers, k-limits must be
integers), NaN/inf, unknown keys, a TOML without any step_rewards. Accepted although lint may
object: negative weights, unknown achievement names, unknown strategy spellings, and ``null``
for weights / k_limits / resource_weights in YAML (an empty table, as ``weights:`` with nothing
below it reads). Missing keys take the task app's defaults, exactly as ``from_dict`` does.

``export_table`` updates an existing training TOML in place with tomlkit, so every comment and
every other key keeps its bytes; see its docstring for the edge cases.
"""

from typing import TYPE_CHECKING

from workbench.core.config_io.locate import StepRewardsLocation, find_step_rewards
from workbench.core.config_io.read import read_table
from workbench.util.lazy_names import lazy_names

if TYPE_CHECKING:
    from workbench.core.config_io.export import ExportResult, export_table
    from workbench.core.config_io.write import table_text, write_table

#: The writers, imported on first use (PEP 562): they import tomlkit (~15 ms), which reading a
#: config and every command that only reads one never needs.
_HOMES = {
    "ExportResult": "workbench.core.config_io.export",
    "export_table": "workbench.core.config_io.export",
    "table_text": "workbench.core.config_io.write",
    "write_table": "workbench.core.config_io.write",
}

__all__ = [
    "ExportResult",
    "StepRewardsLocation",
    "export_table",
    "find_step_rewards",
    "read_table",
    "table_text",
    "write_table",
]


__getattr__ = lazy_names(__name__, _HOMES)
