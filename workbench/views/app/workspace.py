"""The app's workspace: a folder of the session's configs as YAML files, kept across restarts."""

from __future__ import annotations

import logging
import os
import re
import stat
import unicodedata
from pathlib import Path

from workbench.core.config import RewardConfig
from workbench.errors import ConfigError, UnsafePathError, WorkbenchError
from workbench.util.atomic_at import write_at

log = logging.getLogger(__name__)

#: The Tuner's config as it is being designed, saved after every change (not a user's file).
DRAFT_NAME = "tuner-draft"
DRAFTS = "drafts"
#: Anything but letters and digits (Unicode's: "дерево", "木の報酬"), ".", "_" and "-": never a
#: path separator, so a name stays one file in the folder.
_UNSAFE = re.compile(r"[^\w.-]+")
#: The longest file stem in UTF-8 bytes (a file name is at most 255 bytes; ".yaml" follows).
_MAX_STEM_BYTES = 200


class WorkspaceError(WorkbenchError):
    """A config name that cannot become a file in the workspace."""


def default_workspace(corpus_spec: str) -> Path:
    """Where a session keeps its configs when ``--workspace`` is not given: ``.workbench-app``
    inside a corpus folder; for the shipped sample, ``$XDG_DATA_HOME/workbench/sample-app``
    (the package folder may not be writable).

    Args:
        corpus_spec: The corpus given (a folder or ``sample``).

    Returns:
        The workspace folder.
    """
    if corpus_spec == "sample":
        data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
        return data_home / "workbench" / "sample-app"
    return Path(corpus_spec) / ".workbench-app"


def file_stem(name: str) -> str:
    """The file name (without ``.yaml``) a config called ``name`` is kept under: every run of
    characters other than letters and digits (any script), ``.``, ``_`` and ``-`` becomes ``_``, and dots and
    underscores at either end are dropped (``../wood heavy`` -> ``wood_heavy``), so the file stays
    inside the workspace and is never hidden. ``WorkspaceError`` when nothing is left.

    Args:
        name: The config's name.

    Returns:
        The file stem.
    """
    stem = _UNSAFE.sub("_", unicodedata.normalize("NFC", name.strip())).strip("._")
    if not stem.strip("-"):
        raise WorkspaceError(f"config name {name!r}: needs at least one letter or digit")
    # cut at a character boundary, then drop dots left at the end (never a hidden or dot-name)
    return stem.encode()[:_MAX_STEM_BYTES].decode("utf-8", "ignore").rstrip("._")


