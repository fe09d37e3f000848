"""The old corpus layout (schema_version 1), read-only: a folder with one ``.npz`` per episode.

Corpora written before the columnar layout (``workbench.storage``) still open, read-only;
``workbench corpus upgrade OLD NEW`` (``workbench.storage.upgrade_corpus``) converts them.

::

    my_corpus/
      corpus.json            {"format": "crafter-workbench-corpus", "schema_version": 1,
                              "episodes": [{"file": "episodes/<id>.npz", <index row>}, ...]}
      episodes/<id>.npz      arrays of one episode (below) + "meta", a JSON string

Episode arrays: ``inventory`` (n+1, 16), ``achievement_counts`` and ``achievement_status``
(n+1, 22), ``player_pos`` (n+1, 2), ``env_reward`` and ``done`` (n,), ``action_ids`` (all steps'
Crafter action ids, flat) with ``action_offsets`` (n+1: decision i holds
``action_ids[offsets[i-1]:offsets[i]]``), and optionally ``frames`` (steps+1, 64, 64, 3) uint8 with
``step_decision`` (steps,). ``meta`` holds ``schema_version``, ``id``, ``metadata``, ``logged``, ``views`` and ``messages``.

No pickle anywhere: everything is plain arrays and JSON, read with ``allow_pickle=False``.
Opening a corpus reads ``corpus.json`` only; an episode's arrays are read when it is first used
and its frames when they are first touched.
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.crafter_facts import ACTIONS
from workbench.episodes import INDEX_COLUMNS, Corpus, Episode, Frames
from workbench.errors import CorpusFormatError, EpisodeError, UnsafeCorpusPathError

FORMAT = "crafter-workbench-corpus"
SCHEMA_VERSION = 1
INDEX_FILE = "corpus.json"
EPISODE_DIR = "episodes"
_ARRAYS = ("inventory", "achievement_counts", "achievement_status", "player_pos", "env_reward", "done")
#: What numpy raises for a truncated or corrupt .npz (a damaged deflate stream gives zlib.error).
_READ_ERRORS = (ValueError, OSError, zipfile.BadZipFile, EOFError, zlib.error)


def episode_filename(episode_id: str) -> str:
    """The file an episode is stored in: its id with unsafe characters replaced."""
    return f"{EPISODE_DIR}/{re.sub(r'[^A-Za-z0-9._-]', '_', episode_id)}.npz"


# -- reading ----------------------------------------------------------------------------------
def read_index(root: str | Path) -> list[dict[str, Any]]:
    """The rows of ``corpus.json``; ``CorpusFormatError`` naming the file when it is not one."""
    path = Path(root) / INDEX_FILE
    if not path.exists():
        raise CorpusFormatError(
            f"{path}: not found; is {root} a corpus folder (made by Corpus.save or `workbench record`)?"
        )
    try:
        document = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise CorpusFormatError(f"{path}: not UTF-8 text") from None
    except IsADirectoryError:
        raise CorpusFormatError(f"{path}: a folder, not the corpus index file") from None
    except json.JSONDecodeError as error:
        raise CorpusFormatError(f"{path}: line {error.lineno}: not valid JSON ({error.msg})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise CorpusFormatError(f"{path}: not a workbench corpus index (format should be {FORMAT!r})")
    if document.get("schema_version") != SCHEMA_VERSION:
        raise CorpusFormatError(
            f"{path}: schema_version {document.get('schema_version')!r}; this workbench reads {SCHEMA_VERSION}"
        )
    rows = document.get("episodes")
    if not isinstance(rows, list):
        raise CorpusFormatError(f"{path}: episodes must be a list of index rows, got {type(rows).__name__}")
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("episode"), str) or not isinstance(row.get("file"), str):
            raise CorpusFormatError(f"{path}: episodes[{i}] must be an object with string 'episode' and 'file'")
        for column in ("decisions", "steps"):
            if isinstance(row.get(column), bool) or not isinstance(row.get(column), int) or row[column] < 0:
                raise CorpusFormatError(
                    f"{path}: episodes[{i}].{column} must be a whole number >= 0, got {row.get(column)!r}"
                )
    return list(rows)


def load_legacy_corpus(root: str | Path) -> Corpus:
    """Open an old-layout corpus folder. Reads only the index; episodes load on first use."""
    root = Path(root)
    rows = read_index(root)
    index = pd.DataFrame([{c: row.get(c) for c in INDEX_COLUMNS} for row in rows], columns=list(INDEX_COLUMNS))
    index["counts"] = index["counts"].fillna("observed")  # indexes written before the column existed
    loaders = [_episode_loader(_inside(root, row.get("file")), row["episode"]) for row in rows]
    return Corpus(loaders=loaders, index=index.astype({"has_frames": bool, "has_logged": bool}))


def load_episode(path: str | Path) -> Episode:
    """Read one episode file (frames stay on disk until touched)."""
    path = Path(path)
    with _open_npz(path) as data:
        missing = [name for name in ("meta", *_ARRAYS, "action_ids", "action_offsets") if name not in data.files]
        if missing:
            raise CorpusFormatError(f"{path}: missing array(s) {', '.join(map(repr, missing))}")
        try:
            meta = json.loads(str(data["meta"]))
            arrays = {name: data[name] for name in _ARRAYS}
            action_ids, offsets = data["action_ids"], data["action_offsets"]
        except _READ_ERRORS as error:
            raise CorpusFormatError(f"{path}: corrupt episode file ({error})") from None
        has_frames = "frames" in data.files
    # Checked outside the try: CorpusFormatError is a ValueError and would be re-wrapped there.
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise CorpusFormatError(
            f"{path}: schema_version {meta.get('schema_version')!r}; this workbench reads {SCHEMA_VERSION}"
        )
    if (
        action_ids.ndim != 1
        or offsets.ndim != 1
        or len(offsets) < 2
        or not np.issubdtype(offsets.dtype, np.integer)
        or offsets[0] != 0
        or np.any(np.diff(offsets) < 1)
        or offsets[-1] != len(action_ids)
    ):
        raise CorpusFormatError(
            f"{path}: action_ids must be flat and action_offsets rising from 0 to their "
            f"length (shapes {action_ids.shape} and {offsets.shape})"
        )
    if np.any(action_ids < 0) or np.any(action_ids >= len(ACTIONS)):
        raise CorpusFormatError(f"{path}: action ids outside 0..{len(ACTIONS) - 1}")
    actions = [[ACTIONS[a] for a in action_ids[start:end]] for start, end in zip(offsets[:-1], offsets[1:])]
    try:
        return Episode(
            id=meta["id"],
            actions=actions,
            metadata=meta.get("metadata") or {},
            logged=meta.get("logged"),
            views=meta.get("views"),
            messages=meta.get("messages"),
            frames_loader=(lambda: _load_frames(path)) if has_frames else None,
            **arrays,
        )
    except EpisodeError as error:
        raise CorpusFormatError(f"{path}: {error}") from None


def _inside(root: Path, file: Any) -> Path:
    """The episode file an index row names, refused unless it is ``episodes/<name>.npz`` right
    inside this folder (never a path elsewhere, never through a symlink)."""
    if not isinstance(file, str) or not re.fullmatch(rf"{EPISODE_DIR}/[A-Za-z0-9._-]+\.npz", file) or ".." in file:
        raise UnsafeCorpusPathError(f"{root / INDEX_FILE}: episode file {file!r} is not a file of {root / EPISODE_DIR}")
    path = root / file
    for part in (root / EPISODE_DIR, path):
        if part.is_symlink():
            raise UnsafeCorpusPathError(f"{part}: is a symlink; a corpus folder must hold its own files")
    return path


def _episode_loader(path: Path, episode_id: str) -> Callable[[], Episode]:
    def load() -> Episode:
        episode = load_episode(path)
        if episode.id != episode_id:
            raise CorpusFormatError(
                f"{path}: holds episode {episode.id!r}, but {INDEX_FILE} lists it as {episode_id!r}"
            )
        return episode

    return load


def _load_frames(path: Path) -> Frames:
    with _open_npz(path) as data:
        try:
            return Frames(images=data["frames"], step_decision=data["step_decision"])
        except (KeyError, *_READ_ERRORS) as error:
            raise CorpusFormatError(f"{path}: cannot read frames ({error})") from None


def _open_npz(path: Path) -> Any:
    if not path.exists():
        raise CorpusFormatError(f"{path}: episode file not found")
    try:
        return np.load(path, allow_pickle=False)
    except _READ_ERRORS as error:
        raise CorpusFormatError(f"{path}: not a readable .npz episode file ({error})") from None
