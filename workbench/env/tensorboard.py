"""Per-component reward series as TensorBoard event files, beside a run's training curves.

``TensorBoardSeries(logdir, configs)`` takes finished episodes (``add(corpus)``: the
``on_append`` of a ``Watcher`` or ``RecordEpisodes``), scores them under every config with
``LiveScores`` and writes, per episode, one scalar per tag at the episode's ``training_step``
(its arrival number when it has none):

- ``<config>/return``: the shaped return; ``<config>/reward_<kind>``: each component kind's
  total after lambda (``workbench.scoring.KIND_COLUMNS``);
- ``episode/env_return``, ``episode/decisions``, ``episode/unique_achievements``.

Written with tensorboardX (the ``train`` extra): no TensorFlow or torch. ``read_scalars(logdir)``
reads them back (tag, step, value) with tensorboardX's own protobuf classes.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import EnvError
from workbench.scoring import KIND_COLUMNS, LiveScores
from workbench.util.extras import require_extra

#: Per-episode columns written under ``episode/`` (config-independent).
EPISODE_TAGS = {
    "env_return": "env_return",
    "decisions": "decisions",
    "unique_achievements": "unique_achievements_total",
}


def _writer_class() -> Any:
    require_extra("train", "TensorBoard series (workbench.env.TensorBoardSeries)", "tensorboardX")
    from tensorboardX import SummaryWriter  # the ``train`` extra, checked above

    return SummaryWriter


class TensorBoardSeries:
    """Writes each added episode's per-component series into ``logdir`` (see the module).

    Args:
        logdir: The folder written.
        configs: Name -> config the series are scored under.
        flush_secs: Seconds between writes to disk.

    Raises:
        MissingExtraError: tensorboardX is not installed.
        CorpusError: No config.
    """

    def __init__(self, logdir: str | Path, configs: Mapping[str, RewardConfig], *, flush_secs: int = 5) -> None:
        self.logdir = Path(logdir)
        self.live = LiveScores(Corpus(), configs)
        self._writer = _writer_class()(logdir=str(self.logdir), flush_secs=flush_secs)

    def add(self, episodes: Corpus) -> None:
        """Score ``episodes`` (new, finished) and write their scalars.

        Args:
            episodes: The new episodes.
        """
        if not len(episodes):
            return
        before = len(self.live)
        self.live.append(episodes)
        table = self.live.episodes()
        rows = table[table["arrival"] >= before]
        for record in rows.to_dict("records"):  # not itertuples: it renames the column "return"
            step = int(record["training_step"]) if not pd.isna(record["training_step"]) else int(record["arrival"])
            name = record["config"]
            self._writer.add_scalar(f"{name}/return", float(record["return"]), step)
            for column in KIND_COLUMNS.values():
                self._writer.add_scalar(f"{name}/{column}", float(record[column]), step)
            if name == next(iter(self.live.configs)):
                for tag, column in EPISODE_TAGS.items():
                    self._writer.add_scalar(f"episode/{tag}", float(record[column]), step)

    def flush(self) -> None:
        """Write what is buffered to the event file."""
        self._writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self._writer.close()


def read_scalars(logdir: str | Path) -> pd.DataFrame:
    """Every scalar in the event files under ``logdir``: a tidy table ``tag``, ``step``,
    ``value``, ``wall_time``, ``file`` (relative to ``logdir``; files in name order, records in file order).

    Args:
        logdir: The folder searched.

    Returns:
        The table described above.

    Raises:
        MissingExtraError: tensorboardX is not installed.
        EnvError: A file's records are cut short (a crc or length that does not fit).
    """
    require_extra("train", "reading TensorBoard event files (workbench.env.read_scalars)", "tensorboardX")
    from tensorboardX.proto.event_pb2 import Event  # the ``train`` extra, checked above

    rows = []
    root = Path(logdir)
    for file in sorted(root.rglob("events.out.tfevents.*")):
        name = file.relative_to(root).as_posix()
        for record in _records(file):
            event = Event.FromString(record)
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    rows.append((value.tag, int(event.step), float(value.simple_value), float(event.wall_time), name))
    return pd.DataFrame(rows, columns=["tag", "step", "value", "wall_time", "file"])


def _records(file: Path) -> list[bytes]:
    """The records of a TFRecord file: ``uint64 length, uint32 crc, data, uint32 crc`` each."""
    data = file.read_bytes()
    records, at = [], 0
    while at < len(data):
        if at + 12 > len(data):
            raise EnvError(f"{file}: a record header is cut short at byte {at}")
        (length,) = struct.unpack("<Q", data[at : at + 8])
        end = at + 12 + length + 4
        if end > len(data):
            raise EnvError(f"{file}: a record of {length} bytes is cut short at byte {at}")
        records.append(data[at + 12 : at + 12 + length])
        at = end
    return records
