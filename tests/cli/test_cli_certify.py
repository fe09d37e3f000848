"""``workbench certify CONFIG CORPUS``: the printed certificate, --out, errors."""

from __future__ import annotations

import pandas as pd
from helpers import REPO

from workbench.cli import main

SHAPED = REPO / "configs" / "upstream_shaped.yaml"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["certify", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_the_loops_components_and_counterpart(capsys):
    code, out, err = run(capsys, SHAPED, "sample")
    assert code == 0, err
    assert "shaping certificate of" in out and "gamma 1" in out
    assert "collect_stone / place_stone (+stone)" in out
    assert "collect_sapling / place_plant (+sapling)" in out
    assert "potential-based counterpart (gamma 1), means per policy" in out


def test_out_writes_every_table(capsys, tmp_path):
    out = tmp_path / "cert.parquet"
    code, _, err = run(capsys, SHAPED, "sample", "--gamma", "0.99", "--out", out)
    assert code == 0, err
    counterpart = pd.read_parquet(tmp_path / "cert.counterpart.parquet")
    assert len(counterpart) == 10 and {"return", "potential_return"} <= set(counterpart.columns)
    cycles = pd.read_parquet(tmp_path / "cert.cycles.parquet")
    assert (cycles["paid"] > 0).all() and (cycles["to_decision"] > cycles["from_decision"]).all()
    assert (tmp_path / "cert.components.parquet").exists() and (tmp_path / "cert.loops.parquet").exists()


def test_bad_usage_exits_2(capsys):
    code, _, err = run(capsys, SHAPED, "sample", "--gamma", "1.5")
    assert code == 2 and "gamma must be within [0, 1]" in err
    code, _, err = run(capsys, SHAPED, "sample", "--by", "team")
    assert code == 2 and "no index column 'team'" in err
