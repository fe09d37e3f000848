"""What every live source gives: ``Poll`` (new episodes and problems) and the ``Source`` protocol."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from workbench.data.episodes import Corpus, Episode
from workbench.data.importers import ImportIssue

#: The metadata key an episode taken from a live source carries: ``{"source": Source.key,
#: "item": where in the source it came from}``. The watcher appends an (source, item) pair once.
ORIGIN_KEY = "watched"


@dataclass
class Poll:
    """What one poll found.

    Attributes:
        corpus: The episodes new since the last poll, in source order, each with its
            ``ORIGIN_KEY`` metadata.
        landed: Per episode, when its item landed in the source (epoch seconds: a file's mtime).
        problems: Items that cannot be read, each named (the source goes on past them).
        settling: How many items were seen but are not complete yet (poll again soon).
        notes: What the source says once (e.g. the kind it told from its first file).
    """

    corpus: Corpus = field(default_factory=Corpus)
    landed: list[float] = field(default_factory=list)
    problems: list[ImportIssue] = field(default_factory=list)
    settling: int = 0
    notes: list[str] = field(default_factory=list)


class Source(Protocol):
    """A place episodes keep arriving in. Reading it never modifies it."""

    @property
    def kind(self) -> str:
        """``rollouts``, ``recorder``, ``corpus`` or ``traces`` (``undecided`` until a file tells it)."""
        ...

    #: What is watched (a folder or a database file).
    path: Path

    @property
    def key(self) -> str:
        """``<kind>:<absolute path>``: names the source in origins and in the watcher's state."""
        ...

    def poll(self) -> Poll:
        """The episodes new since the last poll (or since ``restore``).

        Returns:
            The new episodes, the problems met (never raised: the source goes on) and what is
            still settling.
        """
        ...

    def progress(self) -> dict[str, Any]:
        """What was read so far, JSON-able (kept in the watcher's state file).

        Returns:
            The source's own bookkeeping (e.g. files read and their sizes), for ``restore``.
        """
        ...

    def restore(self, progress: dict[str, Any]) -> None:
        """Continue from a ``progress()`` of an earlier run (junk is ignored: reading again is
        harmless, the watcher drops origins it holds).

        Args:
            progress: What ``progress()`` returned, read back from the watcher's state file.
        """
        ...

    def watch_paths(self) -> list[Path]:
        """Existing folders whose file events should wake the watcher (may be empty).

        Returns:
            The folders to watch for file events; empty when the watcher should poll by time.
        """
        ...


def source_key(kind: str, path: Path) -> str:
    """``Source.key`` for ``kind`` at ``path``."""
    return f"{kind}:{path.resolve()}"


def with_origin(episode: Episode, key: str, item: str) -> Episode:
    """``episode`` with ``ORIGIN_KEY`` metadata naming where it came from (in place; returned)."""
    episode.metadata = {**episode.metadata, ORIGIN_KEY: {"source": key, "item": item}}
    return episode


def content_key(episode: Episode) -> str:
    """An episode's identity by its content, not by where it was found: a hash of its run id,
    its seed and its decisions (the actions played, the inventories, Crafter's rewards). The
    same episode read from a moved file, a file imported before, or a file read again hashes
    the same; a file rewritten with another run does not."""
    metadata = episode.metadata
    digest = hashlib.sha256()
    head = [str(metadata.get("run_id")), str(metadata.get("seed")), episode.actions]
    digest.update(json.dumps(head, separators=(",", ":")).encode("utf-8"))
    digest.update(np.ascontiguousarray(episode.inventory, dtype=np.int64).tobytes())
    digest.update(np.ascontiguousarray(episode.env_reward, dtype=np.float64).tobytes())
    return digest.hexdigest()


def origin_of(metadata: dict[str, Any]) -> tuple[str, str] | None:
    """Where an episode came from, if it came from a watch.

    Args:
        metadata: The episode's metadata.

    Returns:
        (source key, item) from its ``ORIGIN_KEY`` entry; None when it has no well-formed one.
    """
    origin = metadata.get(ORIGIN_KEY)
    if isinstance(origin, dict) and isinstance(origin.get("source"), str) and isinstance(origin.get("item"), str):
        return origin["source"], origin["item"]
    return None
