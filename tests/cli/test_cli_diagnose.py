"""``workbench diagnose CONFIG CORPUS``: printed flags and tables, --out, --figure, errors."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pandas as pd
from crafter import constants
from helpers import REPO
from helpers.hand_episodes import HONEST, hand_episode
from helpers.reference import episode_pay

from workbench.analysis.diagnostics import TABLES
from workbench.cli import main
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus

SHAPED = REPO / "configs" / "upstream_shaped.yaml"

#: The task app's resource tables, copied from the spec (reward.md), not from the package.
SPEC_INVENTORY = {
    **dict(wood=0.10, sapling=0.08, stone=0.15, coal=0.18, iron=0.22, plant=0.06, meat=0.12, drink=0.07),
    **dict(food=0.07, water=0.07, energy=0.04, wood_pickaxe=0.40, stone_pickaxe=0.55, iron_pickaxe=0.75),
    **dict(wood_sword=0.35, stone_sword=0.50, iron_sword=0.70, furnace=0.45, table=0.30, bow=0.45),
}
SPEC_COUNTS = ("collect_wood", "collect_sapling", "collect_stone", "collect_coal", "collect_iron", "collect_drink")
SPEC_COUNTS += ("collect_food", "collect_plant")


def expected_flags(corpus: Corpus, config: RewardConfig) -> dict[str, int]:
    """How many flags each section of ``diagnose`` (default thresholds) must raise, counted from
    its inputs by plain loops: the task app's function per decision (``helpers.reference``),
    Crafter's own item and achievement names, and the spec's resource tables."""
    pays = {episode.id: episode_pay(episode, config) for episode in corpus}
    policy = dict(zip(corpus.index["episode"], corpus.index["policy"]))
    # farming: an episode whose loop pay (at the cap, materials regained) outweighs its credits.
    farming = sum(abs(pay.loops) > abs(pay.credits) for pay in pays.values())
    # dominance: per policy, one flag per component past 25% of the summed |pay|, and one when
    # the resource kinds together pass 50%.
    dominance = 0
    for group in dict.fromkeys(policy.values()):
        paid: dict[tuple[str, str], float] = {}
        for episode_id, pay in pays.items():
            if policy[episode_id] == group:
                for key, value in pay.components.items():
                    paid[key] = paid.get(key, 0.0) + value
        total = sum(abs(value) for value in paid.values())
        dominance += sum(abs(value) / total > 0.25 for value in paid.values())
        dominance += sum(abs(v) for (kind, _), v in paid.items() if kind != "achievement") / total > 0.5
    # alignment: one flag if some episode is paid more than one with more achievements, one if
    # Kendall's tau-b of return against achievements is below 0.5.
    returns = {episode.id: sum(pays[episode.id].rewards) for episode in corpus}
    unlocked = {episode.id: len(episode.unlocked) for episode in corpus}
    ids = list(returns)
    pairs = [(a, b) for a in ids for b in ids if a < b]
    misranked = any((returns[a] - returns[b]) * (unlocked[a] - unlocked[b]) < 0 for a, b in pairs)
    concordant = sum((returns[a] - returns[b]) * (unlocked[a] - unlocked[b]) > 0 for a, b in pairs)
    discordant = sum((returns[a] - returns[b]) * (unlocked[a] - unlocked[b]) < 0 for a, b in pairs)
    untied_returns = sum(returns[a] != returns[b] for a, b in pairs)
    untied_unlocked = sum(unlocked[a] != unlocked[b] for a, b in pairs)
    tau = (concordant - discordant) / math.sqrt(untied_returns * untied_unlocked)
    alignment = int(misranked) + int(tau < 0.5)
    # dead entries: names Crafter does not have, k-limits above 1 (an achievement unlocks once),
    # and resource-table entries for items and counts Crafter never has.
    unknown = [
        name for table in (config.weights, config.k_limits) for name in table if name not in constants.achievements
    ]
    above_one = [name for name, limit in config.k_limits.items() if name in constants.achievements and limit > 1]
    never = [item for item in SPEC_INVENTORY if item not in constants.items]
    never += [name for name in SPEC_COUNTS if name not in constants.achievements]
    dead = len(unknown) + len(above_one) + len(never)
    return {"farming": farming, "dominance": dominance, "alignment": alignment, "dead entries": dead}


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["diagnose", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_expected_flags_are_counted_by_hand_too():
    # The counts above, checked against a reading of the sample by hand: one farmer episode's
    # loops (its stone mined back and placed again: 5.23) outweigh its credits (4.90; the other
    # two farmers' loops paid 2.90 and 4.17 against credits of 3.90 and 4.90), the farmer's resource shaping dominates and one component dominates the
    # random policy's return, one pair is misranked; the config has collect_food (not a Crafter
    # achievement) in weights and k_limits, five k-limits above 1, and the task app's tables 6
    # items (plant, meat, water, furnace, table, bow) and 2 counts Crafter never produces.
    config = RewardConfig.from_file(SHAPED)
    assert expected_flags(sample_corpus(), config) == {"farming": 1, "dominance": 2, "alignment": 1, "dead entries": 15}


def test_prints_flags_with_why_and_tables(capsys):
    code, out, err = run(capsys, SHAPED, "sample", "--reps", "200")
    assert code == 0 and err == ""
    config = RewardConfig.from_file(SHAPED)
    counted = expected_flags(sample_corpus(), config)
    for section, count in counted.items():
        assert out.count(f"\n  [{section}] ") == count, section
    assert out.startswith(
        f"diagnosis of {SHAPED} (per_achievement, lambda x{config.indicator_lambda:g}) on 10 episode(s), "
        f"grouped by policy: {sum(counted.values())} flag(s)"
    )
    farmer = episode_pay(sample_corpus()["farmer-s2024-00001"], config)
    assert (
        f"[farming] repeats-outweigh-credits farmer-s2024-00001: repeated resource events paid {farmer.repeats:.3f}"
        in out
    )
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
    assert len(flags) == sum(expected_flags(sample_corpus(), RewardConfig.from_file(SHAPED)).values())
    assert list(flags.columns) == ["section", "code", "subject", "why"]
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
    count = sum(expected_flags(sample_corpus(), RewardConfig.from_file(SHAPED)).values())
    assert result.returncode == 0 and f"{count} flag(s)" in result.stdout
