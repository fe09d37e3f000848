"""The package's setup files agree with each other and with the README."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import yaml
from helpers import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
ENVIRONMENT = yaml.safe_load((REPO / "environment.yml").read_text())


def _pip_entries() -> list[str]:
    for dependency in ENVIRONMENT["dependencies"]:
        if isinstance(dependency, dict) and "pip" in dependency:
            return dependency["pip"]
    raise AssertionError("environment.yml has no pip section")


def test_environment_python_matches_requires_python():
    required = re.fullmatch(r">=\s*(\d+)\.(\d+)", PYPROJECT["project"]["requires-python"]).groups()
    conda_python = next(d for d in ENVIRONMENT["dependencies"] if isinstance(d, str) and d.startswith("python"))
    pinned = re.fullmatch(r"python\s*=\s*(\d+)\.(\d+)", conda_python).groups()
    assert tuple(map(int, pinned)) >= tuple(map(int, required))


def test_environment_installs_this_checkout_with_existing_extras():
    entries = _pip_entries()
    editable = [e for e in entries if e.startswith("-e .")]
    assert editable, "environment.yml must install this checkout"
    extras = re.findall(r"\[([^\]]+)\]", editable[0])
    for extra in extras[0].split(","):
        assert extra.strip() in PYPROJECT["project"]["optional-dependencies"]
    # Dependencies are listed once, in pyproject.toml: no second, drifting copy here.
    assert all(e.startswith("-e ") for e in entries)


def test_dev_extra_has_the_test_tools():
    dev = " ".join(PYPROJECT["project"]["optional-dependencies"]["dev"])
    for tool in ("pytest", "hypothesis", "nbval", "playwright", "jupyterlab"):
        assert tool in dev


def test_console_script_and_module_entry_point():
    assert PYPROJECT["project"]["scripts"]["workbench"] == "workbench.cli:main"
    result = subprocess.run([sys.executable, "-m", "workbench", "--help"], capture_output=True, text=True, check=True)
    assert "usage: workbench" in result.stdout


def test_readme_shows_the_two_commands():
    readme = (REPO / "README.md").read_text()
    assert "make lab" in readme and "make test" in readme


def test_top_level_api_scores_the_sample_corpus():
    import workbench

    corpus = workbench.sample_corpus()
    scores = workbench.score(corpus, workbench.RewardConfig.from_file(REPO / "configs" / "recommended.yaml"))
    assert len(scores.episodes) == len(corpus)
    assert set(workbench.__all__) <= set(dir(workbench))
