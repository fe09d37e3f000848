"""``workbench audit``: exit codes and the JSON report on clean, farming and hand-made corpora, and --follow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers import REPO
from helpers.hand_episodes import HONEST, hand_episode

from workbench.analysis.audit import AUDIT_SCHEMA, SECTIONS
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
    }
    assert report["thresholds"] == {
        "dominance": 0.5,
        "component": 0.25,
        "farming_episodes": 1,
        "dead_entries": "written",
    }


def test_the_sample_farmers_exit_1_with_farming_flags(capsys, farmers: Path, sample: Corpus) -> None:
    code, out, _ = run(capsys, farmers, "--config", SHAPED, "--config", RECOMMENDED, "--json")
    report = json.loads(out)
    assert code == 1 and report["clean"] is False
    shaped, recommended = report["configs"]
    farming = [f for f in shaped["flags"] if f["section"] == "farming"]
    assert sorted(f["subject"] for f in farming) == sorted(sample.select(policy="farmer").ids)
    assert {f["code"] for f in farming} == {"repeats-outweigh-credits"}
    assert shaped["counts"]["farming"] == len(farming)
    assert recommended["clean"] is True  # the same farmers under the recommended table: no flag
    # text mode says the same, one line per flag
    code, out, _ = run(capsys, farmers, "--config", SHAPED)
    assert code == 1 and out.count("[farming] repeats-outweigh-credits") == len(farming)


def test_more_farming_episodes_needed_than_there_are(capsys, farmers: Path) -> None:
    code, out, _ = run(
        capsys, farmers, "--config", SHAPED, "--json", "--farming-episodes", "4", "--dead-entries", "off"
    )
    report = json.loads(out)
    assert report["configs"][0]["counts"]["farming"] == 0  # 3 farmers < 4
    assert report["configs"][0]["counts"]["dead entries"] == 0
    assert code == 1  # resource shaping still dominates the farmers' reward


def test_hand_corpora_farming_against_honest(capsys, tmp_path: Path) -> None:
    config = write_config(tmp_path / "stone.yaml", STONE)
    corpus = tmp_path / "hand"
    save_corpus(Corpus([hand_episode("honest", HONEST, policy="honest")]), corpus)
    high = ["--component-threshold", "0.99", "--dominance-threshold", "0.99"]
    code, out, _ = run(capsys, corpus, "--config", config, "--json", *high)
    assert code == 0, out
    save_corpus(Corpus([hand_episode("farmer", FARMING, policy="farmer")]), corpus)
    code, out, _ = run(capsys, corpus, "--config", config, "--json", *high)
    flags = json.loads(out)["configs"][0]["flags"]
    assert code == 1 and [(f["section"], f["subject"]) for f in flags] == [("farming", "farmer")]


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
    assert run(capsys, "sample", "--config", RECOMMENDED)[0] == 1
    assert run(capsys, "sample", "--config", RECOMMENDED, "--component-threshold", "0.6")[0] == 0


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
    assert code == 1 and report["follow"]["appended"] == 2 and report["follow"]["kind"] == "corpus"
    assert [f["subject"] for f in report["configs"][0]["flags"]] == ["farmer"]
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
