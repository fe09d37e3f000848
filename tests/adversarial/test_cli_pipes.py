"""A reader that goes away early (``workbench audit --json | head -c1``): no traceback, exit 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

from workbench.data.sample import sample_corpus
from workbench.data.storage import save_corpus


def run_with_reader_gone(*argv: str) -> tuple[int, str]:
    """Run ``python -m workbench argv`` with its stdout a pipe whose reading end is already
    closed: its first write (or the flush at exit) meets EPIPE, as under ``| head -c1``."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "workbench", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
    finally:
        os.close(write_end)
    return done.returncode, done.stderr


@pytest.fixture(scope="module")
def farmers(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pipes") / "corpus"
    save_corpus(sample_corpus().select(policy="farmer"), folder)
    return folder


def test_audit_json_to_a_closed_pipe_exits_without_a_traceback(farmers: Path) -> None:
    code, err = run_with_reader_gone(
        "audit", "--json", "--config", str(REPO / "configs" / "recommended.yaml"), str(farmers)
    )
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert "Exception ignored" not in err, err
    assert code == 1


def test_help_to_a_closed_pipe_exits_without_a_traceback() -> None:
    code, err = run_with_reader_gone("--help")
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert "Exception ignored" not in err, err
    assert code in (0, 1)  # argparse's help swallows the write error itself (exit 0)
