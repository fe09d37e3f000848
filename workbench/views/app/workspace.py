"""The app's workspace: a folder of the session's configs as YAML files, kept across restarts."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
import stat
import time
import unicodedata
from pathlib import Path

from workbench.core.config import RewardConfig
from workbench.errors import ConfigError, UnsafePathError, WorkbenchError
from workbench.util.atomic_at import write_at

log = logging.getLogger(__name__)

#: The Tuner's config as it is being designed, saved after every change (not a user's file):
#: ``drafts/tuner-draft-TAB.yaml``, one per browser tab (``tuner-draft.yaml`` from before is read too).
DRAFT_NAME = "tuner-draft"
DRAFTS = "drafts"
#: Anything but letters and digits (Unicode's: "дерево", "木の報酬"), ".", "_" and "-": never a
#: path separator, so a name stays one file in the folder.
_UNSAFE = re.compile(r"[^\w.-]+")
#: The longest file stem in UTF-8 bytes (a file name is at most 255 bytes; ".yaml" follows).
_MAX_STEM_BYTES = 200


class WorkspaceError(WorkbenchError):
    """A config name that cannot become a file in the workspace."""


class ChangedSinceLoadedError(WorkspaceError):
    """A save that would replace a file changed since this session read or wrote it (another tab
    or program saved it meanwhile): refused once, as an editor asks before overwriting."""


def new_tab_id() -> str:
    """A name for one browser tab's files (its draft): the UTC time it opened and six random hex digits.

    Returns:
        The id, e.g. ``20261207-034512-a1b2c3``.
    """
    return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
    use), plus the Tuner's drafts in ``drafts/``, one per browser tab (``tab``). Every path it
    reads or writes comes from ``inside`` (no symlink anywhere from the folder down, never
    outside it); every write is atomic and opened relative to the folder's descriptor, each step
    without following a symlink (``write_at``), so a folder swapped for a link after the check
    cannot redirect it.

    One ``Workspace`` per session (browser tab): it remembers the text of every file it read or
    wrote, and a save replacing a file whose text has changed since (another tab saved it) is
    refused once with ``ChangedSinceLoadedError``, as an editor asks before overwriting."""

    def __init__(self, folder: str | Path, tab: str | None = None) -> None:
        # The folder's parents are resolved; the folder itself is not, so a symlink there
        # (a planted ``.workbench-app -> elsewhere``) is seen and refused by ``inside``.
        given = Path(folder).expanduser()
        self.folder = given.parent.resolve() / given.name if given.name else given.resolve()
        self.tab = tab or new_tab_id()
        self._seen: dict[tuple[str, ...], str] = {}  # file (parts below the folder) -> digest of its text
        self._adopted: str | None = None  # another tab's draft this one started from

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
                checked = self.inside(path.name)
                digest = _digest(checked.read_bytes())  # before the parse: a later change is seen
                found[path.stem] = RewardConfig.from_file(checked)
                self._seen[(path.name,)] = digest
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

    @property
    def draft_name(self) -> str:
        """The file name of this tab's draft in ``drafts/``."""
        return f"{DRAFT_NAME}-{self.tab}.yaml"

    def save_draft(self, config: RewardConfig) -> Path:
        """Keep the Tuner's config as it is now in this tab's draft (replacing its previous
        one; another tab's draft is never touched, except the one this tab started from, see
        ``adopt``); returns the file. ``WorkspaceError`` for a symlink on the way (see ``write``).

        Args:
            config: The Tuner's config.

        Returns:
            The file written.

        Raises:
            WorkspaceError: A symlink on the way.
        """
        path = self.write((DRAFTS, self.draft_name), config, overwrite=True, guard=False)
        adopted, self._adopted = self._adopted, None
        if adopted is not None and adopted != self.draft_name:
            # This tab's draft now carries the one it started from: that file is replaced by it
            # (its tab, if still open, writes its own again on its next change).
            try:
                self.inside(DRAFTS, adopted).unlink(missing_ok=True)
            except (WorkbenchError, OSError) as error:
                log.warning("draft %s not removed: %s", adopted, error)
        return path

    def adopt(self, draft: Path) -> None:
        """This tab starts from ``draft`` (another tab's, from ``drafts()``): its first own draft
        replaces that file, so drafts do not pile up across restarts.

        Args:
            draft: A file ``drafts()`` gave.
        """
        self._adopted = draft.name

    def drafts(self) -> list[tuple[Path, RewardConfig]]:
        """Every tab's kept draft, the newest first (one that cannot be read, or is reached
        through a symlink, is left out with a log line).

        Returns:
            (file, config) pairs.
        """
        try:
            folder = self.inside(DRAFTS, self.draft_name).parent  # the folder checked on the way
            if not folder.is_dir():
                return []
            found = []
            for path in folder.glob(f"{DRAFT_NAME}*.yaml"):
                try:
                    checked = self.inside(DRAFTS, path.name)
                    found.append((os.lstat(checked).st_mtime_ns, checked, RewardConfig.from_file(checked)))
                except (WorkbenchError, OSError) as error:
                    log.warning("tuner draft %s not restored: %s", path, error)
        except (WorkbenchError, OSError) as error:
            log.warning("tuner drafts not restored: %s", error)
            return []
        return [(path, config) for _, path, config in sorted(found, key=lambda item: (-item[0], item[1].name))]

    def write(
        self, parts: tuple[str, ...], config: RewardConfig, *, overwrite: bool = False, guard: bool = True
    ) -> Path:
        """Write ``config`` to ``folder/parts...`` (folders made), atomically and relative to
        the workspace folder's descriptor, ``O_NOFOLLOW`` at each step (``write_at``). With
        ``guard``, a file this session read or wrote whose text has changed since is not
        replaced: ``ChangedSinceLoadedError`` says so once, and the next save replaces it.

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
            guard: Refuse once to replace a file changed since this session saw it.

        Returns:
            The file written.

        Raises:
            TargetExistsError: The file exists and not ``overwrite``.
            ChangedSinceLoadedError: ``guard``, and the file changed since this session saw it.
            WorkspaceError: A symlink on the way.
        """
        data = config.to_text(parts[-1]).encode("utf-8")
        if overwrite and guard:
            self._refuse_if_changed(parts)
        try:
            path = write_at(self.folder, parts, data, overwrite=overwrite)
            self._seen[parts] = _digest(data)
            return path
        except UnsafePathError as error:
            raise WorkspaceError(f"{error} (the workspace is {self.folder})") from None
        except WorkbenchError:
            raise
        except OSError as error:
            raise ConfigError(f"{self.folder.joinpath(*parts)}: cannot write: {error.strerror}") from None

    def _refuse_if_changed(self, parts: tuple[str, ...]) -> None:
        """``ChangedSinceLoadedError`` when the file ``parts`` names was seen by this session
        (read or written) and holds another text now; the text found is then taken as seen, so
        the user's next save, asked again, replaces it."""
        seen = self._seen.get(parts)
        if seen is None:
            return
        try:
            now = _digest(self.inside(*parts).read_bytes())
        except FileNotFoundError:
            return  # removed since: nothing to lose
        except OSError as error:
            raise ConfigError(f"{self.folder.joinpath(*parts)}: cannot read: {error.strerror}") from None
        if now != seen:
            self._seen[parts] = now
            raise ChangedSinceLoadedError(
                f"{self.folder.joinpath(*parts)}: changed since this tab loaded it (another tab or program "
                "saved it), not replaced: reload the page to see it, save under another name, or save "
                "again to replace it"
            )

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
        """The newest draft kept by any tab (``drafts()``), or None (also when none can be read,
        or each is reached through a symlink).

        Returns:
            The draft, or None.
        """
        drafts = self.drafts()
        return drafts[0][1] if drafts else None
