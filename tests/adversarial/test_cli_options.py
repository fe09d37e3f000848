"""Options given values no run can use: refused at once with a named one-line error, before any
work is done and with nothing written (issue 41's unclear errors and crashes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import REPO
from helpers.hostile import RECOMMENDED, cli, one_line_error

from workbench.analysis.rankstats import MAX_REPS
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus
from workbench.data.storage import save_corpus

SHAPED = REPO / "configs" / "upstream_shaped.yaml"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("options") / "corpus"
    save_corpus(sample_corpus().select(policy="scripted"), folder)
    return folder


@pytest.mark.parametrize("plot", ["watch.xyz", "watch", "watch.PNG.txt"])
def test_overoptimisation_refuses_a_plot_it_cannot_write_before_running(corpus, tmp_path, capsys, plot) -> None:
    target = tmp_path / plot
    code, out, err = cli(
        "overoptimisation", corpus, "--config", RECOMMENDED, "--order", "seed", "--plot", target, capsys=capsys
    )
    assert code == 2 and out == ""  # no alarm printed: the watch never ran
    one_line_error(err, target, "--plot must end in .png, .svg, .pdf")
    assert not target.exists()


@pytest.mark.parametrize("reps", [0, MAX_REPS + 1, 1_000_000_000])
def test_overoptimisation_and_diagnose_bound_reps(corpus, capsys, reps) -> None:
    code, _, err = cli("overoptimisation", corpus, "--config", RECOMMENDED, "--reps", reps, capsys=capsys)
    assert code == 2
    one_line_error(err, f"--reps from 1 to {MAX_REPS}")
    code, _, err = cli("diagnose", RECOMMENDED, corpus, "--reps", reps, capsys=capsys)
    assert code == 2
    one_line_error(err, f"reps must be from 1 to {MAX_REPS}")


@pytest.mark.parametrize("eps", ["inf", "-inf", "nan", "-1"])
def test_advantages_refuses_an_eps_that_is_not_finite_and_non_negative(corpus, capsys, eps) -> None:
    code, out, err = cli("advantages", RECOMMENDED, corpus, f"--eps={eps}", capsys=capsys)
    assert code == 2 and out == ""
    one_line_error(err, "--eps must be a finite number >= 0")


def test_import_refuses_an_empty_producer(tmp_path, capsys) -> None:
    source = REPO / "tests" / "fixtures" / "synth-ai-0.2.24" / "responses"
    code, _, err = cli("import", "rollouts", source, "--out", tmp_path / "out", "--producer", "", capsys=capsys)
    assert code == 2
    one_line_error(err, "--producer ''", "known producers are")
    assert not (tmp_path / "out").exists()


def test_compare_on_an_empty_corpus_says_so_not_by(tmp_path, capsys) -> None:
    empty = tmp_path / "empty"
    save_corpus(Corpus(), empty)
    code, _, err = cli("compare", SHAPED, RECOMMENDED, empty, "--distance", "epic", capsys=capsys)
    assert code == 2
    one_line_error(err, str(empty), "holds no episodes")
    assert "--by" not in err
