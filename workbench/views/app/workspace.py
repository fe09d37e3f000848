"""The app's workspace: a folder of the session's configs as YAML files, kept across restarts."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from workbench.core.config import RewardConfig
from workbench.errors import ConfigError, WorkbenchError

log = logging.getLogger(__name__)

#: The Tuner's config as it is being designed, saved after every change (not a user's file).
DRAFT_NAME = "tuner-draft"
DRAFTS = "drafts"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class WorkspaceError(WorkbenchError):
    """A config name that cannot become a file in the workspace."""


def default_workspace(corpus_spec: str) -> Path:
    """Where a session keeps its configs when ``--workspace`` is not given: ``.workbench-app``
    inside a corpus folder; for the shipped sample, ``$XDG_DATA_HOME/workbench/sample-app``
    (the package folder may not be writable)."""
    if corpus_spec == "sample":
        data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
        return data_home / "workbench" / "sample-app"
    return Path(corpus_spec) / ".workbench-app"


def file_stem(name: str) -> str:
    """The file name (without ``.yaml``) a config called ``name`` is kept under: every run of
    characters other than letters, digits, ``.``, ``_`` and ``-`` becomes ``_``, and dots and
    underscores at either end are dropped (``../wood heavy`` -> ``wood_heavy``), so the file stays
    inside the workspace and is never hidden. ``WorkspaceError`` when nothing is left."""
    stem = _UNSAFE.sub("_", name.strip()).strip("._")
    if not stem.strip("-"):
        raise WorkspaceError(f"config name {name!r}: needs at least one letter or digit")
    return stem[:100]


class Workspace:
    """The configs of a session, one ``NAME.yaml`` per config in ``folder`` (created on first
    use), plus the Tuner's draft in ``drafts/``. Every write is atomic (``RewardConfig.to_file``)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).expanduser().resolve()

    def path_for(self, name: str) -> Path:
        """The file a config called ``name`` is kept in (always directly inside the folder)."""
        path = (self.folder / f"{file_stem(name)}.yaml").resolve()
        if path.parent != self.folder:  # cannot happen after file_stem; a second guard for a path escape
            raise WorkspaceError(f"config name {name!r}: would leave the workspace {self.folder}")
        return path

    def configs(self) -> tuple[dict[str, RewardConfig], list[str]]:
        """Every config kept in the workspace, by file stem, and one message per file that could
        not be read (the file stays as it is)."""
        found: dict[str, RewardConfig] = {}
        problems: list[str] = []
        if not self.folder.is_dir():
            return found, problems
        for path in sorted(self.folder.glob("*.yaml")):
            try:
                found[path.stem] = RewardConfig.from_file(path)
            except (WorkbenchError, OSError) as error:
                log.warning("workspace config %s not loaded: %s", path, error)
                problems.append(str(error))
        return found, problems

    def save(self, name: str, config: RewardConfig, *, overwrite: bool = False) -> Path:
        """Keep ``config`` as ``name``; returns the file. ``TargetExistsError`` when a config of
        that file name is kept already and ``overwrite`` is not set."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return Path(config.to_file(self.path_for(name), overwrite=overwrite))

    def save_draft(self, config: RewardConfig) -> Path:
        """Keep the Tuner's config as it is now (replacing the previous draft); returns the file."""
        folder = self.folder / DRAFTS
        folder.mkdir(parents=True, exist_ok=True)
        return Path(config.to_file(folder / f"{DRAFT_NAME}.yaml", overwrite=True))

    def draft(self) -> RewardConfig | None:
        """The Tuner's draft kept by an earlier session, or None (also when it cannot be read)."""
        path = self.folder / DRAFTS / f"{DRAFT_NAME}.yaml"
        if not path.is_file():
            return None
        try:
            return RewardConfig.from_file(path)
        except (ConfigError, OSError) as error:
            log.warning("tuner draft %s not restored: %s", path, error)
            return None
