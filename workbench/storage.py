"""The on-disk corpus format: a folder with one compressed ``.npz`` per episode and an index.

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
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.atomic import atomic_path, atomic_write_text
from workbench.crafter_facts import ACTIONS
from workbench.episodes import ACTION_IDS, INDEX_COLUMNS, Corpus, Episode, Frames
from workbench.errors import CorpusFormatError, EpisodeError, TargetExistsError

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


# -- writing ----------------------------------------------------------------------------------
def save_episode(root: str | Path, episode: Episode, *, overwrite: bool = False) -> Path:
    """Write one episode file atomically; an existing file is replaced only with ``overwrite``."""
    path = Path(root) / episode_filename(episode.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    offsets = np.cumsum([0] + [len(d) for d in episode.actions], dtype=np.int64)
    arrays: dict[str, np.ndarray] = {name: getattr(episode, name) for name in _ARRAYS}
    arrays["action_ids"] = np.array([ACTION_IDS[a] for d in episode.actions for a in d], dtype=np.int8)
    arrays["action_offsets"] = offsets
    if episode.has_frames:
        frames = episode.load_frames(keep=False)
        arrays["frames"] = frames.images
        arrays["step_decision"] = frames.step_decision
    meta = {
        "schema_version": SCHEMA_VERSION, "id": episode.id, "metadata": episode.metadata, "logged": episode.logged,
        "views": episode.views, "messages": episode.messages,
    }
    arrays["meta"] = np.array(json.dumps(_jsonable(meta)))
    with atomic_path(path, overwrite=overwrite) as tmp:
        with open(tmp, "wb") as handle:
            np.savez_compressed(handle, **arrays)
    return path


def write_index(root: str | Path, episodes: Iterable[tuple[str, dict[str, Any]]]) -> Path:
    """Write ``corpus.json`` from (file, index row) pairs, atomically (it is ours to replace)."""
    rows = [{"file": file, **_jsonable(row)} for file, row in episodes]
    document = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "episodes": rows}
    path = Path(root) / INDEX_FILE
    atomic_write_text(path, json.dumps(document, indent=1) + "\n", overwrite=True)
    return path


def save_corpus(corpus: Corpus, root: str | Path, *, overwrite: bool = False) -> Path:
    """Save every episode of ``corpus`` under ``root`` and write its index.

    Episodes already in ``root`` are kept (the index lists them too); one with the same id is
    replaced only with ``overwrite``, otherwise ``FileExistsError`` names it before anything
    is written.
    """
    root = Path(root)
    existing = read_index(root) if (root / INDEX_FILE).exists() else []
    existing_ids = {row["episode"] for row in existing}
    clashes = [i for i in corpus.ids if i in existing_ids]
    if clashes and not overwrite:
        raise TargetExistsError(f"{root}: already holds episode(s) {clashes[:5]}; pass overwrite=True to replace them")
    rows = {row["episode"]: (row["file"], row) for row in existing}
    for episode in corpus:
        save_episode(root, episode, overwrite=overwrite)
        rows[episode.id] = (episode_filename(episode.id), episode.index_row())
    write_index(root, rows.values())
    return root


# -- reading ----------------------------------------------------------------------------------
def read_index(root: str | Path) -> list[dict[str, Any]]:
    """The rows of ``corpus.json``; ``CorpusFormatError`` naming the file when it is not one."""
    path = Path(root) / INDEX_FILE
    if not path.exists():
        raise CorpusFormatError(f"{path}: not found; is {root} a corpus folder (made by Corpus.save or `workbench record`)?")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise CorpusFormatError(f"{path}: line {error.lineno}: not valid JSON ({error.msg})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise CorpusFormatError(f"{path}: not a workbench corpus index (format should be {FORMAT!r})")
    if document.get("schema_version") != SCHEMA_VERSION:
        raise CorpusFormatError(f"{path}: schema_version {document.get('schema_version')!r}; this workbench reads {SCHEMA_VERSION}")
    return list(document["episodes"])


def load_corpus(root: str | Path) -> Corpus:
    """Open a corpus folder. Reads only the index; episodes load on first use."""
    root = Path(root)
    rows = read_index(root)
    index = pd.DataFrame([{c: row.get(c) for c in INDEX_COLUMNS} for row in rows], columns=list(INDEX_COLUMNS))
    index["counts"] = index["counts"].fillna("observed")  # indexes written before the column existed
    loaders = [_episode_loader(root / row["file"], row["episode"]) for row in rows]
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
        raise CorpusFormatError(f"{path}: schema_version {meta.get('schema_version')!r}; this workbench reads {SCHEMA_VERSION}")
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


def _episode_loader(path: Path, episode_id: str):
    def load() -> Episode:
        episode = load_episode(path)
        if episode.id != episode_id:
            raise CorpusFormatError(f"{path}: holds episode {episode.id!r}, but {INDEX_FILE} lists it as {episode_id!r}")
        return episode

    return load


def _load_frames(path: Path) -> Frames:
    with _open_npz(path) as data:
        try:
            return Frames(images=data["frames"], step_decision=data["step_decision"])
        except (KeyError, *_READ_ERRORS) as error:
            raise CorpusFormatError(f"{path}: cannot read frames ({error})") from None


def _open_npz(path: Path):
    if not path.exists():
        raise CorpusFormatError(f"{path}: episode file not found")
    try:
        return np.load(path, allow_pickle=False)
    except _READ_ERRORS as error:
        raise CorpusFormatError(f"{path}: not a readable .npz episode file ({error})") from None


def _jsonable(value: Any) -> Any:
    """Plain JSON types for metadata that may hold numpy scalars or arrays."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
