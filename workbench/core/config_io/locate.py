"""Where a config file keeps its step_rewards keys: the file styles, their key names and tables."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from workbench.core.resource_weights import RESOURCE_OVERRIDE_KEYS  # noqa: F401 - part of the key vocabulary
from workbench.errors import ConfigError

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


@dataclass(frozen=True)
class StepRewardsLocation:
    """Where a file keeps its step_rewards keys: a style and the table that holds them.

    Attributes:
        style: ``yaml``, ``standalone``, ``task-app`` or ``trainer``.
        table: The dotted path of the table holding the keys, as a tuple.
    """

    style: Style
    table: tuple[str, ...] = ()

    @property
    def allowed_keys(self) -> tuple[str, ...]:
        """The keys a table of this style may hold (our YAML also allows resource_weights, name, description)."""
        return _STYLE_KEYS[self.style]

    def file_key(self, key: str) -> str:
        """The key as spelled in the file (trainer style prefixes it; unknown keys pass through).

        Args:
            key: A step_rewards key (``weights``, ``indicator_lambda``, ...).

        Returns:
            The key in the file.
        """
        return TRAINER_KEYS.get(key, key) if self.style == "trainer" else key

    def key_path(self, key: str) -> str:
        """The dotted path of a key in the file, as error messages show it.

        Args:
            key: A step_rewards key.

        Returns:
            The table's path and the key as spelled in the file, dotted.
        """
        return ".".join((*self.table, self.file_key(str(key))))

    def describe(self) -> str:
        """Where the keys are, as messages say it.

        Returns:
            E.g. ``task-app style: [rollout.env_config.step_rewards]``.
        """
        if self.style == "trainer":
            return "trainer style: step_rewards_* keys under [training]"
        return f"{self.style} style: [{'.'.join(self.table)}]"


#: Keys of a config being written or exported are reported by their plain names.
CONFIG_KEYS = StepRewardsLocation("standalone")


def find_step_rewards(doc: Mapping[str, Any], file: str) -> StepRewardsLocation | None:
    """The table the task app (or trainer) reads from a parsed TOML, or None when there is none.

    Precedence follows the task app: policy_config when present and non-empty, else
    env_config; then trainer-style flat keys; then a standalone ``[step_rewards]``.

    Args:
        doc: The parsed TOML.
        file: The file's name, for error messages.

    Returns:
        Where the keys are, or None.

    Raises:
        ConfigError: A step_rewards key holds something other than a table; names the file and key.
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
        raise config_error(file, ".".join(path), f"expected a table, got {show_value(table)}")
    return table


def extract(doc: Mapping[str, Any], location: StepRewardsLocation) -> dict[str, Any]:
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


def config_error(file: str, key_path: str, message: str) -> ConfigError:
    """A ``ConfigError`` naming the file and the dotted key path."""
    return ConfigError(f"{file}: {key_path}: {message}")


def show_value(value: Any) -> str:
    """A value as a message shows it: TOML/YAML spellings for bools and null, kinds for tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, int) and value.bit_length() > 64:
        # repr of an integer past 4300 digits raises ValueError; a long one says little anyway
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
