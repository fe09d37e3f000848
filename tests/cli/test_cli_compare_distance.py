"""``workbench compare A B CORPUS --distance epic|starc|srrd``: distances with their coverage."""

from __future__ import annotations

import pytest
from helpers import REPO

from workbench.cli import main

SHAPED = REPO / "configs" / "upstream_shaped.yaml"
RECOMMENDED = REPO / "configs" / "recommended.yaml"


def test_distances_print_with_coverage(capsys):
    code = main(["compare", str(SHAPED), str(RECOMMENDED), "sample", "--distance", "starc", "--distance", "epic"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "STARC distance A-B: " in out and "EPIC distance A-B: " in out
    assert "3296 transitions" in out  # every decision of the sample
    # EPIC evaluates pairs of states the data never connects: the coverage warning says so.
    assert "warning: thin coverage" in out


def test_the_same_config_is_at_distance_zero(capsys):
    code = main(["compare", str(SHAPED), str(SHAPED), "sample", "--distance", "srrd", "--gamma", "0.9"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "SRRD distance A-B: 0.0000" in out and "gamma 0.9" in out


def test_bad_distance_exits_2(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["compare", str(SHAPED), str(RECOMMENDED), "sample", "--distance", "dard"])
    assert exit.value.code == 2
    assert "invalid choice: 'dard'" in capsys.readouterr().err


def test_draws_seed_and_spread_are_options_and_starc_refuses_gamma_1(capsys):
    code = main(
        ["compare", str(SHAPED), str(RECOMMENDED), "sample", "--distance", "epic", "--samples", "8", "--seed", "2"]
        + ["--seeds", "3"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "8 draws per expectation, seed 2; over seeds 2..4: " in out and "gamma 1;" in out
    code = main(["compare", str(SHAPED), str(RECOMMENDED), "sample", "--distance", "starc", "--seeds", "1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "gamma 0.99;" in out
    code = main(["compare", str(SHAPED), str(RECOMMENDED), "sample", "--distance", "starc", "--gamma", "1"])
    out, err = capsys.readouterr()
    assert code == 2 and "STARC needs gamma < 1" in err and "Traceback" not in err
