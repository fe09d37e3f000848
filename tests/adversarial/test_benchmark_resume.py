"""``benchmark make --resume`` continues only the benchmark it made: a folder it did not make,
or another ``--seed`` (or ``--max-steps``), is refused before anything is recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.hostile import cli, one_line_error

from workbench.data.benchmarks import load_benchmark
from workbench.data.benchmarks.roster import ROSTER
from workbench.data.sample import sample_corpus
from workbench.data.storage import load_corpus, save_corpus

POLICY = ROSTER[0].name


def test_resuming_a_corpus_benchmark_make_did_not_make_is_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "corpus"
    save_corpus(sample_corpus()[:2], out)
    before = load_corpus(out).ids
    code, _, err = cli("benchmark", "make", "--out", out, "--episodes", 1, "--resume", capsys=capsys)
    assert code == 2
    one_line_error(err, str(out), "not recorded by `workbench benchmark make`")
    assert load_corpus(out).ids == before  # nothing added


@pytest.mark.crafter
def test_resuming_with_another_seed_or_length_is_refused_and_adds_nothing(tmp_path: Path, capsys) -> None:
    out = tmp_path / "bench"

    def make(seed: int, max_steps: int, *extra: object) -> tuple[int, str, str]:
        argv = ("--out", out, "--episodes", 1, "--policies", POLICY, "--seed", seed, "--max-steps", max_steps)
        return cli("benchmark", "make", *argv, *extra, capsys=capsys)

    assert make(3, 30)[0] == 0
    before = load_corpus(out).ids
    for seed, max_steps, words in ((4, 30, "--seed 4"), (3, 40, "--max-steps 40")):
        code, _, err = make(seed, max_steps, "--resume", "--episodes", 2)
        assert code == 2
        one_line_error(err, str(out), words, "recorded with")
        assert load_corpus(out).ids == before
    assert make(3, 30, "--resume")[0] == 0  # the same settings continue (nothing left to record)
    assert len(load_benchmark(out, rollouts=False).labels) == 1
