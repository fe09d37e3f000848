"""Two ``make install`` at once: the installs run one after the other, and the second, finding
the first's fresh venv, installs nothing again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import REPO

#: A stand-in for the venv's python: logs when each pip run starts and ends, taking a second.
FAKE_PYTHON = """#!/bin/sh
echo "start $$" >> "$(dirname "$0")/../../pip.log"
sleep 1
echo "end $$" >> "$(dirname "$0")/../../pip.log"
"""


@pytest.mark.skipif(shutil.which("flock") is None or shutil.which("make") is None, reason="needs make and flock")
def test_two_make_installs_at_once_run_pip_one_after_the_other(tmp_path: Path) -> None:
    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "dev.txt").write_text("")
    (tmp_path / "pyproject.toml").write_text("")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    runs = [subprocess.Popen(["make", "-s", "install"], cwd=tmp_path) for _ in range(2)]
    assert [run.wait(timeout=120) for run in runs] == [0, 0]
    log = (tmp_path / "pip.log").read_text().split()
    # One install: its two pip runs (start, end, start, end), never two pips at once; the
    # second make waited for the lock and found the stamp newer than the lock file.
    assert log[0::2] == ["start", "end", "start", "end"], log
    assert len(set(log[1::2])) == 2  # two pip processes, both of the first make
    assert (tmp_path / ".venv" / ".installed").is_file()
