"""``workbench import traces`` and ``workbench corpus info`` on the shipped trace database (made by the real server)."""

from __future__ import annotations

from helpers import REPO

from workbench.cli import main
from workbench.data.sample import sample_imports_path

DB = sample_imports_path() / "traces" / "synth_ai.db"


def test_importing_the_same_database_twice_adds_only_new_sessions(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    config = REPO / "configs" / "recommended.yaml"
    assert main(["import", "traces", str(DB), "--into", str(corpus), "--config", str(config), "--quiet"]) == 0
    first = capsys.readouterr().out
    assert "imported 2 episode(s), 13 decision(s) from 1 file(s); 0 problem(s)" in first
    assert "played by the task app's tool-call rules" in first and "have estimated counts" in first
    assert main(["import", "traces", str(DB), "--into", str(corpus), "--quiet"]) == 0
    second = capsys.readouterr().out
    assert "imported 0 episode(s)" in second and "2 session(s) already imported" in second
    assert main(["import", "traces", str(DB), "--into", str(corpus), "--overwrite", "--quiet"]) == 0
    assert "imported 2 episode(s)" in capsys.readouterr().out


def test_corpus_info_says_which_episodes_have_estimated_counts_and_what_it_means(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    assert main(["import", "traces", str(DB), "--into", str(corpus), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["corpus", "info", str(corpus)]) == 0
    info = capsys.readouterr().out
    assert "achievement counts: estimated 2" in info
    assert "note: 2 of 2 episode(s) have estimated counts" in info and "per_achievement under-pays" in info
