"""Reading, writing and exporting reward configs (RewardConfig files, workbench.core.config_io, workbench.util.atomic)."""

from __future__ import annotations

import math
import os
import re
import shutil
import stat
from pathlib import Path

import pytest
from helpers import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.config import ConfigError, RewardConfig
from workbench.core.config_io import StepRewardsLocation, export_table, find_step_rewards
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.util.atomic import atomic_path, atomic_write_bytes, atomic_write_text


def _export(config: RewardConfig, path):
    """What exporting ``config`` into the TOML at ``path`` did."""
    return export_table(config.to_task_app_dict(), path, resource_overrides=bool(config.resource_overrides))


CONFIGS = REPO / "configs"
EXAMPLES = CONFIGS / "examples"
SHIPPED = sorted(CONFIGS.glob("*.yaml"))
TRAINER_TOML = EXAMPLES / "trainer_shaped.toml"
TASK_APP_TOML = EXAMPLES / "task_app_complex.toml"
OVERRIDES = {"inventory": {"wood": 0.2, "sapling": 0.0}, "inventory_default": 0.01, "achievement_count_default": 0.0}


def test_the_shipped_configs_are_there():
    assert {p.stem for p in SHIPPED} >= {"consistent", "upstream_shaped", "upstream_complex", "recommended"}
    for path in SHIPPED:
        assert path.read_text().startswith("# "), f"{path.name} must open with a comment saying what it is for"


# -- round trips ----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".toml"])
def test_shipped_configs_round_trip_through_every_format(path, suffix, tmp_path):
    config = RewardConfig.from_file(path)
    written = config.to_file(tmp_path / f"copy{suffix}")
    assert RewardConfig.from_file(written) == config
    assert RewardConfig.from_dict(config.to_dict()) == config
    assert RewardConfig.from_dict(config.to_task_app_dict()) == config


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_yaml_to_toml_to_yaml_is_stable(path, tmp_path):
    config = RewardConfig.from_file(path)
    toml = config.to_file(tmp_path / "a.toml")
    yaml_again = RewardConfig.from_file(toml).to_file(tmp_path / "b.yaml")
    assert RewardConfig.from_file(yaml_again) == config


@pytest.mark.parametrize("suffix", [".yaml", ".toml"])
def test_resource_overrides_round_trip_and_are_marked_as_ours(suffix, tmp_path):
    config = RewardConfig.from_file(CONFIGS / "recommended.yaml").with_changes(resource_overrides=OVERRIDES)
    path = config.to_file(tmp_path / f"c{suffix}")
    assert RewardConfig.from_file(path) == config
    text = path.read_text()
    assert "resource_weights" in text and "task app cannot express" in text
    if suffix == ".toml":
        assert "[step_rewards.resource_weights.inventory]" in text


def test_written_yaml_opens_with_a_comment_and_toml_is_a_standalone_table(tmp_path):
    config = RewardConfig.from_file(CONFIGS / "upstream_shaped.yaml")
    yaml_text = config.to_file(tmp_path / "c.yaml").read_text()
    toml_text = config.to_file(tmp_path / "c.toml").read_text()
    assert yaml_text.startswith("# ")
    assert (
        "[step_rewards]" in toml_text
        and "[step_rewards.weights]" in toml_text
        and "[step_rewards.k_limits]" in toml_text
    )
    assert find_step_rewards({"step_rewards": {}}, "x") == StepRewardsLocation("standalone", ("step_rewards",))


# -- both TOML styles -----------------------------------------------------------------------------
def test_trainer_style_example_reads_as_the_upstream_shaped_config():
    assert RewardConfig.from_file(TRAINER_TOML) == RewardConfig.from_file(CONFIGS / "upstream_shaped.yaml")


def test_task_app_style_example_reads_as_the_upstream_complex_config():
    assert RewardConfig.from_file(TASK_APP_TOML) == RewardConfig.from_file(CONFIGS / "upstream_complex.yaml")


