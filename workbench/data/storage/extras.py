"""An opened columnar corpus's per-episode extras (metadata, texts, frames), read from its parts on demand."""

from __future__ import annotations

from bisect import bisect_right
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.data.episodes import EpisodeExtras, Frames
from workbench.data.storage import frames as frame_codec
from workbench.data.storage.decode import Part, checked, read_table
from workbench.data.storage.layout import open_file, part_file
from workbench.data.storage.rows import parse_json
from workbench.errors import CorpusFormatError

#: The columns of a part's episodes table an episode's extras are read from.
_ROW_COLUMNS = ("episode", "metadata", "logged", "has_views", "has_messages", "frames_group")


class PartExtras:
    """``EpisodeExtras`` of a loaded store's episodes, read from the parts' tables on demand.

    Args:
        root: The corpus folder.
        parts: Its parts as opened (``columnar.read_parts``), in store order.
    """

    def __init__(self, root: Path, parts: list[Part]) -> None:
        self.root, self.parts = root, parts
        self._firsts = [p.first_episode for p in parts]
        self._texts: dict[str, pa.Table] = {}
        self._rows: dict[str, dict[str, list[Any]]] = {}
        self._paths: dict[str, Path] = {}  # each part's episodes table (named in errors)
        self._calls_column: dict[str, bool] = {}

    def get(self, k: int) -> EpisodeExtras:
        """Store episode ``k``'s id, metadata, logged rewards, texts and frames loader.

        Args:
            k: The episode's position in the store (over every part).

        Returns:
            Its extras (texts read with the part's first one asked for; frames when called).

        Raises:
            CorpusFormatError: A table or a JSON document does not read; names the file.
        """
        part = self.parts[bisect_right(self._firsts, k) - 1]
        row = k - part.first_episode
        value = {name: column[row] for name, column in self._columns(part).items()}
        views = messages = calls = None
        if value["has_views"] or value["has_messages"] or self._has_calls(part):
            views, messages, calls = self._text(part, row)
            views = views if value["has_views"] else None
            messages = messages if value["has_messages"] else None
        group = value["frames_group"]
        loader = (
            None
            if group is None or group < 0
            else FramesLoader(part_file(self.root, "frames", part.name), group, value["episode"])
        )
        path = self._paths[part.name]
        metadata = parse_json(value["metadata"], path, row, "metadata")
        logged = parse_json(value["logged"], path, row, "logged")
        return EpisodeExtras(value["episode"], metadata or {}, logged, views, messages, loader, calls)

    def metadata(self, k: int) -> dict[str, Any]:
        """Store episode ``k``'s metadata alone (``get(k).metadata`` without its log and texts).

        Args:
            k: The episode's position in the store (over every part).

        Returns:
            Its metadata ({} when the table holds none).

        Raises:
            CorpusFormatError: The metadata is not a JSON object; names the file and row.
        """
        part = self.parts[bisect_right(self._firsts, k) - 1]
        row = k - part.first_episode
        return parse_json(self._columns(part)["metadata"][row], self._paths[part.name], row, "metadata") or {}

    def _columns(self, part: Part) -> dict[str, list[Any]]:
        """The columns of ``part``'s episodes table that ``get`` reads, as Python values, converted
        once per part (an Arrow scalar per value and call cost ~40 us an episode: 0.12 s of CPU
        for the metadata of 3,030 episodes, which ``corpus info`` and ``audit`` read)."""
        if part.name not in self._rows:
            table = part.episodes
            self._rows[part.name] = {name: table.column(name).to_pylist() for name in _ROW_COLUMNS}
            self._paths[part.name] = part_file(self.root, "episodes", part.name)
        return self._rows[part.name]

    def _has_calls(self, part: Part) -> bool:
        """Whether the part's decisions table has a ``calls`` column (parts written before it have none)."""
        if part.name not in self._calls_column:
            path = part_file(self.root, "decisions", part.name)
            with open_file(path) as handle:
                names = checked(lambda: pq.read_schema(handle).names, path)
            self._calls_column[part.name] = "calls" in names
        return self._calls_column[part.name]

    def _text(self, part: Part, row: int) -> tuple[list[str], list[str], list[str] | None]:
        """Episode ``row`` of ``part``: its views, messages and calls (None when it has no calls)."""
        path = part_file(self.root, "decisions", part.name)
        if part.name not in self._texts:
            columns = ["view", "message"] + (["calls"] if self._has_calls(part) else [])
            texts = read_table(path, columns=columns)
            missing = [name for name in ("view", "message") if name not in texts.column_names]
            if missing:  # the episodes table says the episode has texts: the table must hold them
                raise CorpusFormatError(
                    f"{path}: has no {missing[0]!r} column, but {part_file(self.root, 'episodes', part.name)} "
                    f"row {row} says episode {part.episodes.column('episode')[row].as_py()!r} has texts"
                )
            checked(partial(texts.validate, full=True), path)  # valid UTF-8 in every text
            self._texts[part.name] = texts
        lengths = part.episodes.column("decisions").to_numpy().astype(np.int64)
        first = int((lengths[:row] + 1).sum())
        block = self._texts[part.name].slice(first, int(lengths[row]) + 1)
        calls = block.column("calls").to_pylist()[1:] if "calls" in block.column_names else []
        has_calls = bool(calls) and all(isinstance(c, str) for c in calls)
        return block.column("view").to_pylist(), block.column("message").to_pylist()[1:], calls if has_calls else None


class FramesLoader:
    """Reads one episode's frames from its part's frames table when called.

    Args:
        path: The part's frames table.
        group: The episode's row group in it.
        episode_id: The episode (named in errors).
    """

    def __init__(self, path: Path, group: int, episode_id: str) -> None:
        self.path, self.group, self.episode_id = path, group, episode_id

    def __call__(self) -> Frames:
        with open_file(self.path) as handle:
            return frame_codec.read_frames(self.path, handle, self.group, self.episode_id)
