"""``workbench audit``: exit codes and the JSON report on clean, farming and hand-made corpora, and --follow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers import REPO
from helpers.hand_episodes import HONEST, hand_episode

from workbench.analysis.audit import AUDIT_SCHEMA, SECTIONS
from workbench.analysis.detector_accuracy import gating
from workbench.analysis.diagnostics.loops import LOOP_CODE
from workbench.cli import main
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus
from workbench.data.storage import load_corpus, save_corpus

RECOMMENDED = REPO / "configs" / "recommended.yaml"
SHAPED = REPO / "configs" / "upstream_shaped.yaml"

#: A per_achievement table paying four achievements 1.0 each, the task app's resource tables.
STONE = {"enabled": True, "mode": "decision_stepwise", "strategy": "per_achievement", "indicator_lambda": 1.0}
STONE["weights"] = {"collect_wood": 1.0, "collect_stone": 1.0, "place_stone": 1.0, "collect_drink": 1.0}
#: 30 laps of mine a stone / place it: every lap pays the stone's rise and both counts' rises again.
FARMING = [{"wood": 1, "collect_wood": 1}] + [
    change for lap in range(1, 31) for change in ({"stone": 1, "collect_stone": lap}, {"stone": 0, "place_stone": lap})
]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["audit", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def write_config(path: Path, table: dict) -> Path:
    path.write_text(yaml.safe_dump(table), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sample() -> Corpus:
    return sample_corpus()


@pytest.fixture(scope="module")
def scripted(sample: Corpus, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("scripted") / "corpus"
    save_corpus(sample.select(policy="scripted"), folder)
    return folder


@pytest.fixture(scope="module")
def farmers(sample: Corpus, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("farmers") / "corpus"
    save_corpus(sample.select(policy="farmer"), folder)
    return folder


def test_a_clean_corpus_exits_0_and_says_clean(capsys, scripted: Path) -> None:
    code, out, _ = run(capsys, scripted, "--config", RECOMMENDED, "--json")
    report = json.loads(out)
    assert code == 0
    assert report["schema"] == AUDIT_SCHEMA and report["clean"] is True
    assert report["episodes"] == len(load_corpus(scripted)) and report["decisions"] == load_corpus(scripted).n_decisions
    [config] = report["configs"]
    assert config == {
        "name": "recommended",
        "strategy": "per_achievement",
        "clean": True,
        "counts": {section: 0 for section in SECTIONS},
        "flags": [],
        "notes": [],
    }
    assert report["thresholds"] == {
        "dominance": 0.5,
        "component": 0.25,
        "farming_episodes": 1,
        "dead_entries": "written",
    }


def findings(config: dict, code: str) -> tuple[list[str], str]:
    """The subjects of one code's findings in a config's JSON report, and where they are."""
    for where in ("flags", "notes"):
        subjects = [f["subject"] for f in config[where] if f["code"] == code]
        if subjects:
            return subjects, where
    return [], ""


def test_the_sample_farmers_are_caught_by_their_loops(capsys, farmers: Path, sample: Corpus) -> None:
    code, out, _ = run(capsys, farmers, "--config", SHAPED, "--config", RECOMMENDED, "--json", "--dead-entries", "off")
    report = json.loads(out)
    shaped, recommended = report["configs"]
    farmer_ids = sorted(sample.select(policy="farmer").ids)
    for config in (shaped, recommended):  # both pay the stone and sapling loops
        subjects, where = findings(config, LOOP_CODE)
        assert sorted(subjects) == farmer_ids and where == ("flags" if gating(LOOP_CODE) else "notes")
        loop = [f for f in config[where] if f["code"] == LOOP_CODE][0]
        assert loop["evidence"]["replay"]["link"].startswith(f"?view=replayer&episode={loop['subject']}&decision=")
        assert loop["measured"]["config"] == config["name"]
    # repeats-outweigh-credits counts loop pay only (counts at the cap, materials regained): the
    # farmer whose loop paid more than its credits; the loop signs find every farmer's stone loop
    subjects, where = findings(shaped, "repeats-outweigh-credits")
    assert subjects and set(subjects) <= set(farmer_ids)
    assert where == ("flags" if gating("repeats-outweigh-credits") else "notes")
    subjects, where = findings(shaped, "spent-and-regained")
    assert sorted(subjects) == farmer_ids and where == ("flags" if gating("spent-and-regained") else "notes")
    # the exit status and `clean` follow the flags alone
    assert code == (1 if shaped["flags"] or recommended["flags"] else 0)
    assert report["clean"] is (code == 0)
    assert shaped["counts"]["farming"] == len([f for f in shaped["flags"] if f["section"] == "farming"])
    # text mode: one line per flag, "note [...]" per note, each with its evidence and measured precision
    code, out, _ = run(capsys, farmers, "--config", SHAPED, "--dead-entries", "off")
    prefix = "  [farming] " if gating(LOOP_CODE) else "  note [farming] "
    assert out.count(prefix + LOOP_CODE) == len(farmer_ids)
    assert out.count("evidence: place_stone/collect_stone x") + out.count(
        "evidence: place_plant/collect_sapling x"
    ) >= len(farmer_ids)
    # each farmer's spent-and-regained flag names the kind past its threshold the most: its stones
    # or its saplings
    regained = out.count("evidence: stone regained x") + out.count("evidence: sapling regained x")
    assert regained == len(farmer_ids) and out.count("evidence: stone regained x") >= 1
    assert "measured on the benchmark (upstream_shaped): precision" in out


def test_notes_never_change_the_exit_status(capsys, farmers: Path) -> None:
    code, out, _ = run(
        capsys, farmers, "--config", SHAPED, "--json", "--farming-episodes", "4", "--dead-entries", "off"
    )
    report = json.loads(out)
    assert report["configs"][0]["counts"]["farming"] == 0  # 3 farmers < 4
    assert report["configs"][0]["counts"]["dead entries"] == 0
    notes = report["configs"][0]["notes"]
    assert {n["code"] for n in notes} >= {"resource-shaping-dominates"}  # resource shaping dominates the farmers
    assert not any(gating(n["code"]) for n in notes)
    assert code == (1 if report["configs"][0]["flags"] else 0)


def test_hand_corpora_farming_against_honest(capsys, tmp_path: Path) -> None:
    config = write_config(tmp_path / "stone.yaml", STONE)
    corpus = tmp_path / "hand"
    save_corpus(Corpus([hand_episode("honest", HONEST, policy="honest")]), corpus)
    high = ["--component-threshold", "0.99", "--dominance-threshold", "0.99"]
    code, out, _ = run(capsys, corpus, "--config", config, "--json", *high)
    assert code == 0 and json.loads(out)["configs"][0]["notes"] == [], out
    save_corpus(Corpus([hand_episode("farmer", FARMING, policy="farmer")]), corpus)
    code, out, _ = run(capsys, corpus, "--config", config, "--json", *high)
    [mine] = json.loads(out)["configs"]
    subjects, where = findings(mine, LOOP_CODE)
    assert subjects == ["farmer"] and code == (1 if mine["flags"] else 0)
    [loop] = [f for f in mine[where] if f["code"] == LOOP_CODE]
    # 30 laps, from decision 2 (the first mining; decision 1 chops wood) to 61 (the last placing)
    assert (loop["evidence"]["laps"], loop["evidence"]["decisions"]) == (30, [2, 61])
    # spent and regained: laps 2-30 mine the stone back at decisions 4, 6, .., 60, after the last new
    # unlock (place_stone, decision 3): progress-free from 4. The scan's windows start at a regain:
    # 25 progress-free decisions from 4 hold 13 (4..28), 50 hold 25 (4, 6, .., 52 in 4..53), 100
    # and more all 29. Against the shipped thresholds (stone regained: 7.5, 7.5, 9, 12, 15 at 25,
    # 50, 100, 200 and all decisions: ratios 1.7, 3.3, 3.2, 2.4, 1.9) the largest is at the 50 scale
    subjects, where = findings(mine, "spent-and-regained")
    [regained] = [f for f in mine[where] if f["code"] == "spent-and-regained"]
    assert subjects == ["farmer"] and regained["evidence"]["scale"] == "50"
    assert (regained["evidence"]["laps"], regained["evidence"]["decisions"]) == (25, [4, 53])


def test_estimated_counts_under_count_shaping_only(capsys, tmp_path: Path) -> None:
    corpus = tmp_path / "text"
    save_corpus(Corpus([hand_episode("text", HONEST, policy="llm", counts=False)]), corpus)
    shaping = write_config(tmp_path / "stone.yaml", STONE)
    consistent = write_config(tmp_path / "consistent.yaml", {"enabled": True, "strategy": "consistent"})
    high = ["--component-threshold", "0.99", "--dominance-threshold", "0.99"]
    code, out, _ = run(capsys, corpus, "--config", shaping, "--config", consistent, "--json", *high)
    per_achievement, indicator = json.loads(out)["configs"]
    assert code == 1
    assert [f["code"] for f in per_achievement["flags"]] == ["count-shaping-estimated"]
    assert per_achievement["flags"][0]["subject"] == "1 episode(s)"
    assert indicator["clean"] is True


def test_dead_entries_the_config_writes(capsys, tmp_path: Path, scripted: Path) -> None:
    table = yaml.safe_load(RECOMMENDED.read_text(encoding="utf-8"))
    table["weights"]["collect_food"] = 1.0  # not a Crafter achievement: pays nothing, ever
    config = write_config(tmp_path / "typo.yaml", table)
    code, out, _ = run(capsys, scripted, "--config", config, "--json")
    flags = json.loads(out)["configs"][0]["flags"]
    assert code == 1 and [(f["section"], f["code"], f["subject"]) for f in flags] == [
        ("dead entries", "unknown-achievement", "weights.collect_food")
    ]
    assert run(capsys, scripted, "--config", config, "--dead-entries", "off")[0] == 0
    # "all" also counts the task app's own resource-table entries Crafter never produces
    code, out, _ = run(capsys, scripted, "--config", RECOMMENDED, "--dead-entries", "all", "--json")
    keys = [f["subject"] for f in json.loads(out)["configs"][0]["flags"]]
    assert code == 1 and "resource_weights.inventory.bow" in keys


def test_thresholds_move_the_verdict(capsys) -> None:
    # the sample's random policy: wake_up credits are 48% of its reward under recommended
    component = [
        n for n in json.loads(run(capsys, "sample", "--config", RECOMMENDED, "--json")[1])["configs"][0]["notes"]
    ]
    assert any(n["code"] == "component-dominates" and n["subject"] == "policy random" for n in component)
    higher = json.loads(run(capsys, "sample", "--config", RECOMMENDED, "--component-threshold", "0.6", "--json")[1])
    assert not any(n["code"] == "component-dominates" for n in higher["configs"][0]["notes"])


def test_bad_input_exits_2(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, tmp_path / "missing", "--config", RECOMMENDED)
    assert code == 2 and "no such corpus folder" in err
    code, _, err = run(capsys, "sample", "--config", tmp_path / "missing.yaml")
    assert code == 2 and "missing.yaml" in err
    code, _, err = run(capsys, "sample", "--config", RECOMMENDED, "--component-threshold", "1.5")
    assert code == 2 and "component threshold" in err


def test_follow_exits_1_at_the_first_flag(capsys, tmp_path: Path) -> None:
    source, target = tmp_path / "recording", tmp_path / "corpus"
    save_corpus(Corpus([hand_episode("honest", HONEST, policy="p")]), source)
    save_corpus(Corpus([hand_episode("farmer", FARMING, policy="p")]), source)
    config = write_config(tmp_path / "stone.yaml", STONE)
    high = ["--component-threshold", "0.99", "--dominance-threshold", "0.99"]
    argv = [target, "--config", config, "--follow", source, "--interval", "0.05", "--max-polls", "50", "--json", *high]
    code, out, _ = run(capsys, *argv)
    report = json.loads(out)
    subjects, where = findings(report["configs"][0], LOOP_CODE)
    assert subjects == ["farmer"] and report["follow"]["appended"] == 2 and report["follow"]["kind"] == "corpus"
    assert code == (1 if report["configs"][0]["flags"] else 0)  # a note never stops the run
    assert load_corpus(target).ids == ["honest", "farmer"]


def test_follow_runs_to_max_polls_when_clean(capsys, tmp_path: Path) -> None:
    source, target = tmp_path / "recording", tmp_path / "corpus"
    save_corpus(Corpus([hand_episode("honest", HONEST, policy="p")]), source)
    config = write_config(tmp_path / "stone.yaml", STONE)
    high = ["--component-threshold", "0.99", "--dominance-threshold", "0.99"]
    argv = [target, "--config", config, "--follow", source, "--interval", "0.01", "--max-polls", "3", "--json", *high]
    code, out, _ = run(capsys, *argv)
    report = json.loads(out)
    assert code == 0 and report["clean"] is True
    assert report["follow"]["polls"] == 3 and report["episodes"] == 1
