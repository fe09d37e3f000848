"""A cached virtual environment holding a synth-ai release (the real task app), built once and reused.

The task app pulls in many dependencies (fastapi, openai, groq, modal, datasets ...), so it lives
in a venv of its own under ``${XDG_CACHE_HOME:-~/.cache}/crafter-workbench/synth-ai-<version>/venv``
(0.2.14 by default, 0.2.24 for the indicator-only loop), never in the project's. A build runs in a ``venv.building-<pid>`` folder beside it and is renamed
into place only after the install finished and the stamp file was written, so a build that was
killed half-way is never taken for a finished one.
"""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

#: The release the 0.2.14 tests serve (the full stepwise loop).
VERSION = "0.2.14"
#: The newest release with the Crafter app (the indicator-only loop, ``synth-ai task-app-group serve``).
NEWEST = "0.2.24"
SYNTH_AI = f"synth-ai=={VERSION}"
#: What a release's Crafter app needs beside it: 0.2.24 no longer depends on crafter (its app
#: refuses to load without it: "Missing Python module 'crafter'").
EXTRAS = {NEWEST: ("crafter",)}
#: Written inside a venv as the last step of its build; its text is the requirement installed.
STAMP = ".crafter-workbench-built"
#: pip's install of the task app: a fresh resolve of ~150 packages takes a few minutes here.
INSTALL_TIMEOUT_S = 1800


class RegistryUnreachable(RuntimeError):
    """The package index pip would install from cannot be reached (no network to it)."""


@dataclass(frozen=True)
class TaskAppVenv:
    """A built venv: its folder and the ``synth-ai`` console script in it."""

    root: Path
    build_seconds: float | None  # None when an existing build was reused

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def synth_ai(self) -> Path:
        return self.root / "bin" / "synth-ai"

    def site_packages(self) -> Path:
        """The venv's site-packages folder (where synth-ai's own source is)."""
        found = sorted(self.root.glob("lib/python*/site-packages"))
        if not found:
            raise FileNotFoundError(f"{self.root}: no lib/python*/site-packages")
        return found[0]


def cache_root(version: str = VERSION) -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/crafter-workbench/synth-ai-<version>``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "crafter-workbench" / f"synth-ai-{version}"


def is_built(venv: Path, requirement: str = SYNTH_AI) -> bool:
    """True when ``venv`` holds a finished build of ``requirement``."""
    stamp = venv / STAMP
    return (
        stamp.is_file()
        and stamp.read_text(encoding="utf-8").strip() == requirement
        and (venv / "bin" / "synth-ai").is_file()
    )


def _pip_index_url() -> str:
    """The index URL pip installs from: PIP_INDEX_URL, else pip's configured index, else pip's default."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    configured = subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", "global.index-url"], capture_output=True, text=True, check=False
    )
    if configured.returncode == 0 and configured.stdout.strip():
        return configured.stdout.strip()
    default = subprocess.run(
        [sys.executable, "-c", "from pip._internal.models.index import PyPI; print(PyPI.simple_url)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return default.stdout.strip()


def check_registry(timeout_s: float = 20.0, requirement: str = SYNTH_AI) -> str:
    """Ask the package index for synth-ai's page; return the index URL.

    Any HTTP answer (even an error status) means the index is reachable: the install then runs
    and any failure of it is a real failure. Raises ``RegistryUnreachable`` only when no answer
    comes at all (name resolution, connection or TLS set-up failed, or it timed out).
    """
    index = _pip_index_url()
    if index.startswith("file:"):
        return index
    url = index.rstrip("/") + "/synth-ai/"
    cafile = os.environ.get("PIP_CERT") or None
    context = ssl.create_default_context(cafile=cafile) if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(url, timeout=timeout_s, context=context) as answer:
            answer.read(1)
    except urllib.error.HTTPError:
        return index  # it answered
    except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
        raise RegistryUnreachable(
            f"the package index {index} is unreachable ({error}); cannot install {requirement}"
        ) from None
    return index


def _remove_stale_builds(root: Path) -> None:
    """Delete ``venv.building-<pid>`` folders whose builder process is gone (a killed build)."""
    for folder in root.glob("venv.building-*"):
        try:
            pid = int(folder.name.rsplit("-", 1)[1])
            os.kill(pid, 0)
        except (ValueError, ProcessLookupError):
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            continue  # alive, someone else's


def ensure_venv(root: Path | None = None, version: str = VERSION) -> TaskAppVenv:
    """The built venv of synth-ai ``version``, building it first when missing.

    Raises ``RegistryUnreachable`` when a build is needed and the index cannot be reached, and
    ``RuntimeError`` (with pip's output) when the install itself fails.
    """
    requirement = f"synth-ai=={version}"
    root = root or cache_root(version)
    venv = root / "venv"
    if is_built(venv, requirement):
        return TaskAppVenv(venv, None)
    root.mkdir(parents=True, exist_ok=True)
    _remove_stale_builds(root)
    check_registry(requirement=requirement)
    started = time.monotonic()
    building = root / f"venv.building-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(building)], check=True)
    install = subprocess.run(
        [
            str(building / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "-q",
            requirement,
            *EXTRAS.get(version, ()),
        ],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if install.returncode != 0:
        shutil.rmtree(building, ignore_errors=True)
        tail = "\n".join((install.stdout + install.stderr).splitlines()[-40:])
        raise RuntimeError(f"pip install {requirement} failed (exit {install.returncode}):\n{tail}")
    if not (building / "bin" / "synth-ai").is_file():
        raise RuntimeError(f"{building}: pip installed {requirement} but bin/synth-ai is missing")
    (building / STAMP).write_text(requirement + "\n", encoding="utf-8")
    if is_built(venv, requirement):  # another process finished a build meanwhile: keep that one (it may be in use)
        shutil.rmtree(building, ignore_errors=True)
        return TaskAppVenv(venv, time.monotonic() - started)
    if venv.exists():  # an unstamped leftover (only stamped builds are ever renamed into place)
        shutil.rmtree(venv)
    building.rename(venv)
    return TaskAppVenv(venv, time.monotonic() - started)
