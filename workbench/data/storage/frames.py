"""Frames on disk: a lossless codec for stacks of 64x64 Crafter frames and the per-part frames table.

Codec ``gdelta-zstd9`` (one blob per episode): each frame's colours become (G, R - G, B - G)
mod 256 in planar order, each frame is stored as its difference from the previous one (mod
256), and the whole stack is compressed with zstd level 9 (through pyarrow, no new
dependency). Crafter draws textures, so a frame resembles the one before; the colour
transform moves the night-time noise Crafter adds (grey, equal in R, G and B) into one plane.
That noise is random per pixel and cannot be compressed away: night frames cost several times
what day frames do (docs/benchmarks.md, "Bytes on disk and the frame codec").

The frames table ``frames/<part>.parquet`` holds one row group per episode with columns
``episode``, ``frames`` (count, steps + 1), ``codec``, ``data`` (the blob) and
``step_decision`` (int32 per step) and ``crc32`` (of the decoded pixels, checked on reading),
so one episode's frames are read without the others'. Every table is written with Parquet
page checksums, verified on reading.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.data.episodes import FRAME_SHAPE, Frames
from workbench.data.storage.parquet import ParquetReader
from workbench.errors import CorpusFormatError

CODEC = "gdelta-zstd9"
_ZSTD_LEVEL = 9
SCHEMA = pa.schema(
    [
        ("episode", pa.string()),
        ("frames", pa.int32()),
        ("codec", pa.string()),
        ("data", pa.binary()),
        ("step_decision", pa.list_(pa.int32())),
        ("crc32", pa.uint32()),
    ]
)


def encode(images: np.ndarray) -> bytes:
    """The ``CODEC`` blob of a (T, 64, 64, 3) uint8 stack.

    Args:
        images: The frames.

    Returns:
        The compressed bytes.
    """
    planes = _to_planes(images)
    planes[1:] -= planes[:-1].copy()  # uint8 arithmetic wraps: the difference mod 256
    return pa.Codec("zstd", compression_level=_ZSTD_LEVEL).compress(planes.tobytes(), asbytes=True)


def decode(blob: bytes, count: int) -> np.ndarray:
    """The (count, 64, 64, 3) uint8 stack ``encode`` was given.

    Args:
        blob: What ``encode`` returned.
        count: How many frames it holds.

    Returns:
        The frames.

    Raises:
        ValueError: The blob is not one (pyarrow's error for a bad zstd stream or size).
    """
    size = count * int(np.prod(FRAME_SHAPE))
    raw = pa.Codec("zstd").decompress(blob, decompressed_size=size, asbytes=True)
    planes = np.frombuffer(raw, dtype=np.uint8).reshape(count, 3, *FRAME_SHAPE[:2]).copy()
    np.cumsum(planes, axis=0, dtype=np.uint8, out=planes)  # undo the differences (mod 256)
    g, r, b = planes[:, 0], planes[:, 1] + planes[:, 0], planes[:, 2] + planes[:, 0]
    return np.stack([r, g, b], axis=-1)


def _to_planes(images: np.ndarray) -> np.ndarray:
    r, g, b = (images[..., c] for c in range(3))
    return np.stack([g, r - g, b - g], axis=1)  # uint8: R - G and B - G wrap mod 256


class FramesWriter:
    """Writes a part's frames table, one row group per episode, as episodes come.

    Args:
        sink: The Parquet file to write.
    """

    def __init__(self, sink: str | Path) -> None:
        self._writer = pq.ParquetWriter(
            str(sink),
            SCHEMA,
            compression={"data": "none", "step_decision": "zstd", "episode": "zstd", "frames": "zstd", "codec": "zstd"},
            write_page_checksum=True,
        )
        self.groups = 0
        self.bytes = 0

    def add(self, episode_id: str, frames: Frames) -> int:
        """Append one episode's frames.

        Args:
            episode_id: The episode's id.
            frames: Its frames.

        Returns:
            Its row group number.
        """
        images = np.ascontiguousarray(frames.images)
        blob = encode(images)
        self.bytes += len(blob)
        table = pa.table(
            {
                "episode": [episode_id],
                "frames": pa.array([len(frames.images)], pa.int32()),
                "codec": [CODEC],
                "data": pa.array([blob], pa.binary()),
                "step_decision": pa.array([np.asarray(frames.step_decision, dtype=np.int32)], pa.list_(pa.int32())),
                "crc32": pa.array([zlib.crc32(images.data)], pa.uint32()),
            },
            schema=SCHEMA,
        )
        self._writer.write_table(table)
        self.groups += 1
        return self.groups - 1

    def close(self) -> None:
        """Finish the frames file (its footer); the writer cannot be used after."""
        self._writer.close()


def read_frames(path: Path, handle: BinaryIO | Any, group: int, episode_id: str) -> Frames:
    """Episode ``episode_id``'s frames from row group ``group`` of the frames table ``handle``
    (an open file of ``path``).

    Args:
        path: The file's path, for messages.
        handle: The open frames file.
        group: The episode's row group.
        episode_id: The episode's id.

    Returns:
        The frames.

    Raises:
        CorpusFormatError: The group is missing, holds another episode or does not decode; names the file.
    """
    try:
        reader = ParquetReader(handle)
        if not 0 <= group < reader.num_row_groups:
            raise CorpusFormatError(f"{path}: has no frames entry {group} (episode {episode_id!r})")
        row = reader.read_row_group(group).to_pylist()[0]
    except (pa.ArrowException, OSError, IndexError, KeyError) as error:
        raise CorpusFormatError(f"{path}: cannot read the frames of episode {episode_id!r} ({error})") from None
    if row.get("episode") != episode_id:
        raise CorpusFormatError(
            f"{path}: frames entry {group} holds episode {row.get('episode')!r}, not {episode_id!r}"
        )
    if row.get("codec") != CODEC:
        raise CorpusFormatError(
            f"{path}: frames of episode {episode_id!r} use codec {row.get('codec')!r}; this workbench reads {CODEC!r}"
        )
    steps = row.get("step_decision")
    count = row.get("frames")
    if not isinstance(steps, list) or None in steps or count != len(steps) + 1:
        # checked before decoding: a tampered count would size the decompression buffer
        raise CorpusFormatError(
            f"{path}: frames entry {group} (episode {episode_id!r}): column 'frames' is {count!r}, "
            f"expected one more than its {len(steps) if isinstance(steps, list) else 'missing'} step_decision values"
        )
    try:
        images = decode(row["data"], int(count))
    except (pa.ArrowException, ValueError, TypeError) as error:
        raise CorpusFormatError(f"{path}: frames of episode {episode_id!r} do not decode ({error})") from None
    if zlib.crc32(images.data) != row.get("crc32"):
        raise CorpusFormatError(f"{path}: frames of episode {episode_id!r} are damaged (checksum mismatch)")
    return Frames(images=images, step_decision=np.asarray(row["step_decision"], dtype=np.int32))