class Workspace:
    """The configs of a session, one ``NAME.yaml`` per config in ``folder`` (created on first
    use), plus the Tuner's draft in ``drafts/``. Every path it reads or writes comes from
    ``inside`` (no symlink anywhere from the folder down, never outside it); every write is
    atomic and opened relative to the folder's descriptor, each step without following a
    symlink (``write_at``), so a folder swapped for a link after the check cannot redirect it."""

    def __init__(self, folder: str | Path) -> None:
        # The folder's parents are resolved; the folder itself is not, so a symlink there
        # (a planted ``.workbench-app -> elsewhere``) is seen and refused by ``inside``.
        given = Path(folder).expanduser()
        self.folder = given.parent.resolve() / given.name if given.name else given.resolve()

    def inside(self, *parts: str, make_folders: bool = False) -> Path:
        """The path ``folder/parts...``, checked: each part a plain name (never ``..``), and
        neither the workspace folder nor anything below it on the way (folders, the file) a
        symlink or of the wrong kind. ``make_folders`` creates the missing folders (checked
        again after). ``WorkspaceError`` naming the path otherwise.

        Args:
            *parts: Plain names, folder by folder.
            make_folders: Create missing folders on the way.

        Returns:
            The checked path.

        Raises:
            WorkspaceError: A part that is not a plain name, or a symlink on the way.
        """
        if any(part in ("", ".", "..") or "/" in part or os.sep in part for part in parts):
            raise WorkspaceError(f"{'/'.join(parts)!r}: would leave the workspace {self.folder}")
        if make_folders:
            self.folder.parent.mkdir(parents=True, exist_ok=True)
        path = self.folder
        for depth, part in enumerate(("", *parts)):
            path = path / part if part else path
            is_folder = depth < len(parts) or depth == 0  # the workspace itself is a folder
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                if not (make_folders and is_folder):
                    continue
                path.mkdir(exist_ok=True)
                mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                raise WorkspaceError(
                    f"{path}: is a symlink; the app writes only into its workspace {self.folder} (remove the link)"
                )
            if is_folder and not stat.S_ISDIR(mode):
                raise WorkspaceError(f"{path}: should be a folder of the workspace")
            if not is_folder and not stat.S_ISREG(mode):
                raise WorkspaceError(f"{path}: should be a regular file")
        return path

    def checked(self, path: str | Path) -> Path:
        """A file the user asked the app to write: when it names a place in the workspace (as
        the Tuner's save box does by default), that place checked by ``inside`` (folders made);
        elsewhere, the path as given (the user's own choice of file).

        Args:
            path: The file asked for.

        Returns:
            The path (checked when in the workspace).

        Raises:
            WorkspaceError: A symlink on the way inside the workspace.
        """
        target = Path(os.path.normpath(Path(path).expanduser().absolute()))
        try:
            relative = target.relative_to(self.folder)
        except ValueError:
            return target
        return self.inside(*relative.parts, make_folders=True) if relative.parts else self.inside()

    def path_for(self, name: str) -> Path:
        """The file a config called ``name`` is kept in (always directly inside the folder).

        Args:
            name: The config's name.

        Returns:
            The file.
        """
        return self.inside(f"{file_stem(name)}.yaml")

    def configs(self) -> tuple[dict[str, RewardConfig], list[str]]:
        """Every config kept in the workspace, by file stem, and one message per file that could
        not be read (the file stays as it is; a symlink is not followed).

        Returns:
            (configs by file stem, a message per unreadable file).
        """
        found: dict[str, RewardConfig] = {}
        problems: list[str] = []
        try:
            self.inside()
        except WorkspaceError as error:
            return found, [str(error)]
        if not self.folder.is_dir():
            return found, problems
        for path in sorted(self.folder.glob("*.yaml")):
            try:
                found[path.stem] = RewardConfig.from_file(self.inside(path.name))
            except (WorkbenchError, OSError) as error:
                log.warning("workspace config %s not loaded: %s", path, error)
                problems.append(str(error))
        return found, problems

    def save(self, name: str, config: RewardConfig, *, overwrite: bool = False) -> Path:
        """Keep ``config`` as ``name``; returns the file. ``TargetExistsError`` when a config of
        that file name is kept already and ``overwrite`` is not set; ``WorkspaceError`` for a
        symlink on the way (see ``write``).

        Args:
            name: The config's name.
            config: The config.
            overwrite: Replace a kept config of that file name.

        Returns:
            The file written.

        Raises:
            TargetExistsError: Kept already and not ``overwrite``.
            WorkspaceError: A symlink on the way.
        """
        return self.write((f"{file_stem(name)}.yaml",), config, overwrite=overwrite)

    def save_draft(self, config: RewardConfig) -> Path:
        """Keep the Tuner's config as it is now (replacing the previous draft); returns the file.
        ``WorkspaceError`` for a symlink on the way (see ``write``).

        Args:
            config: The Tuner's config.

        Returns:
            The file written.

        Raises:
            WorkspaceError: A symlink on the way.
        """
        return self.write((DRAFTS, f"{DRAFT_NAME}.yaml"), config, overwrite=True)

    def write(self, parts: tuple[str, ...], config: RewardConfig, *, overwrite: bool = False) -> Path:
        """Write ``config`` to ``folder/parts...`` (folders made), atomically and relative to
        the workspace folder's descriptor, ``O_NOFOLLOW`` at each step (``write_at``).

        Raises:
            WorkspaceError: a part that is no plain name, or a symlink or wrong kind of file on
                the way (also one swapped in between a check and the write).
            TargetExistsError: the file exists and ``overwrite`` is False.
            ConfigError: the config cannot be written (its text would not read back, a write
                error such as a full disk).

        Args:
            parts: Plain names below the workspace folder, the file's last.
            config: The config.
            overwrite: Replace an existing file.

        Returns:
            The file written.

        Raises:
            TargetExistsError: The file exists and not ``overwrite``.
            WorkspaceError: A symlink on the way.
        """
        text = config.to_text(parts[-1])
        try:
            return write_at(self.folder, parts, text.encode("utf-8"), overwrite=overwrite)
        except UnsafePathError as error:
            raise WorkspaceError(f"{error} (the workspace is {self.folder})") from None
        except WorkbenchError:
            raise
        except OSError as error:
            raise ConfigError(f"{self.folder.joinpath(*parts)}: cannot write: {error.strerror}") from None

    def write_file(self, path: str | Path, config: RewardConfig, overwrite: bool = False) -> Path:
        """Write ``config`` to a file the user named: inside the workspace through ``write``
        (never redirected by a swapped symlink), elsewhere as given (the user's own choice).

        Args:
            path: The file the user named.
            config: The config.
            overwrite: Replace an existing file.

        Returns:
            The file written.

        Raises:
            TargetExistsError: The file exists and not ``overwrite``.
            WorkspaceError: A symlink on the way inside the workspace.
        """
        target = Path(os.path.normpath(Path(path).expanduser().absolute()))
        try:
            relative = target.relative_to(self.folder)
        except ValueError:
            return Path(config.to_file(target, overwrite=overwrite))
        if not relative.parts:
            raise WorkspaceError(f"{target}: is the workspace folder; name a file in it")
        return self.write(relative.parts, config, overwrite=overwrite)

    def draft(self) -> RewardConfig | None:
        """The Tuner's draft kept by an earlier session, or None (also when it cannot be read,
        or is reached through a symlink).

        Returns:
            The draft, or None.
        """
        try:
            path = self.inside(DRAFTS, f"{DRAFT_NAME}.yaml")
            if not path.is_file():
                return None
            return RewardConfig.from_file(path)
        except (WorkbenchError, OSError) as error:
            log.warning("tuner draft not restored: %s", error)
            return None
