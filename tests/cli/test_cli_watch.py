"""``workbench watch``: appends what landed, prints it with each config's return, exit 1 on unreadable input."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import REPO

from workbench.cli import main
from workbench.core.config import RewardConfig
from workbench.data.importers import import_rollouts
from workbench.data.sample import sample_path
from workbench.data.storage import load_corpus
from workbench.scoring import score

ROLLOUTS = sample_path().parent / "sample_imports" / "rollouts"
RECOMMENDED = REPO / "configs" / "recommended.yaml"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["watch", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_once_appends_what_is_complete_and_prints_returns(capsys, tmp_path: Path) -> None:
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    shutil.copytree(ROLLOUTS, source)
    code, out, _ = run(capsys, source, "--into", target, "--once", "--config", RECOMMENDED)
    expected = import_rollouts(ROLLOUTS, progress=False).corpus
    assert code == 0 and load_corpus(target).ids == expected.ids
    returns = score(expected, RewardConfig.from_file(RECOMMENDED)).episodes.set_index("episode")["reward_sum"]
    for episode_id, paid in returns.items():
        line = next(line for line in out.splitlines() if line.startswith(f"+ {episode_id} "))
        assert f"recommended={paid:.4g}" in line
    assert f"appended {len(expected)} episode(s)" in out
    assert "tells its kind" not in out  # told by the path from the start: nothing to say
    code, out, _ = run(capsys, source, "--into", target, "--once")  # again: nothing new
    assert code == 0 and "appended 0 episode(s)" in out


def test_a_corrupt_file_exits_1_after_naming_it(capsys, tmp_path: Path) -> None:
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    source.mkdir()
    (source / "cut.json").write_text('{"run_id": "r", "traj', encoding="utf-8")
    code, _, err = run(capsys, source, "--into", target, "--interval", "0.01", "--max-polls", "6")
    assert code == 1 and "cut.json" in err and "not valid JSON" in err


def test_bad_usage_exits_2(capsys, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a database")
    code, _, err = run(capsys, tmp_path / "notes.txt", "--into", tmp_path / "corpus", "--once")
    assert code == 2 and "notes.txt" in err and "--kind" in err
    code, _, err = run(capsys, tmp_path / "empty", "--kind", "rollouts", "--into", tmp_path / "c", "--interval", "0")
    assert code == 2 and "--interval must be positive" in err
