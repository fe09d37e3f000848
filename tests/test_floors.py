"""The dependency floors: every floor pyproject.toml states is one a resolution installs, and
``make test`` checks it (issue 41: traitlets>=5.9 resolved to 5.13.0, and nothing ran the check)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from helpers import REPO


def test_make_test_runs_the_floors_check_first():
    makefile = (REPO / "Makefile").read_text()
    (prerequisites,) = re.findall(r"^test: (.*)$", makefile, re.MULTILINE)
    assert "test-floors" in prerequisites.split()
    (recipe,) = re.findall(r"^test-floors: .*\n\t(.*)$", makefile, re.MULTILINE)
    assert recipe == "$(BIN)/python scripts/test_ranges.py floors"


@pytest.mark.slow
def test_every_floor_is_one_a_resolution_installs():
    """uv resolves the core and each extra at their floors (it asks the package index)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "test_ranges.py"), "floors"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every floor installs as stated" in done.stdout