def _toml(tmp_path: Path, text: str, name: str = "train.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_policy_config_takes_precedence_when_non_empty(tmp_path):
    path = _toml(
        tmp_path,
        """
[rollout.env_config.step_rewards]
enabled = false
[rollout.policy_config.step_rewards]
enabled = true
mode = "decision_stepwise"
""",
    )
    assert RewardConfig.from_file(path).active
    assert find_step_rewards(
        {"rollout": {"policy_config": {"step_rewards": {"enabled": True}}, "env_config": {"step_rewards": {}}}}, "f"
    ).table == ("rollout", "policy_config", "step_rewards")


def test_an_empty_policy_table_falls_back_to_env_config(tmp_path):
    path = _toml(
        tmp_path,
        """
[rollout.policy_config.step_rewards]
[rollout.env_config.step_rewards]
enabled = true
strategy = "complex"
""",
    )
    config = RewardConfig.from_file(path)
    assert config.enabled and config.strategy == "complex"


def test_trainer_style_ignores_event_rewards_kind_and_other_training_keys(tmp_path):
    path = _toml(
        tmp_path,
        """
[training]
learning_rate = 1e-5
event_rewards_kind = "unique"
step_rewards_enabled = true
step_rewards_beta = 0.25
""",
    )
    config = RewardConfig.from_file(path)
    assert config.enabled and config.step_beta == 0.25 and config.mode == "off"


def test_task_app_tables_win_over_trainer_keys(tmp_path):
    path = _toml(
        tmp_path,
        """
[training]
step_rewards_enabled = false
[rollout.env_config.step_rewards]
enabled = true
""",
    )
    assert RewardConfig.from_file(path).enabled


# -- strict reading -------------------------------------------------------------------------------
YAML_ERRORS = [
    ("weights:\n  collect_wood: abc\n", "weights.collect_wood: expected a number, got 'abc'"),
    ("weights: [1, 2]\n", "weights: expected a table"),
    ("weights:\n  collect_wood: true\n", "weights.collect_wood: expected a number, got true"),
    ("weights:\n  collect_wood: '0.3'\n", "remove the quotes"),
    ("weights:\n  collect_wood: 1e-3\n", "write 1.0e-3"),
    ("weights:\n  collect_wood: .nan\n", "weights.collect_wood: expected a finite number, got nan"),
    ("indicator_lambda: .inf\n", "indicator_lambda: expected a finite number, got inf"),
    ("indicator_lambda:\n", "indicator_lambda: expected a number, got null"),
    ("weights:\n  1: 0.5\n", "weights: expected names as keys, got 1"),
    ("k_limits:\n  collect_wood: 1.7\n", "k_limits.collect_wood: expected an integer, got 1.7"),
    ("k_limits:\n  collect_wood: '2'\n", "k_limits.collect_wood: expected an integer, got '2'"),
    ("enabled: 'yes'\n", "enabled: expected true or false, got 'yes'"),
    ("enabled: 1\n", "enabled: expected true or false, got 1"),
    ("strategy: 3\n", "strategy: expected a string, got 3"),
    ("k_limit:\n  collect_wood: 1\n", "k_limit: unknown key; expected one of"),
    ("lambda: 1.0\n", "(did you mean indicator_lambda?)"),
    (
        "resource_weights:\n  inventory:\n    wood: high\n",
        "resource_weights.inventory.wood: expected a number, got 'high'",
    ),
    ("resource_weights:\n  items: {}\n", "resource_weights.items: unknown key"),
    ("description: 3\n", "description: expected a string, got 3"),
    ("enabled: true\nmode: [unclosed\n", "line 3"),
    ("enabled: true\n  mode: x\n", "line 2"),
    (
        "weights:\n  collect_wood: 1\n  collect_wood: 2\n",
        "line 3, column 3: invalid YAML: duplicate key 'collect_wood'",
    ),
    ("", "empty file"),
    ("- enabled\n", "expected a mapping of step_rewards keys at the top level, got a list"),
]


@pytest.mark.parametrize("text,expected", YAML_ERRORS, ids=[e for _, e in YAML_ERRORS])
def test_yaml_errors_name_file_key_and_expectation(text, expected, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        RewardConfig.from_file(path)
    message = str(error.value)
    assert message.startswith(f"{path}: ")
    assert expected in message
    assert "\n" not in message


TOML_ERRORS = [
    (
        '[rollout.env_config.step_rewards]\nenabled = true\n[rollout.env_config.step_rewards.weights]\ncollect_wood = "abc"\n',
        "rollout.env_config.step_rewards.weights.collect_wood: expected a number, got 'abc'",
    ),
    ("[rollout.env_config.step_rewards]\nweights = 3\n", "rollout.env_config.step_rewards.weights: expected a table"),
    (
        "[rollout.env_config.step_rewards]\nindicator_lambda = nan\n",
        "rollout.env_config.step_rewards.indicator_lambda: expected a finite number, got nan",
    ),
    (
        "[rollout.env_config.step_rewards]\nresource_weights = {}\n",
        "rollout.env_config.step_rewards.resource_weights: unknown key",
    ),
    ("[rollout.env_config]\nstep_rewards = 3\n", "rollout.env_config.step_rewards: expected a table, got 3"),
    (
        "[training]\nstep_rewards_k_limits = { collect_wood = 2.5 }\n",
        "training.step_rewards_k_limits.collect_wood: expected an integer, got 2.5",
    ),
    (
        '[training]\nstep_rewards_enabled = "true"\n',
        "training.step_rewards_enabled: expected true or false, got 'true'",
    ),
    (
        "[training]\nstep_rewards_lambda = 0.5\n",
        "training.step_rewards_lambda: unknown key; expected one of step_rewards_enabled",
    ),
    ("[training]\nstep_rewards_lambda = 0.5\n", "(did you mean step_rewards_indicator_lambda?)"),
    ("[step_rewards]\nstep_beta = -inf\n", "step_rewards.step_beta: expected a finite number, got -inf"),
    ('[model]\nbase = "x"\n[training]\nlr = 1\n', "no step_rewards found"),
    ("[training]\nlr = \n", "invalid TOML: Invalid value (at line 2"),
]


@pytest.mark.parametrize("text,expected", TOML_ERRORS, ids=[e for _, e in TOML_ERRORS])
def test_toml_errors_name_file_key_and_expectation(text, expected, tmp_path):
    path = _toml(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        RewardConfig.from_file(path)
    assert str(error.value).startswith(f"{path}: ")
    assert expected in str(error.value)


def test_missing_unknown_and_unreadable_files(tmp_path):
    with pytest.raises(ConfigError, match=re.escape(f"{tmp_path / 'nope.yaml'}: no such file")):
        RewardConfig.from_file(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="unknown file type '.json'; expected .yaml, .yml or .toml"):
        RewardConfig.from_file(tmp_path / "x.json")
    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(ConfigError, match="is a directory"):
        RewardConfig.from_file(tmp_path / "dir.yaml")
    (tmp_path / "latin.yaml").write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        RewardConfig.from_file(tmp_path / "latin.yaml")


def test_strict_reading_still_accepts_what_lint_is_for(tmp_path):
    path = tmp_path / "odd.yaml"
    path.write_text(
        "enabled: true\nmode: decision_stepwise\nstrategy: per_achievment\n"
        "weights:\n  craft_wood_pickaxe: -0.5\nk_limits:\n  collect_wood: 7\n"
    )
    config = RewardConfig.from_file(path)
    assert config.strategy == "per_achievment" and config.weights == {"craft_wood_pickaxe": -0.5}
    assert config.k_limits == {"collect_wood": 7}


def test_yaml_null_tables_are_empty_and_missing_keys_take_task_app_defaults(tmp_path):
    path = tmp_path / "sparse.yaml"
    path.write_text("weights:\nk_limits:\nresource_weights:\n")
    assert RewardConfig.from_file(path) == RewardConfig.from_dict({})


# -- writing --------------------------------------------------------------------------------------
def test_write_refuses_to_replace_without_overwrite(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("original\n")
    with pytest.raises(FileExistsError, match=re.escape(f"{path}: already exists; pass overwrite=True")):
        RewardConfig().to_file(path)
    assert path.read_text() == "original\n"
    RewardConfig().to_file(path, overwrite=True)
    assert RewardConfig.from_file(path) == RewardConfig()


def test_write_refuses_unknown_extensions_and_unwritable_configs(tmp_path):
    with pytest.raises(ConfigError, match="unknown file type"):
        RewardConfig().to_file(tmp_path / "c.json")
    with pytest.raises(
        ConfigError, match=r"cannot write .*c\.toml: weights\.collect_wood: expected a finite number, got nan"
    ):
        RewardConfig(weights={"collect_wood": math.nan}).to_file(tmp_path / "c.toml")
    with pytest.raises(ConfigError, match="strategy: expected a string, got null"):
        RewardConfig(strategy=None).to_file(tmp_path / "c.yaml")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ConfigError, match="cannot write"):
        RewardConfig().to_file(tmp_path / "no" / "such" / "dir.yaml")


def test_a_failing_write_leaves_the_original_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "c.yaml"
    RewardConfig().to_file(path)
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(ConfigError, match="No space left on device"):
        RewardConfig(strategy="per_achievement").to_file(path, overwrite=True)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"]


# -- atomic writes --------------------------------------------------------------------------------
def test_atomic_path_removes_the_temporary_file_and_keeps_the_original_on_error(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_path(path, overwrite=True) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("writer crashed")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["data.bin"]


def test_atomic_path_renames_into_place_on_success(tmp_path):
    path = tmp_path / "data.bin"
    with atomic_path(path) as tmp:
        assert tmp.parent == tmp_path and tmp.exists() and not path.exists()
        with open(tmp, "wb") as handle:
            handle.write(b"new")
    assert path.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["data.bin"]


def test_atomic_writes_refuse_existing_files_unless_told(tmp_path):
    path = tmp_path / "t.txt"
    atomic_write_text(path, "one\r\n")
    assert path.read_bytes() == b"one\r\n"  # no newline translation
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        atomic_write_text(path, "two")
    with pytest.raises(FileExistsError):
        atomic_write_bytes(path, b"two")
    assert atomic_write_bytes(path, b"two", overwrite=True) == path
    assert path.read_bytes() == b"two"


def test_atomic_path_does_not_clobber_a_file_created_meanwhile(tmp_path):
    path = tmp_path / "race.txt"
    with pytest.raises(FileExistsError):
        with atomic_path(path) as tmp:
            tmp.write_text("mine")
            path.write_text("theirs")
    assert path.read_text() == "theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["race.txt"]


def test_atomic_writes_respect_umask_keep_modes_and_follow_symlinks(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    fresh = atomic_write_text(tmp_path / "fresh.txt", "x")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask
    private = tmp_path / "private.txt"
    private.write_text("secret")
    private.chmod(0o600)
    atomic_write_text(private, "new", overwrite=True)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    link = tmp_path / "link.txt"
    link.symlink_to(private)
    atomic_write_text(link, "through the link", overwrite=True)
    assert link.is_symlink() and private.read_text() == "through the link"


# -- export into training TOMLs -------------------------------------------------------------------
def _copy(tmp_path: Path, source: Path) -> Path:
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    return target


def _outside_step_rewards(text: str, style: str) -> list[str]:
    """The file's lines that export must not touch."""
    if style == "trainer":
        return [line for line in text.splitlines() if not line.startswith("step_rewards_")]
    kept, inside = [], False
    for line in text.splitlines():
        if line.startswith("["):
            inside = line.startswith("[rollout.env_config.step_rewards")
        if not inside:
            kept.append(line)
    return kept


@pytest.mark.parametrize("source,style", [(TRAINER_TOML, "trainer"), (TASK_APP_TOML, "task-app")])
def test_export_keeps_every_other_line_and_comment(source, style, tmp_path):
    path = _copy(tmp_path, source)
    recommended = RewardConfig.from_file(CONFIGS / "recommended.yaml")
    result = _export(recommended, path)
    assert result.changed and result.location.style == style and result.path == path
    before, after = source.read_text(), path.read_text()
    assert _outside_step_rewards(after, style) == _outside_step_rewards(before, style)
    comments = [line for line in _outside_step_rewards(before, style) if "#" in line]
    assert comments and all(line in after.splitlines() for line in comments)
    assert RewardConfig.from_file(path) == recommended


@pytest.mark.parametrize("source,style", [(TRAINER_TOML, "trainer"), (TASK_APP_TOML, "task-app")])
def test_export_of_every_shipped_config_reads_back_equal(source, style, tmp_path):
    for config_path in SHIPPED:
        path = _copy(tmp_path, source)
        config = RewardConfig.from_file(config_path)
        config.export_into(path)
        assert RewardConfig.from_file(path) == config, config_path.name
        assert _outside_step_rewards(path.read_text(), style) == _outside_step_rewards(source.read_text(), style)


@pytest.mark.parametrize("source,config_name", [(TRAINER_TOML, "upstream_shaped"), (TASK_APP_TOML, "upstream_complex")])
def test_exporting_what_a_file_already_says_changes_no_byte(source, config_name, tmp_path):
    path = _copy(tmp_path, source)
    result = _export(RewardConfig.from_file(CONFIGS / f"{config_name}.yaml"), path)
    assert not result.changed
    assert path.read_bytes() == source.read_bytes()


def test_export_changes_values_in_place_keeping_their_comments(tmp_path):
    path = _copy(tmp_path, TASK_APP_TOML)
    config = RewardConfig.from_file(path)
    config.with_changes(weights={**config.weights, "craft_wood_pickaxe": 0.5}).export_into(path)
    assert "craft_wood_pickaxe = 0.5   # not a Crafter achievement: make_wood_pickaxe" in path.read_text()
    before, after = TASK_APP_TOML.read_text().splitlines(), path.read_text().splitlines()
    assert [(a, b) for a, b in zip(before, after) if a != b] == [
        (
            "craft_wood_pickaxe = 0.3   # not a Crafter achievement: make_wood_pickaxe",
            "craft_wood_pickaxe = 0.5   # not a Crafter achievement: make_wood_pickaxe",
        )
    ]


def test_export_removes_keys_the_config_does_not_have(tmp_path):
    for source in (TRAINER_TOML, TASK_APP_TOML):
        path = _copy(tmp_path, source)
        RewardConfig(strategy="consistent").export_into(path)
        text = path.read_text()
        assert "weights" not in text and "k_limits" not in text
        assert RewardConfig.from_file(path) == RewardConfig(strategy="consistent")


def test_export_drops_resource_overrides_and_says_so(tmp_path):
    path = _copy(tmp_path, TASK_APP_TOML)
    config = RewardConfig.from_file(CONFIGS / "recommended.yaml").with_changes(resource_overrides=OVERRIDES)
    result = _export(config, path)
    assert result.dropped_resource_overrides
    assert "resource" not in path.read_text()
    assert RewardConfig.from_file(path) == config.with_changes(resource_overrides={})


def test_export_updates_the_policy_table_when_the_task_app_reads_that(tmp_path):
    text = """[rollout.env_config.step_rewards]
enabled = false   # env fallback
[rollout.policy_config.step_rewards]
enabled = true
"""
    path = _toml(tmp_path, text)
    RewardConfig(strategy="per_achievement").export_into(path)
    after = path.read_text()
    assert after.startswith("[rollout.env_config.step_rewards]\nenabled = false   # env fallback\n")
    assert RewardConfig.from_file(path) == RewardConfig(strategy="per_achievement")


def test_export_adds_trainer_keys_to_a_training_table_without_any(tmp_path):
    path = _toml(tmp_path, "# run\n[training]\nlearning_rate = 1e-5  # lr\n\n[training.lora]\nr = 8\n")
    result = _export(RewardConfig(), path)
    assert result.location.style == "trainer"
    text = path.read_text()
    assert text.startswith("# run\n[training]\nlearning_rate = 1e-5  # lr\nstep_rewards_enabled = true\n")
    assert text.endswith("\n\n[training.lora]\nr = 8\n")
    assert RewardConfig.from_file(path) == RewardConfig()


@pytest.mark.parametrize(
    "text",
    [
        # junk the task app would accept but the strict reader refuses is replaced, not kept
        "[training]\nstep_rewards_enabled = true\nstep_rewards_k_limits = { collect_wood = 2.0 }\n",
        '[training]\nstep_rewards_enabled = 1\nstep_rewards_weights = { collect_wood = "abc" }\nx = 1\n',
        # the last step_rewards line is removed while another is added
        "[training]\nstep_rewards_enabled = true\nstep_rewards_weights = { collect_wood = 1.0 }\nx = 1\n",
    ],
)
def test_export_repairs_junk_and_reorders_safely(text, tmp_path):
    path = _toml(tmp_path, text)
    config = RewardConfig(strategy="per_achievement", k_limits={"collect_wood": 2})
    config.export_into(path)
    assert RewardConfig.from_file(path) == config


EXPORT_REFUSALS = [
    ('[model]\nbase = "x"\n', "has no step_rewards keys to update"),
    ("[training]\nlr = 1\n[rollout]\nmax_turns = 3\n", "Add an empty [rollout.env_config.step_rewards] table"),
    ("[step_rewards]\nenabled = true\n", "a standalone workbench config, not a training TOML"),
    (
        "[rollout.env_config.step_rewards]\nenabled = true\nlambda = 1\n",
        "rollout.env_config.step_rewards.lambda: unknown key",
    ),
    ("[training]\nstep_rewards_enabled = true\nstep_rewards_lambda = 1\n", "training.step_rewards_lambda: unknown key"),
    # tomlkit cannot add a dotted-key sub-table so that it reads back: refused, not corrupted.
    (
        "[rollout]\nenv_config.step_rewards.enabled = true\nenv_config.step_rewards.weights.collect_wood = 1.0\n",
        "could not update task-app style: [rollout.env_config.step_rewards] in place",
    ),
    ("[training\n", "invalid TOML"),
]


@pytest.mark.parametrize("text,expected", EXPORT_REFUSALS, ids=[e for _, e in EXPORT_REFUSALS])
def test_export_refusals_leave_the_file_unchanged(text, expected, tmp_path):
    path = _toml(tmp_path, text)
    config = RewardConfig(strategy="per_achievement", k_limits={"collect_wood": 0})
    with pytest.raises(ConfigError, match=re.escape(expected)):
        config.export_into(path)
    assert path.read_text() == text


def test_export_refuses_missing_files_other_formats_and_unwritable_configs(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        RewardConfig().export_into(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="expected a training TOML"):
        RewardConfig().export_into(CONFIGS / "recommended.yaml")
    path = _copy(tmp_path, TRAINER_TOML)
    with pytest.raises(ConfigError, match=r"weights\.collect_wood: expected a finite number, got inf"):
        RewardConfig(weights={"collect_wood": math.inf}).export_into(path)
    assert path.read_bytes() == TRAINER_TOML.read_bytes()


def test_export_keeps_the_file_mode(tmp_path):
    path = _copy(tmp_path, TRAINER_TOML)
    path.chmod(0o640)
    RewardConfig().export_into(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_config_methods_delegate_to_this_module(tmp_path):
    config = RewardConfig.from_file(CONFIGS / "recommended.yaml")
    assert RewardConfig.from_file(CONFIGS / "recommended.yaml") == config
    assert RewardConfig.from_file(config.to_file(tmp_path / "r.toml")) == config
    path = _copy(tmp_path, TRAINER_TOML)
    assert config.export_into(path) == path and RewardConfig.from_file(path) == config


# -- properties -----------------------------------------------------------------------------------
json_ish = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=10,
)
TABLE_KEYS = ["enabled", "mode", "strategy", "weights", "k_limits", "indicator_lambda", "step_beta", "resource_weights"]
junk_tables = st.dictionaries(st.sampled_from(TABLE_KEYS) | st.text(max_size=6), json_ish, max_size=8)
junk_resources = st.fixed_dictionaries(
    {},
    optional={
        k: json_ish for k in ("inventory", "inventory_default", "achievement_counts", "achievement_count_default")
    },
)


@given(junk_tables, junk_resources)
def test_from_dict_never_raises_on_junk(table, resources):
    RewardConfig.from_dict(table)
    RewardConfig.from_dict({**table, "resource_weights": resources})


names = st.sampled_from(ACHIEVEMENTS) | st.text(min_size=1, max_size=12)
# The range config files accept (checks.MAX_MAGNITUDE, MAX_K_LIMIT): beyond it a score overflows.
finite = st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False)
valid_configs = st.builds(
    RewardConfig,
    enabled=st.booleans(),
    mode=st.sampled_from(["decision_stepwise", "off", "episode"]),
    strategy=st.sampled_from(["consistent", "per_achievement", "complex", "per_achievment", ""]) | st.text(max_size=12),
    weights=st.dictionaries(names, finite, max_size=5),
    k_limits=st.dictionaries(names, st.integers(-5, 2**31 - 1), max_size=5),
    indicator_lambda=finite,
    step_beta=finite,
)


@given(valid_configs)
def test_from_dict_inverts_to_task_app_dict(config):
    assert RewardConfig.from_dict(config.to_task_app_dict()) == config


@settings(max_examples=40, deadline=None)
@given(config=valid_configs, suffix=st.sampled_from([".yaml", ".toml"]))
def test_files_round_trip_any_valid_config(tmp_path_factory, config, suffix):
    path = tmp_path_factory.mktemp("roundtrip") / f"c{suffix}"
    assert RewardConfig.from_file(config.to_file(path)) == config


@settings(max_examples=25, deadline=None)
@given(config=valid_configs, source=st.sampled_from([TRAINER_TOML, TASK_APP_TOML]))
def test_export_round_trips_any_valid_config(tmp_path_factory, config, source):
    path = _copy(tmp_path_factory.mktemp("export"), source)
    config.export_into(path)
    assert RewardConfig.from_file(path) == config


@pytest.mark.parametrize("text", ["\x85", "a\u2028b", "x\u2029", "café λ"])
@pytest.mark.parametrize("suffix", [".yaml", ".toml"])
def test_unicode_line_breaks_survive_a_round_trip(tmp_path, text, suffix):
    # PyYAML writes NEL/LS/PS raw in single quotes with allow_unicode and reads them back as a
    # space; found by the property test above.
    config = RewardConfig(strategy=text, weights={"collect_wood": 0.5})
    assert RewardConfig.from_file(config.to_file(tmp_path / f"c{suffix}")) == config
