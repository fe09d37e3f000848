"""``workbench advantages CONFIG CORPUS``: printed flags and tables, --out, errors."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import REPO

from workbench.cli import main

SHAPED = REPO / "configs" / "upstream_shaped.yaml"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["advantages", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_rollouts_groups_and_flags(capsys):
    code, out, err = run(capsys, SHAPED, "sample")
    assert code == 0, err
    # The sample: 10 episodes, seeds shared by scripted / farmer / random, and one seed alone.
    assert "on 10 rollout(s) in 4 group(s) by seed" in out
    assert "no-group group 3" in out
    for column in ("grpo", "dr_grpo", "rloo", "gdpo", "discordant_achievements"):
        assert column in out


def test_out_writes_every_table(capsys, tmp_path):
    out = tmp_path / "adv.csv"
    code, stdout, err = run(capsys, SHAPED, "sample", "--by", "seed,policy", "--out", out, "--gamma", "1", "--lam", "1")
    assert code == 0, err
    episodes = pd.read_csv(tmp_path / "adv.episodes.csv")
    decisions = pd.read_csv(tmp_path / "adv.decisions.csv")
    # seed and policy together: every sample episode is alone in its group, so every advantage is 0.
    assert (episodes["grpo"] == 0).all() and (episodes["rloo"] == 0).all()
    # gamma = lambda = 1: each episode's first credit is its whole shaped return.
    first = decisions.groupby("episode")["credit"].first()
    assert first.loc[episodes["episode"]].to_numpy() == pytest.approx(episodes["return"].to_numpy())
    assert (tmp_path / "adv.groups.csv").exists() and (tmp_path / "adv.flags.csv").exists()
    code, _, err = run(capsys, SHAPED, "sample", "--out", out)
    assert code == 2 and "already exist" in err


def test_bad_usage_exits_2(capsys):
    code, _, err = run(capsys, SHAPED, "sample", "--by", "version")
    assert code == 2 and "no index column 'version'" in err
    code, _, err = run(capsys, SHAPED, "sample", "--gamma", "2")
    assert code == 2 and "gamma" in err
