"""``workbench config lint | convert | export``, run in-process through ``workbench.cli.main``."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from helpers import REPO

from workbench.cli import main
from workbench.core.config import RewardConfig

CONFIGS = REPO / "configs"
RECOMMENDED = CONFIGS / "recommended.yaml"
SHAPED = CONFIGS / "upstream_shaped.yaml"
TRAINER_TOML = CONFIGS / "examples" / "trainer_shaped.toml"
TASK_APP_TOML = CONFIGS / "examples" / "task_app_complex.toml"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["config", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


# -- lint -----------------------------------------------------------------------------------------
def test_lint_clean_file_prints_ok(capsys):
    assert run(capsys, "lint", CONFIGS / "consistent.yaml") == (
        0,
        f"{CONFIGS / 'consistent.yaml'}: ok\n",
        "",
    )


def test_lint_info_findings_do_not_fail(capsys):
    code, out, _ = run(capsys, "lint", RECOMMENDED)
    assert code == 0
    assert out.splitlines() and all(line.startswith(f"{RECOMMENDED}: info ") for line in out.splitlines())


def test_lint_errors_exit_1_with_one_line_per_finding(capsys):
    code, out, err = run(capsys, "lint", SHAPED, TASK_APP_TOML)
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert (
        f"{SHAPED}: error unknown-achievement weights.collect_food: 'collect_food' is not a Crafter "
        "achievement: the task app ignores this entry (did you mean eat_cow or eat_plant?)"
    ) in lines
    assert any(line.startswith(f"{SHAPED}: warning k-limit-above-one k_limits.collect_wood: ") for line in lines)
    assert any(
        line.startswith(f"{TASK_APP_TOML}: error unknown-achievement weights.craft_wood_pickaxe: ")
        and line.endswith("(did you mean make_wood_pickaxe?)")
        for line in lines
    )


def test_lint_unreadable_file_exits_2_with_one_line_and_lints_nothing(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("weights:\n  collect_wood: abc\n")
    code, out, err = run(capsys, "lint", RECOMMENDED, bad)
    assert code == 2 and out == ""
    assert err == f"workbench: error: {bad}: weights.collect_wood: expected a number, got 'abc'\n"


# -- convert --------------------------------------------------------------------------------------
def test_convert_yaml_to_toml_and_back(capsys, tmp_path):
    toml, yaml = tmp_path / "r.toml", tmp_path / "r.yaml"
    assert run(capsys, "convert", RECOMMENDED, toml) == (0, f"wrote {toml}\n", "")
    assert run(capsys, "convert", toml, yaml)[0] == 0
    assert RewardConfig.from_file(yaml) == RewardConfig.from_file(RECOMMENDED)


def test_convert_extracts_a_training_tomls_step_rewards(capsys, tmp_path):
    out = tmp_path / "shaped.yaml"
    assert run(capsys, "convert", TRAINER_TOML, out)[0] == 0
    assert RewardConfig.from_file(out) == RewardConfig.from_file(SHAPED)


def test_convert_refuses_to_overwrite_without_the_flag(capsys, tmp_path):
    out = tmp_path / "r.yaml"
    out.write_text("keep me\n")
    code, stdout, err = run(capsys, "convert", RECOMMENDED, out)
    assert (code, stdout) == (2, "")
    assert err == f"workbench: error: {out}: already exists; pass --overwrite to replace it\n"
    assert out.read_text() == "keep me\n"
    assert run(capsys, "convert", RECOMMENDED, out, "--overwrite")[0] == 0
    assert RewardConfig.from_file(out) == RewardConfig.from_file(RECOMMENDED)


def test_convert_bad_input_exits_2_with_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "convert", tmp_path / "missing.yaml", tmp_path / "out.yaml")
    assert code == 2 and err == f"workbench: error: {tmp_path / 'missing.yaml'}: no such file\n"
    code, _, err = run(capsys, "convert", RECOMMENDED, tmp_path / "out.json")
    assert code == 2 and "out.json: unknown file type '.json'" in err and err.count("\n") == 1


# -- export ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "source,described",
    [
        (TRAINER_TOML, "trainer style: step_rewards_* keys under [training]"),
        (TASK_APP_TOML, "task-app style: [rollout.env_config.step_rewards]"),
    ],
)
def test_export_reports_the_path_and_style(capsys, tmp_path, source, described):
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    assert run(capsys, "export", RECOMMENDED, target) == (0, f"updated {target} ({described})\n", "")
    assert RewardConfig.from_file(target) == RewardConfig.from_file(RECOMMENDED)
    code, out, _ = run(capsys, "export", RECOMMENDED, target)
    assert code == 0 and out.startswith(f"already up to date: {target}")


def test_export_notes_dropped_overrides_and_lint_errors(capsys, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(SHAPED.read_text() + "resource_weights:\n  inventory_default: 0.0\n")
    target = tmp_path / "t.toml"
    shutil.copyfile(TRAINER_TOML, target)
    code, out, _ = run(capsys, "export", config, target)
    assert code == 0
    assert "note: resource_weights overrides not written" in out
    assert f"note: {config} has 2 lint error(s)" in out


def test_export_into_a_file_without_step_rewards_exits_2(capsys, tmp_path):
    target = tmp_path / "t.toml"
    target.write_text("[model]\nbase = 'x'\n")
    code, _, err = run(capsys, "export", RECOMMENDED, target)
    assert code == 2 and "has no step_rewards keys to update" in err
    assert target.read_text() == "[model]\nbase = 'x'\n"


# -- usage and help -------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [["lint"], ["convert", "a.yaml"], ["export", "a.yaml"], []])
def test_bad_usage_exits_2(capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        main(["config", *argv])
    assert exit_.value.code == 2


@pytest.mark.parametrize("command", ["lint", "convert", "export"])
def test_every_command_has_help_with_examples(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main(["config", command, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: workbench config {command}" in out
    assert "examples:" in out and f"workbench config {command} " in out
    assert "formats (detected from the file):" in out


def test_config_help_runs_as_a_module():
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "config", "--help"], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert "usage: workbench config" in result.stdout
    for command in ("lint", "convert", "export"):
        assert command in result.stdout


# -- named configs --------------------------------------------------------------------------------
def test_a_named_config_converts_to_a_file_and_a_bare_unknown_word_is_refused(capsys, tmp_path):
    out = tmp_path / "per_achievement.yaml"
    assert run(capsys, "convert", "per_achievement", out)[0] == 0
    assert RewardConfig.from_file(out) == RewardConfig(strategy="per_achievement", indicator_lambda=1.0)
    code, _, err = run(capsys, "lint", "per_achievment")
    assert code == 2 and "neither a config file" in err and "per_achievement" in err
