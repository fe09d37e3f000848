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

Codec ``npy-deflate``: frames stored as their source wrote them, an ``.npy`` file of the stack
as a raw deflate stream (the ``image`` member of a crafter.Recorder ``.npz``, which
``np.savez_compressed`` deflates). Frames decoded from such bytes (``npy_deflate_frames``) are
saved with those bytes as they are: no second decode, no re-encoding (which took ~40% of a
Recorder import), and the Recorder's deflate is as small as ``gdelta-zstd9`` on its frames.
The ``crc32`` column is of the decoded pixels for both codecs.
"""

from __future__ import annotations

import io
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
#: Frames kept as their source stored them (see the module).
NPY_DEFLATE = "npy-deflate"
#: The codecs this workbench reads.
CODECS = (CODEC, NPY_DEFLATE)
#: The most an ``.npy`` header may add to the pixels (format 1.0's header length is 16-bit).
_NPY_HEADER_MAX = 65536 + 16
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


def decode_npy_deflate(blob: bytes, count: int, crc: int | None = None) -> np.ndarray:
    """The (count, 64, 64, 3) uint8 stack of an ``NPY_DEFLATE`` blob.

    Args:
        blob: An ``.npy`` file as a raw deflate stream.
        count: How many frames it must hold.
        crc: The CRC-32 of the whole ``.npy`` file (a zip member's), checked when given.

    Returns:
        The frames (C order).

    Raises:
        ValueError: The blob is not one (a bad deflate stream included), or not of ``count``
            uint8 frames.
    """
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    try:  # bounded: a tampered stream cannot inflate past what ``count`` frames need
        raw = inflater.decompress(blob, count * int(np.prod(FRAME_SHAPE)) + _NPY_HEADER_MAX)
    except zlib.error as error:
        raise ValueError(f"not a deflate stream ({error})") from None
    if not inflater.eof or inflater.unconsumed_tail or inflater.unused_data:
        raise ValueError("not one complete deflate stream of the frames' size")
    if crc is not None and zlib.crc32(raw) != crc:
        raise ValueError("the inflated .npy file does not match its CRC-32")
    try:
        images = np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)
    except (EOFError, OSError) as error:  # a header that promises more than the file holds
        raise ValueError(f"not an .npy file ({error})") from None
    if images.dtype != np.uint8 or images.shape != (count, *FRAME_SHAPE):
        raise ValueError(f"holds {images.dtype} {images.shape}, expected uint8 {(count, *FRAME_SHAPE)}")
    return np.ascontiguousarray(images)


def npy_deflate_frames(blob: bytes, step_decision: np.ndarray, crc: int | None = None) -> Frames:
    """Frames decoded from an ``NPY_DEFLATE`` blob, which keep the blob: saving stores it as it is.

    Args:
        blob: An ``.npy`` file of the frames as a raw deflate stream.
        step_decision: The decision of each step (one frame more than steps: the reset frame).
        crc: The CRC-32 of the whole ``.npy`` file, checked when given.

    Returns:
        The frames, ``deflated`` the blob.

    Raises:
        ValueError: As ``decode_npy_deflate``.
    """
    images = decode_npy_deflate(blob, len(step_decision) + 1, crc)
    return Frames(images=images, step_decision=np.asarray(step_decision, dtype=np.int32), deflated=blob)


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
        # frames decoded from their source's bytes keep those bytes (``npy_deflate_frames``)
        codec, blob = (CODEC, encode(images)) if frames.deflated is None else (NPY_DEFLATE, frames.deflated)
        self.bytes += len(blob)
        table = pa.table(
            {
                "episode": [episode_id],
                "frames": pa.array([len(frames.images)], pa.int32()),
                "codec": [codec],
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
    codec = row.get("codec")
    if codec not in CODECS:
        raise CorpusFormatError(
            f"{path}: frames of episode {episode_id!r} use codec {codec!r}; this workbench reads {' and '.join(CODECS)}"
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
        images = decode(row["data"], int(count)) if codec == CODEC else decode_npy_deflate(row["data"], int(count))
    except (pa.ArrowException, ValueError, TypeError) as error:
        raise CorpusFormatError(f"{path}: frames of episode {episode_id!r} do not decode ({error})") from None
    if zlib.crc32(images.data) != row.get("crc32"):
        raise CorpusFormatError(f"{path}: frames of episode {episode_id!r} are damaged (checksum mismatch)")
    deflated = row["data"] if codec == NPY_DEFLATE else None  # saved again as it is
    return Frames(images=images, step_decision=np.asarray(row["step_decision"], dtype=np.int32), deflated=deflated)
