"""``compare ... --distance srrd --gamma -5`` on a one-episode corpus: its error, then a clean
exit 2, never pyarrow's exit-time abort (exit 134, "terminate called without an active
exception": a scan's clean-up on Arrow's threads releasing a Python file object, which takes the
GIL, while the interpreter finalised)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from helpers import REPO

from workbench.data.sample import sample_corpus
from workbench.data.storage import load_corpus, save_corpus
from workbench.data.storage.layout import committed_parts, open_file, part_file
from workbench.data.storage.parquet import ParquetReader


@pytest.fixture(scope="module")
def one_episode(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("one") / "corpus"
    save_corpus(sample_corpus()[:1], folder)
    return folder


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="Arrow's own file is opened through /proc")
def test_parquet_reads_go_through_arrows_own_file_not_a_python_object(one_episode: Path) -> None:
    path = part_file(one_episode, "decisions", committed_parts(one_episode)[0])
    with open_file(path) as handle:
        reader = ParquetReader(handle)
        assert isinstance(reader._file, pa.OSFile)  # needs no GIL on Arrow's threads
        assert reader.read(columns=["episode"]).num_rows == len(load_corpus(one_episode)[0].env_reward) + 1


@pytest.mark.slow
def test_a_distance_error_right_after_a_read_exits_2_every_time(one_episode: Path) -> None:
    """Twelve runs (the abort came about once in 10-40 before): --gamma -5 is refused before any
    read now; --gamma 1 reads the states, then scores or fails; neither ends in an abort."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    configs = [str(REPO / "configs" / "upstream_shaped.yaml"), str(REPO / "configs" / "recommended.yaml")]
    codes = set()
    for gamma in ["-5"] * 6 + ["1"] * 6:
        done = subprocess.run(
            [sys.executable, "-m", "workbench", "compare", *configs, str(one_episode), "--distance", "srrd"]
            + ["--gamma", gamma],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        assert "terminate called" not in done.stderr and "Traceback" not in done.stderr, done.stderr
        codes.add(done.returncode)
        if gamma == "-5":
            assert done.returncode == 2 and "--gamma must be within [0, 1]" in done.stderr
    assert codes <= {0, 2}
