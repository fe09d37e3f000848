"""``open_source``: a live source for a path, its kind told from the path, given, or told later."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.data.source_kinds import KINDS
from workbench.data.storage import MARKER
from workbench.data.watch.folders import CorpusFolder, RecorderFolder, RolloutFolder
from workbench.data.watch.source import Poll, Source, source_key
from workbench.data.watch.traces import TraceDatabase
from workbench.errors import WatchError

_SQLITE_MAGIC = b"SQLite format 3\x00"
#: What ``crafter.Recorder``'s StatsRecorder writes (empty, at once) before any ``.npz``: not a rollout file.
_RECORDER_STATS = "stats.jsonl"
#: ``UndecidedSource.kind`` until its kind is told.
UNDECIDED = "undecided"


def detect_kind(path: str | Path) -> str | None:
    """The kind of source ``path`` holds.

    Args:
        path: A folder or a file.

    Returns:
        ``traces`` for an SQLite file, ``corpus`` for a folder with the corpus marker,
        ``recorder`` for one with ``.npz``/``.mp4`` files, ``rollouts`` for one with ``.json``/
        ``.jsonl`` files; None when it cannot be told (another file, a missing folder, or one
        without such files yet).
    """
    path = Path(path)
    if path.is_file():
        with path.open("rb") as handle:
            if handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC:
                return "traces"
        return None
    if not path.is_dir():
        return None
    if (path / MARKER).is_file():
        return "corpus"
    files = [p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")]
    suffixes = {p.suffix.lower() for p in files}
    if suffixes & {".npz", ".mp4"}:  # the Recorder's episode (and video) files tell it
        return "recorder"
    # The Recorder opens stats.jsonl before its first episode ends: alone it tells nothing yet.
    rollouts = [p for p in files if p.suffix.lower() in {".json", ".jsonl"} and p.name != _RECORDER_STATS]
    return "rollouts" if rollouts else None


def open_source(path: str | Path, kind: str | None = None) -> Source:
    """The live source at ``path`` (``kind`` one of ``KINDS``; told from the path when None).

    A folder (or trace database) that does not exist yet is fine with a ``kind`` (it is read
    once it appears); without one, a missing or empty folder gives an ``UndecidedSource``,
    which waits and tells the kind from the first file that lands.

    Args:
        path: The folder or trace database file to watch.
        kind: One of ``KINDS``, or None to tell it from the path.

    Returns:
        The source (an ``UndecidedSource`` when the kind cannot be told yet).

    Raises:
        WatchError: ``kind`` is unknown, ``path`` is a file that is no trace database, a
            traces source is a folder, or a folder source is a file (each naming the path).
    """
    path = Path(path)
    if kind is None:
        kind = detect_kind(path)
        if kind is None:
            if path.is_file():
                raise WatchError(f"{path}: not a synth-ai trace database; give a folder, or --kind: {', '.join(KINDS)}")
            return UndecidedSource(path)
    return _opened(path, kind)


def _opened(path: Path, kind: str) -> Source:
    """The source of ``kind`` at ``path``; see ``open_source``."""
    if kind not in KINDS:
        raise WatchError(f"{path}: unknown source kind {kind!r}; kinds are {', '.join(KINDS)}")
    if kind == "traces":
        if path.is_dir():
            raise WatchError(f"{path}: a traces source is the database file, this is a folder")
        return TraceDatabase(path)
    if path.exists() and not path.is_dir():
        raise WatchError(f"{path}: a {kind} source is a folder, this is a file")
    if kind == "rollouts":
        return RolloutFolder(path)
    if kind == "recorder":
        return RecorderFolder(path)
    return CorpusFolder(path)


class UndecidedSource:
    """A source whose kind no file tells yet (a missing or empty folder: the watcher started
    before the run). Each poll looks again; once a file tells the kind (``detect_kind``) it
    reads as that source from then on, and that poll's ``notes`` say so, once."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.told: Source | None = None

    @property
    def kind(self) -> str:
        """The told kind, ``UNDECIDED`` until then."""
        return UNDECIDED if self.told is None else self.told.kind

    @property
    def key(self) -> str:
        """See ``Source.key`` (the told source's key once told)."""
        return source_key(UNDECIDED, self.path) if self.told is None else self.told.key

    @property
    def items_are_identities(self) -> bool:
        """Whether the told source's items name episodes for good (see ``CorpusFolder``)."""
        return bool(getattr(self.told, "items_are_identities", False))

    def poll(self) -> Poll:
        """Tell the kind if a file now tells it, then poll as that source; see ``Source.poll``."""
        if self.told is None:
            kind = detect_kind(self.path)
            if kind is None:
                return Poll()
            self.told = _opened(self.path, kind)
            found = self.told.poll()
            found.notes.append(f"{self.path}: the first file tells its kind: {kind} ({KINDS[kind]})")
            return found
        return self.told.poll()

    def progress(self) -> dict[str, Any]:
        """The told source's progress (nothing before)."""
        return {} if self.told is None else self.told.progress()

    def restore(self, progress: dict[str, Any]) -> None:
        """Nothing to restore: a folder with nothing telling its kind held nothing read (a
        watch that read files restarts on a folder whose files tell its kind)."""

    def watch_paths(self) -> list[Path]:
        """The folder once it exists (until then the watcher polls by time), or the told source's."""
        if self.told is not None:
            return self.told.watch_paths()
        return [self.path] if self.path.is_dir() else []
