"""Bad config files and config exports: named errors, the target file kept as it was."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess

import pytest
from helpers.hostile import RECOMMENDED, REPO, TRAINING_TOML, WORKBENCH, cli, one_line_error

from workbench.core.config import RewardConfig
from workbench.errors import ConfigError


def test_export_refuses_a_read_only_toml_unless_forced(tmp_path, capsys):
    target = tmp_path / "train.toml"
    target.write_text(TRAINING_TOML)
    target.chmod(0o444)
    code, _, err = cli("config", "export", RECOMMENDED, target, capsys=capsys)
    assert code == 2
    one_line_error(err, target, "read-only", "--force")
    assert target.read_text() == TRAINING_TOML
    assert cli("config", "export", RECOMMENDED, target, "--force", capsys=capsys)[0] == 0
    assert "per_achievement" in target.read_text() and "batch_size = 4  # keep" in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o444


def test_export_keeps_hard_links_only_when_forced(tmp_path, capsys):
    target, link = tmp_path / "train.toml", tmp_path / "link.toml"
    target.write_text(TRAINING_TOML)
    os.link(target, link)
    code, _, err = cli("config", "export", RECOMMENDED, target, capsys=capsys)
    assert code == 2
    one_line_error(err, target, "hard links", "--force")
    assert link.read_text() == TRAINING_TOML
    assert cli("config", "export", RECOMMENDED, target, "--force", capsys=capsys)[0] == 0
    assert os.path.samefile(target, link) and "per_achievement" in link.read_text()
    assert RewardConfig.from_file(link) == RewardConfig.from_file(target)


def test_export_keeps_crlf_line_endings(tmp_path, capsys):
    target = tmp_path / "train.toml"
    target.write_bytes(TRAINING_TOML.replace("\n", "\r\n").encode())
    assert cli("config", "export", RECOMMENDED, target, capsys=capsys)[0] == 0
    data = target.read_bytes()
    assert b"per_achievement" in data and data.count(b"\n") == data.count(b"\r\n")
    assert RewardConfig.from_file(target).effective_strategy == "per_achievement"


@pytest.mark.slow  # two subprocesses: a hang must not hang the test run
def test_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "x.toml"
    os.mkfifo(fifo)
    for argv in (["config", "export", RECOMMENDED, fifo], ["config", "lint", fifo]):
        done = subprocess.run(
            [*WORKBENCH, *map(str, argv)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert done.returncode == 2 and "Traceback" not in done.stderr
        one_line_error(done.stderr, fifo, "not a regular file")


def test_export_into_an_unwritable_folder(read_only_dir, capsys):
    target = read_only_dir / "train.toml"
    code, _, err = cli("config", "export", RECOMMENDED, target, "--force", capsys=capsys)
    assert code == 2
    one_line_error(err, target)
    assert target.read_text() == TRAINING_TOML


def test_export_on_a_full_disk(full_disk, capsys):
    target = full_disk / "train.toml"
    target.write_text(TRAINING_TOML)
    with open(full_disk / "more", "wb", buffering=0) as handle, contextlib.suppress(OSError):
        while True:  # the last bytes too
            handle.write(b"\0" * 512)
    code, _, err = cli("config", "export", RECOMMENDED, target, capsys=capsys)
    assert code == 2
    one_line_error(err, target)
    assert target.read_text() == TRAINING_TOML
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler", "more", "train.toml"]


@pytest.mark.parametrize(
    ("name", "text", "named"),
    [
        pytest.param(
            "deep.yaml", "weights: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply", marks=pytest.mark.slow
        ),  # PyYAML takes seconds to reach its recursion limit
        ("deep.toml", "[step_rewards]\nweights = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
        ("digits.yaml", "step_beta: " + "5" * 5000 + "\n", "digits"),
        ("digits.toml", "[step_rewards]\nstep_beta = " + "5" * 5000 + "\n", "digits"),
        (
            "k.yaml",
            "strategy: per_achievement\nk_limits:\n  collect_wood: " + "1" + "0" * 29 + "\n",
            "k_limits.collect_wood",
        ),
        ("w.toml", "[step_rewards]\nweights = { collect_wood = 1e308 }\n", "weights.collect_wood"),
        ("l.yaml", "indicator_lambda: 1.0e+308\n", "indicator_lambda"),
        ("hint.yaml", "indicator_lambda: 1.0e3\n", "1.0e+3"),
    ],
)
def test_config_files_give_named_errors(tmp_path, capsys, name, text, named):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        RewardConfig.from_file(path)
    assert str(path) in str(caught.value) and named in str(caught.value)
    assert "remove the quotes" not in str(caught.value)
    code, _, err = cli("config", "lint", path, capsys=capsys)
    assert code == 2
    one_line_error(err, path, named)


def test_the_quotes_hint_only_for_quoted_numbers(tmp_path):
    path = tmp_path / "q.yaml"
    path.write_text('indicator_lambda: "1.5"\n')
    with pytest.raises(ConfigError, match="remove the quotes"):
        RewardConfig.from_file(path)


@pytest.mark.parametrize(
    ("config", "key"),
    [
        (RewardConfig(strategy="per_achievement", k_limits={"collect_wood": 10**29}), "k_limits.collect_wood"),
        (RewardConfig(weights={"collect_wood": 1e308}), "weights.collect_wood"),
        (RewardConfig(indicator_lambda=1e308), "indicator_lambda"),
    ],
)
def test_a_config_built_in_code_is_checked_before_export(tmp_path, config, key):
    target = tmp_path / "train.toml"
    target.write_text(TRAINING_TOML)
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        config.export_into(target)
    assert target.read_text() == TRAINING_TOML
    for suffix in (".yaml", ".toml"):
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            config.to_file(tmp_path / f"c{suffix}")
        assert not (tmp_path / f"c{suffix}").exists()


def test_a_config_built_in_code_that_overflows_is_refused():
    from workbench.data.sample import sample_corpus
    from workbench.scoring import score

    with pytest.raises(ConfigError, match=r"weights\.collect_wood"):
        score(sample_corpus(), RewardConfig(strategy="per_achievement", weights={"collect_wood": 1e308}))
