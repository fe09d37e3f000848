"""``make test-latest`` / ``make test-lowest``: pyproject.toml's ranges tested at both ends.

The lock (requirements/dev.txt) is what ``make install`` and CI use; the ranges are what a
user's ``pip install`` gets, on any day. This script builds a fresh virtualenv at one end of
them and runs a tier of the suite in it, through the Makefile (``make VENV=...``):

- ``latest``: the newest release every range allows (today's ``pip install``), then the lint
  gate and every test tier (``make test``).
- ``lowest``: every direct dependency at the lowest version its range allows (uv's
  ``lowest-direct``: the floors themselves; what they pull in is the newest that fits), then
  ``make test-fast``. Before that, each extra (and the core alone) is resolved at its floors on
  its own, and a floor that any resolution has to raise fails the run: such a floor is not
  what a user can get, so it must be raised in pyproject.toml.

- ``floors``: that check alone (uv resolves each extra at its floors; no virtualenv, no tests:
  seconds with uv's cache), which ``make test`` runs first, so a floor drifting below what any
  resolution installs fails the everyday run, not only ``make test-lowest``.

Both ends print the versions that differ from the lock. Run with the project's virtualenv (uv and
packaging come from the lock): ``.venv/bin/python scripts/test_ranges.py latest``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent
LOCK = REPO / "requirements" / "dev.txt"
UV = Path(sys.executable).with_name("uv")
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", re.MULTILINE)


def pins(text: str) -> dict[str, str]:
    """``name -> version`` of a requirements file's ``name==version`` lines (the first of each)."""
    found: dict[str, str] = {}
    for name, version in PIN.findall(text):
        found.setdefault(canonicalize_name(name), version)
    return found


def direct_requirements(pyproject: dict, extras: list[str]) -> list[Requirement]:
    """The core's requirements and those of ``extras``, the package's own extras expanded."""
    project = pyproject["project"]
    own = canonicalize_name(project["name"])
    requirements = [Requirement(text) for text in project["dependencies"]]
    seen: set[str] = set()
    pending = list(extras)
    while pending:
        extra = pending.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for text in project["optional-dependencies"][extra]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == own:
                pending.extend(requirement.extras)
            else:
                requirements.append(requirement)
    return requirements


def floor(requirement: Requirement) -> Version | None:
    """The lowest version ``requirement`` allows (``>=``/``==``/``~=``), or None if it has no floor."""
    bounds = [Version(s.version) for s in requirement.specifier if s.operator in (">=", "==", "~=")]
    return max(bounds) if bounds else None


def compile_requirements(extras: list[str], resolution: str, output: Path) -> dict[str, str]:
    """uv's resolution of the package with ``extras`` for this Python, written to ``output``."""
    command = [str(UV), "pip", "compile", "pyproject.toml", "--resolution", resolution, "--quiet", "--no-header"]
    command += [arg for extra in extras for arg in ("--extra", extra)]
    command += ["--python", sys.executable, "-o", str(output)]
    subprocess.run(command, cwd=REPO, check=True)
    return pins(output.read_text())


def raised_floors(requirements: list[Requirement], resolved: dict[str, str]) -> list[str]:
    """Direct requirements resolved above their floor (the floor is not installable as stated)."""
    problems = []
    for requirement in requirements:
        lowest = floor(requirement)
        got = resolved.get(canonicalize_name(requirement.name))
        if lowest is not None and got is not None and Version(got) > lowest:
            problems.append(f"{requirement}: resolved to {got}, above its floor {lowest}")
    return problems


def report_against_lock(resolved: dict[str, str]) -> None:
    locked = pins(LOCK.read_text())
    changed = [(name, locked.get(name, "-"), version) for name, version in sorted(resolved.items())]
    changed = [row for row in changed if row[1] != row[2]]
    print(f"{len(changed)} package(s) differ from {LOCK.relative_to(REPO)}:")
    for name, was, now in changed:
        print(f"  {name}: {was} (lock) -> {now}")


def build_venv(venv: Path, requirements: Path) -> None:
    """A fresh virtualenv at ``venv`` with exactly ``requirements`` and this package (editable)."""
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([str(UV), "pip", "sync", "--quiet", "--python", python, str(requirements)], cwd=REPO, check=True)
    subprocess.run(
        [str(UV), "pip", "install", "--quiet", "--no-deps", "--python", python, "-e", "."], cwd=REPO, check=True
    )
    # The Makefile's install stamp: `make VENV=...` runs its targets in this venv as it is.
    (venv / ".installed").touch()


def floor_problems(pyproject: dict, work: Path) -> list[str]:
    """Each direct requirement that a lowest-direct resolution of the core or of one extra
    installs above its floor, labelled with the extra (uv's output files go in ``work``)."""
    problems = []
    for extras in [[], *([name] for name in pyproject["project"]["optional-dependencies"])]:
        label = extras[0] if extras else "core"
        resolved = compile_requirements(extras, "lowest-direct", work / f"{label}.txt")
        problems += [f"[{label}] {p}" for p in raised_floors(direct_requirements(pyproject, extras), resolved)]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], prog="scripts/test_ranges.py")
    parser.add_argument(
        "end", choices=["latest", "lowest", "floors"], help="which end of the ranges to test (floors: check only)"
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    venv = REPO / f".venv-{args.end}"
    work = REPO / "build" / f"ranges-{'lowest' if args.end == 'floors' else args.end}"
    work.mkdir(parents=True, exist_ok=True)
    resolution = "highest" if args.end == "latest" else "lowest-direct"
    if args.end in ("lowest", "floors"):
        problems = floor_problems(pyproject, work)
        if problems:
            print("floors no resolution can install (raise them in pyproject.toml):", *problems, sep="\n  ")
            return 1
        if args.end == "floors":
            print(f"every floor installs as stated ({time.monotonic() - started:.0f} s)")
            return 0
    requirements = work / "dev.txt"
    resolved = compile_requirements(["dev"], resolution, requirements)
    report_against_lock(resolved)
    build_venv(venv, requirements)
    target = "test" if args.end == "latest" else "test-fast"
    env = {**os.environ, "VIRTUAL_ENV": str(venv)}
    code = subprocess.run(["make", f"VENV={venv.name}", target], cwd=REPO, env=env).returncode
    print(f"make test-{args.end}: exit {code} after {time.monotonic() - started:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
