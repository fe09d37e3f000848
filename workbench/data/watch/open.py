"""``open_source``: a live source for a path, its kind told from the path or given."""

from __future__ import annotations

from pathlib import Path

from workbench.data.storage.layout import MARKER
from workbench.data.watch.folders import CorpusFolder, RecorderFolder, RolloutFolder
from workbench.data.watch.source import Source
from workbench.data.watch.traces import TraceDatabase
from workbench.errors import WatchError

#: The kinds of live source, and what each is.
KINDS = {
    "rollouts": "a folder task-app rollout responses (.json, .jsonl) keep landing in",
    "recorder": "a folder crafter.Recorder writes its .npz episode files into",
    "corpus": "a workbench corpus folder being written (workbench record, workbench.env.RecordEpisodes)",
    "traces": "a synth-ai trace database (task-app serve --trace-db) a server is writing",
}

_SQLITE_MAGIC = b"SQLite format 3\x00"


def detect_kind(path: str | Path) -> str | None:
    """The kind of source ``path`` holds, or None when it cannot be told (a missing folder, or
    one without rollout, Recorder or corpus files yet)."""
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
    suffixes = {p.suffix.lower() for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")}
    if ".npz" in suffixes:  # the Recorder also writes stats.jsonl: its .npz files tell it
        return "recorder"
    return "rollouts" if suffixes & {".json", ".jsonl"} else None


def open_source(path: str | Path, kind: str | None = None) -> Source:
    """The live source at ``path`` (``kind`` one of ``KINDS``; told from the path when None).

    A folder (or trace database) that does not exist yet is fine with a ``kind`` (it is read
    once it appears).
    Raises ``WatchError`` for an unknown kind or one that cannot be told (naming the path)."""
    path = Path(path)
    if kind is None:
        kind = detect_kind(path)
        if kind is None:
            what = "does not exist" if not path.exists() else "holds nothing that tells its kind yet"
            raise WatchError(f"{path}: {what}; say what it is with kind= (--kind): one of {', '.join(KINDS)}")
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
