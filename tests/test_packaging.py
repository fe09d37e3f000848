"""The package's setup files agree with each other and with the README."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib

import pytest
import yaml
from helpers import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
ENVIRONMENT = yaml.safe_load((REPO / "environment.yml").read_text())
LOCK = REPO / "requirements" / "dev.txt"
BUILD_IN = REPO / "requirements" / "build.in"
PROJECT_SOURCE = f"{PYPROJECT['project']['name']} (pyproject.toml)"


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


def _extra(name: str) -> list[str]:
    """The requirements of an extra with the package's own extras it names expanded."""
    own = PYPROJECT["project"]["name"]
    requirements: list[str] = []
    for requirement in PYPROJECT["project"]["optional-dependencies"][name]:
        nested = re.fullmatch(re.escape(own) + r"\[([^\]]+)\]", requirement)
        if nested:
            requirements += [r for extra in nested.group(1).split(",") for r in _extra(extra.strip())]
        else:
            requirements.append(requirement)
    return requirements


def test_dev_extra_has_every_extra_and_the_test_tools():
    extras = PYPROJECT["project"]["optional-dependencies"]
    dev = _extra("dev")
    for name in extras:
        assert set(_extra(name)) <= set(dev), f"make install (.[dev]) misses the {name} extra"
    for tool in ("pytest", "hypothesis", "nbval", "playwright", "jupyterlab", "mkdocs-material", "pre-commit"):
        assert any(r.startswith(tool) for r in dev), tool


def test_the_core_needs_none_of_the_extras():
    core = {re.split(r"[<>=!\[ ]", r)[0].lower() for r in PYPROJECT["project"]["dependencies"]}
    for name in ("lab", "app", "search", "cluster", "train", "docs"):
        extra = {re.split(r"[<>=!\[ ]", r)[0].lower() for r in _extra(name)}
        assert not core & extra, f"{sorted(core & extra)} is in the core and the {name} extra"


def _lock_entries() -> dict[str, list[dict]]:
    """The lock's entries by normalised name: each pinned line's version, marker, hashes and
    what it is there for (uv's ``# via`` lines)."""
    entries: dict[str, list[dict]] = {}
    current: dict | None = None
    via_block = False
    for line in LOCK.read_text().splitlines():
        pin = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$", line)
        if pin:
            current = {"version": pin.group(2), "marker": pin.group(3), "hashes": [], "via": []}
            entries.setdefault(canonicalize_name(pin.group(1)), []).append(current)
            via_block = False
        elif current is not None and line.strip().startswith("--hash="):
            current["hashes"].append(line.strip())
        elif current is not None and line.strip() == "# via":
            via_block = True
        elif current is not None and line.strip().startswith("# via "):
            current["via"].append(line.strip().removeprefix("# via "))
        elif current is not None and via_block and line.strip().startswith("#   "):
            current["via"].append(line.strip().removeprefix("#   "))
    return entries


def _direct_requirements() -> list[Requirement]:
    """pyproject.toml's requirements, the core's and every extra's (the package's own extras
    left out: they name the others), and requirements/build.in's."""
    own = canonicalize_name(PYPROJECT["project"]["name"])
    texts = list(PYPROJECT["project"]["dependencies"])
    texts += [r for extra in PYPROJECT["project"]["optional-dependencies"].values() for r in extra]
    texts += [line.split("#")[0].strip() for line in BUILD_IN.read_text().splitlines()]
    requirements = [Requirement(text) for text in texts if text]
    return [r for r in requirements if canonicalize_name(r.name) != own]


def test_the_lock_pins_every_requirement_inside_its_range_with_hashes():
    # The lock is refreshed (`make lock`) in the same commit as a dependency change: a new
    # requirement, a floor raised past the pin or an upper bound below it fails here.
    entries = _lock_entries()
    assert entries, f"{LOCK} holds no pins"
    for requirement in _direct_requirements():
        pinned = entries.get(canonicalize_name(requirement.name))
        assert pinned, f"{requirement} is not in {LOCK.name}: run `make lock`"
        for entry in pinned:
            assert requirement.specifier.contains(entry["version"], prereleases=True), (
                f"{LOCK.name} pins {requirement.name}=={entry['version']}, outside {requirement}: run `make lock`"
            )
    for name, pinned in entries.items():
        for entry in pinned:
            assert entry["hashes"], f"{name}=={entry['version']} has no hash in {LOCK.name}"


