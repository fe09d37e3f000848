"""The audit gate given configs that share a name: every config is audited, none dropped; one file twice is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.hostile import REPO, cli, one_line_error

from workbench.data.sample import sample_corpus
from workbench.data.storage import save_corpus

SHAPED = REPO / "configs" / "upstream_shaped.yaml"
RECOMMENDED = REPO / "configs" / "recommended.yaml"
#: Pays no resource shaping, so no loop: clean on the farmers (recommended still pays their stone loop).
CONSISTENT = REPO / "configs" / "consistent.yaml"


def farmers(tmp_path: Path) -> Path:
    folder = tmp_path / "farmers"
    save_corpus(sample_corpus().select(policy="farmer"), folder)
    return folder


def two_rewards(tmp_path: Path) -> tuple[Path, Path]:
    """a/reward.yaml: the consistent table (clean on farmers); b/reward.yaml: upstream's (flags farming)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    return shutil.copy(CONSISTENT, tmp_path / "a" / "reward.yaml"), shutil.copy(SHAPED, tmp_path / "b" / "reward.yaml")


def test_two_configs_of_one_name_are_both_audited_and_the_flagged_one_fails_the_gate(tmp_path, capsys):
    corpus, (clean, flagged) = farmers(tmp_path), two_rewards(tmp_path)
    for order in ((clean, flagged), (flagged, clean)):  # the flagged one last or first: never dropped
        code, out, _ = cli("audit", corpus, "--config", order[0], "--config", order[1], "--json", capsys=capsys)
        report = json.loads(out)
        assert code == 1 and report["clean"] is False
        by_name = {config["name"]: config for config in report["configs"]}
        assert sorted(by_name) == sorted([str(clean), str(flagged)])  # named by path, told apart
        assert by_name[str(clean)]["clean"] is True
        farming = [flag for flag in by_name[str(flagged)]["flags"] if flag["section"] == "farming"]
        assert by_name[str(flagged)]["counts"]["farming"] == len(farming)
        assert len({flag["subject"] for flag in farming}) == 3  # the sample's three farmers, each flagged


def test_one_config_file_given_twice_is_refused(tmp_path, capsys):
    corpus = farmers(tmp_path)
    code, _, err = cli("audit", corpus, "--config", RECOMMENDED, "--config", RECOMMENDED, capsys=capsys)
    assert code == 2
    one_line_error(err, "given twice", "recommended.yaml")


def test_watch_scores_both_configs_of_one_name(tmp_path, capsys):
    from helpers.hostile import SAMPLE_ROLLOUTS

    source = tmp_path / "rollouts"
    shutil.copytree(SAMPLE_ROLLOUTS, source)
    clean, flagged = two_rewards(tmp_path)
    code, out, _ = cli(
        "watch", source, "--into", tmp_path / "c", "--once", "--config", clean, "--config", flagged, capsys=capsys
    )
    assert code == 0
    appended = [line for line in out.splitlines() if line.startswith("+ ")]
    assert appended and all(f"{clean}=" in line and f"{flagged}=" in line for line in appended)
