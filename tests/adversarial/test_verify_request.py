"""``workbench verify --request`` on what is not a request: a FIFO, ``/dev/zero``, a huge file,
a table whose lambda is 1e400 or NaN. Each is one line and exit 2, at once, nothing scored."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from helpers import REPO

from workbench.cli import main
from workbench.cli.verify_cmd import MAX_REQUEST_BYTES

FIXTURE = REPO / "tests" / "fixtures" / "synth-ai-0.2.24"
PER_ACHIEVEMENT = "newest_per_achievement_policy_lambda_half"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("verify") / "corpus"
    assert main(["import", "rollouts", str(FIXTURE / "responses"), "--out", str(folder), "--quiet"]) == 0
    return folder


def verify_in_thread(capsys, corpus: Path, request: Path) -> tuple[int, str]:
    """Run verify in a thread that must end within 60 s (a hang fails the test, not the run)."""
    done: dict[str, int] = {}
    thread = threading.Thread(
        target=lambda: done.update(code=main(["verify", str(corpus), "--request", str(request)])), daemon=True
    )
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "verify --request hangs"
    return done["code"], capsys.readouterr().err


def test_a_fifo_as_the_request_is_refused_without_blocking(corpus: Path, tmp_path: Path, capsys) -> None:
    fifo = tmp_path / "request.json"
    os.mkfifo(fifo)
    try:
        code, err = verify_in_thread(capsys, corpus, fifo)
    finally:
        # a blocked open on the FIFO (before the fix) is let go by opening its other end
        writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        os.close(writer)
    assert code == 2 and err.count("\n") == 1 and "not a regular file" in err and str(fifo) in err


def test_dev_zero_as_the_request_is_refused(corpus: Path, capsys) -> None:
    code, err = verify_in_thread(capsys, corpus, Path("/dev/zero"))
    assert code == 2 and err.count("\n") == 1 and "not a regular file" in err and "/dev/zero" in err


def test_a_request_larger_than_the_limit_is_refused_unread(corpus: Path, tmp_path: Path, capsys) -> None:
    huge = tmp_path / "request.json"
    with huge.open("wb") as handle:  # sparse: 4 GB on paper, nothing on disk
        handle.truncate(4 * 2**30)
    code, err = verify_in_thread(capsys, corpus, huge)
    assert code == 2 and err.count("\n") == 1 and str(MAX_REQUEST_BYTES) in err and str(huge) in err


@pytest.mark.parametrize("value", ["1e400", "NaN", "-Infinity"])
def test_a_request_whose_lambda_is_not_finite_is_refused(corpus: Path, tmp_path: Path, capsys, value: str) -> None:
    table = json.loads((FIXTURE / "requests" / f"{PER_ACHIEVEMENT}.json").read_text())
    table["policy"]["config"]["step_rewards"]["indicator_lambda"] = "LAMBDA"
    request = tmp_path / "request.json"
    request.write_text(json.dumps(table).replace('"LAMBDA"', value))
    code, err = verify_in_thread(capsys, corpus, request)
    assert code == 2 and err.count("\n") == 1, err
    assert "policy.config.step_rewards.indicator_lambda" in err and "finite" in err and str(request) in err