def test_the_lock_holds_no_requirement_pyproject_no_longer_names():
    direct = {canonicalize_name(r.name) for r in _direct_requirements()}
    for name, pinned in _lock_entries().items():
        for entry in pinned:
            if PROJECT_SOURCE in entry["via"] or "-r requirements/build.in" in entry["via"]:
                assert name in direct, f"{LOCK.name} pins {name} for pyproject.toml, which no longer names it"
            assert entry["via"], f"{name} in {LOCK.name} says nothing of why it is there"


def test_make_install_installs_exactly_the_lock():
    makefile = (REPO / "Makefile").read_text()
    assert "pip install --quiet --require-hashes -r $(LOCK)" in makefile
    assert "--no-deps --no-build-isolation -e ." in makefile
    assert re.search(r"^\$\(STAMP\): \$\(LOCK\)", makefile, re.MULTILINE), "make install must follow the lock"


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


# What `pip install .` must not bring: the packages of the extras (lab, app, search, cluster).
EXTRAS_ONLY = (
    "jupyter",
    "jupyterlab",
    "solara",
    "bqplot",
    "matplotlib",
    "ipywidgets",
    "anywidget",
    "optuna",
    "scipy",
    "dask",
    "distributed",
)

CORE_CHECK = r"""
import importlib.metadata, importlib.util, json, subprocess, sys
from pathlib import Path

import workbench, workbench.core.reward, workbench.env, workbench.scoring
from workbench.core.config import RewardConfig
from workbench.core.reward import compute_stepwise_reward
from workbench.data.sample import sample_corpus

corpus = sample_corpus()
scores = workbench.scoring.score(corpus, RewardConfig(strategy="consistent"))
# Under `consistent` with lambda 1 a decision pays 1.0 when it unlocks something, so an episode's
# return is the number of its unlocking decisions, counted here from the stored states alone.
unlocking = {
    episode.id: sum(
        any(after["achievements_status"][a] and not before["achievements_status"][a] for a in after["achievements_status"])
        for before, after in zip(episode.states(), episode.states()[1:])
    )
    for episode in corpus
}
returns = dict(zip(scores.episodes["episode"], scores.episodes["reward_sum"]))
assert returns == unlocking, (returns, unlocking)
info, _, stats = compute_stepwise_reward({"collect_wood": False}, {"collect_wood": True}, 1, [], 0.0)
assert stats["reward"] == 1.0  # consistent, lambda 0 means 1.0 (quirk 2)

installed = sorted(d.metadata["Name"].lower() for d in importlib.metadata.distributions())
found = {name: importlib.util.find_spec(name) is not None for name in sys.argv[1:]}
try:
    import workbench.analysis.search
    search_error = None
except ImportError as error:
    search_error = (type(error).__name__, str(error))
cli = subprocess.run([str(Path(sys.executable).with_name("workbench")), "search", "sample"], capture_output=True, text=True)
print(json.dumps({
    "version": workbench.__version__, "file": workbench.__file__, "installed": installed, "importable": found,
    "search_error": search_error, "cli": [cli.returncode, cli.stderr.strip()],
}))
"""


@pytest.mark.slow
def test_pip_install_without_extras_is_the_lean_core(tmp_path):
    # A fresh venv (no system site-packages) and `pip install` of a copy of the checkout (pip
    # would otherwise write build/ and *.egg-info into it), with the registry pip is set up for.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "workbench", source / "workbench", ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    # The lock's versions as constraints (no hashes: pip takes none in a constraints file), so
    # the run installs what was tested, not whatever is newest today.
    constraints = tmp_path / "constraints.txt"
    constraints.write_text(
        "".join(
            f"{name}=={entry['version']}" + (f" ; {entry['marker']}" if entry["marker"] else "") + "\n"
            for name, pinned in _lock_entries().items()
            for entry in pinned
        )
    )
    install = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-c",
            str(constraints),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        env=env,
        cwd=tmp_path,
    )
    assert install.returncode == 0, install.stderr[-4000:]
    run = subprocess.run(
        [str(python), "-c", CORE_CHECK, *EXTRAS_ONLY],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["version"] == PYPROJECT["project"]["version"]
    assert report["file"].startswith(str(venv)), report["file"]  # the installed copy, not the checkout
    assert not any(report["importable"].values()), report["importable"]
    brought = [name for name in report["installed"] if name.startswith("jupyter") or name in EXTRAS_ONLY]
    assert not brought, f"pip install . (no extras) brought {brought}"
    # A feature whose extra is missing says which extra to install, in one line.
    assert report["search_error"][0] == "MissingExtraError" and "[search]" in report["search_error"][1]
    code, stderr = report["cli"]
    assert (
        code == 2 and stderr.startswith("workbench: error:") and "[search]" in stderr and len(stderr.splitlines()) == 1
    )
