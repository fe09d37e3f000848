"""Start-up: ``workbench --help`` and a light command import no table library and no analysis.

Each command group's parser is built from a light module; the heavy modules (pandas, pyarrow,
the analyses, storage) are imported inside the command's run function. numpy (~0.05 s) is
allowed: the core's reward rule (``core.reward_rule``, under ``RewardConfig``) is numpy. Checked
in a fresh interpreter with ``-X importtime``, which lists every module the process imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import REPO

#: Libraries no start-up may import (each costs tens to hundreds of milliseconds).
HEAVY = ("pandas", "pyarrow", "scipy", "numba", "crafter", "matplotlib", "dask", "distributed", "sklearn")
#: The workbench modules outside the CLI, the core, the utilities and the errors that ``--help``
#: may import: the light modules holding the defaults and choices its parsers show.
LIGHT_ELSEWHERE = {
    "workbench.analysis",
    "workbench.analysis.thresholds",
    "workbench.data",
    "workbench.data.source_kinds",
}


def imported(*argv: str) -> set[str]:
    """Every module a fresh ``python -X importtime -m workbench ARGV`` imports."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout's package, wherever the venv points
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "workbench", *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    # "import time: self [us] | cumulative | imported package", the first line being the header.
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}


@pytest.mark.parametrize("argv", [("--help",), ("audit", "--help"), ("config", "lint", "configs/consistent.yaml")])
def test_start_up_imports_no_table_library_and_no_game(argv):
    modules = imported(*argv)
    assert "workbench.cli" in modules  # the listing is real: the command line itself is in it
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert not heavy, f"workbench {' '.join(argv)} imports {heavy[:10]}"


def test_help_imports_only_the_command_line_core_and_light_modules():
    ours = {m for m in imported("--help") if m == "workbench" or m.startswith("workbench.")}
    allowed_packages = ("workbench.cli", "workbench.core", "workbench.util", "workbench.errors")
    elsewhere = sorted(m for m in ours - {"workbench"} if not m.startswith(allowed_packages))
    assert set(elsewhere) <= LIGHT_ELSEWHERE, f"--help imports {sorted(set(elsewhere) - LIGHT_ELSEWHERE)}"
    # Every command group's parser is built: each command module is imported.
    commands = {p.stem for p in (REPO / "workbench" / "cli").glob("*_cmd.py")}
    assert {f"workbench.cli.{name}" for name in commands} <= ours


def test_the_top_level_names_are_imported_on_first_use():
    import workbench
    from workbench.core.config import RewardConfig
    from workbench.data.storage import load_corpus
    from workbench.scoring import score

    assert workbench.RewardConfig is RewardConfig
    assert workbench.load_corpus is load_corpus
    assert workbench.score is score
    assert set(workbench.__all__) == {"__version__", *workbench._HOMES}  # each name has its home, once
    assert set(workbench.__all__) <= set(dir(workbench))
    assert isinstance(workbench.__version__, str) and workbench.__version__
    assert all(getattr(workbench, name) is not None for name in workbench.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        workbench.nonesuch  # noqa: B018


def test_opening_a_corpus_imports_no_writer_importer_or_progress_bar():
    # `corpus info` opens a corpus (numpy, pandas and pyarrow: its floor) and reads two
    # importer helpers; it writes nothing and imports nothing: no progress bar (tqdm, which
    # imports asyncio), no TOML writer (tomlkit), no importer's reader (sqlite3 for traces).
    modules = imported("corpus", "info", "workbench/data/shipped/sample")
    assert {"pandas", "pyarrow", "workbench.data.storage"} <= modules  # the listing is real
    unneeded = ("tqdm", "tomlkit", "sqlite3", "asyncio")
    assert not sorted(m for m in modules if m.split(".")[0] in unneeded)
    importers = {"rollouts", "traces", "crafter_recorder", "batch", "toolcalls"}
    assert not {f"workbench.data.importers.{name}" for name in importers} & modules


@pytest.mark.parametrize(
    ("module", "part", "unneeded"),
    [
        # the audit's loop signs read honest play's episodes from the shipped benchmark
        # (``benchmarks.honest_episodes``), not through the roster, whose players import
        # Crafter's game (its world generator's numba: ~0.2 s of CPU per `workbench audit`)
        ("workbench.analysis.audit", "workbench.analysis.sign_gates", ("crafter", "numba")),
        # overoptimisation reads the timeline's unlocked matrix, not its change points
        # (ruptures and scipy.stats: ~0.8 s of CPU per `workbench overoptimisation`)
        ("workbench.analysis.overoptimisation", "workbench.analysis.timeline.crafter", ("ruptures", "scipy")),
    ],
)
def test_an_analysis_imports_only_what_it_runs(module, part, unneeded):
    done = subprocess.run(
        [sys.executable, "-c", f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    modules = set(json.loads(done.stdout))
    assert part in modules  # the listing is real: the analysis imported its own parts
    assert not sorted(m for m in modules if m.split(".")[0] in unneeded)
