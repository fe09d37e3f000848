"""``workbench diagnose CONFIG CORPUS``: printed flags and tables, --out, --figure, errors."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
from helpers import REPO
from helpers.hand_episodes import HONEST, hand_episode

from workbench.analysis.diagnostics import TABLES
from workbench.cli import main
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus

SHAPED = REPO / "configs" / "upstream_shaped.yaml"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["diagnose", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_flags_with_why_and_tables(capsys):
    code, out, err = run(capsys, SHAPED, "sample", "--reps", "200")
    assert code == 0 and err == ""
    assert out.startswith(
        f"diagnosis of {SHAPED} (per_achievement, lambda x0.5) on 10 episode(s), grouped by policy: 21 flag(s)"
    )
    assert "[farming] repeats-outweigh-credits farmer-s2024-00001: repeated resource events paid 6.765" in out
    assert "[dominance] resource-shaping-dominates policy farmer: resource shaping is 59%" in out
    assert "[alignment] misranked-pairs farmer-s2024-00001 / scripted-s2024-00000" in out
    assert "[dead entries] never-produced resource_weights.inventory.bow" in out
    for title in (
        "farming per episode",
        "cycles with laps",
        "dominance by kind",
        "dead entries",
        "alignment",
        "misranked pairs",
        "sensitivity",
    ):
        assert f"\n{title}" in out
    assert "estimated achievement counts" not in out  # the sample's counts are Crafter's own


def test_out_writes_every_table_and_refuses_to_overwrite(capsys, tmp_path):
    out = tmp_path / "results" / "d.parquet"
    figure = tmp_path / "results" / "d.png"
    code, stdout, _ = run(capsys, SHAPED, "sample", "--reps", "50", "--out", out, "--figure", figure)
    assert code == 0
    paths = {table: out.with_name(f"d.{table}.parquet") for table in TABLES}
    assert all(p.exists() for p in paths.values()) and figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {figure}" in stdout
    flags = pd.read_parquet(paths["flags"])
    assert len(flags) == 21 and list(flags.columns) == ["section", "code", "subject", "why"]
    sensitivity = pd.read_parquet(paths["sensitivity"])
    assert len(sensitivity) == 22 and sensitivity["misranked_after_fix"].dtype == "Int64"
    before = {p: p.stat().st_mtime_ns for p in [*paths.values(), figure]}
    code, _, err = run(capsys, SHAPED, "sample", "--out", out, "--figure", figure)
    assert code == 2 and "already exist(s); pass --overwrite" in err
    assert {p: p.stat().st_mtime_ns for p in before} == before  # nothing touched
    assert run(capsys, SHAPED, "sample", "--reps", "50", "--out", out, "--figure", figure, "--overwrite")[0] == 0


def test_csv_out_and_bad_usage(capsys, tmp_path):
    out = tmp_path / "d.csv"
    assert run(capsys, SHAPED, "sample", "--reps", "20", "--out", out)[0] == 0
    farming = pd.read_csv(tmp_path / "d.farming.csv")
    assert {"episode", "policy", "kind", "name", "times_paid", "repeat_paid", "counts", "estimated"} <= set(farming)
    code, _, err = run(capsys, SHAPED, "sample", "--out", tmp_path / "d.xlsx")
    assert code == 2 and "--out must end in .parquet or .csv" in err
    code, _, err = run(capsys, SHAPED, "sample", "--figure", tmp_path / "f.svg")
    assert code == 2 and "--figure must end in .png" in err
    code, _, err = run(capsys, SHAPED, "sample", "--by", "team")
    assert code == 2 and "no corpus index column 'team'" in err
    code, _, err = run(capsys, SHAPED, tmp_path / "missing")
    assert code == 2 and "no such corpus folder" in err
    code, _, err = run(capsys, tmp_path / "missing.yaml", "sample")
    assert code == 2 and "missing.yaml" in err


def test_estimated_counts_are_named(capsys, tmp_path):
    corpus = Corpus([sample_corpus()[0], hand_episode("text-00000", HONEST, policy="llm", counts=False)])
    corpus.save(tmp_path / "corpus")
    code, out, _ = run(capsys, SHAPED, tmp_path / "corpus", "--reps", "20")
    assert code == 0
    assert (
        "note: 1 episode(s) have estimated achievement counts, so their count shaping (achievement_count rows) "
        "is an estimate: text-00000"
    ) in out


def test_a_real_process_runs_it(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout's package, wherever the venv points
    help_text = subprocess.run(
        [sys.executable, "-m", "workbench", "diagnose", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env=env,
    ).stdout
    assert "workbench diagnose configs/upstream_shaped.yaml sample" in help_text
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "diagnose", str(SHAPED), "sample", "--reps", "20"],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0 and "21 flag(s)" in result.stdout
