"""Recorder frames are stored as the Recorder deflated them (codec ``npy-deflate``) and decode to the same pixels."""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path

import crafter
import numpy as np
import pyarrow.parquet as pq
import pytest

from workbench.core.crafter_facts import ACTIONS
from workbench.data.importers import import_crafter_recorder
from workbench.data.storage import load_corpus, save_corpus
from workbench.data.storage.frames import CODEC, NPY_DEFLATE, decode_npy_deflate
from workbench.errors import CorpusFormatError

pytestmark = pytest.mark.crafter


@pytest.fixture(scope="module")
def recorder_dir(tmp_path_factory) -> Path:
    """Two short random episodes written by the real crafter.Recorder."""
    folder = tmp_path_factory.mktemp("recorder")
    rng = np.random.default_rng(3)
    for seed, length in ((4, 30), (5, 45)):
        env = crafter.Recorder(crafter.Env(seed=seed, length=length), folder, save_video=False)
        env.reset()
        done = False
        while not done:
            _, _, done, _ = env.step(int(rng.integers(len(ACTIONS))))
    return folder


def _frames_rows(root: Path) -> list[dict]:
    return [row for path in sorted((root / "frames").glob("*.parquet")) for row in pq.read_table(path).to_pylist()]


def test_saved_recorder_frames_are_the_files_bytes_and_pixels(recorder_dir, tmp_path):
    result = import_crafter_recorder(recorder_dir, progress=False)
    assert result.ok, str(result)
    save_corpus(result.corpus, tmp_path / "c")
    rows = {row["episode"]: row for row in _frames_rows(tmp_path / "c")}
    loaded = load_corpus(tmp_path / "c")
    assert set(rows) == set(loaded.ids) and len(rows) == 2
    for episode_id, row in rows.items():
        file = recorder_dir / f"{episode_id}.npz"
        with np.load(file) as data:
            expected = data["image"]
        assert row["codec"] == NPY_DEFLATE
        # independently of the workbench's decoder: plain zlib and numpy read the stored bytes
        # back to the file's pixels, and the zip archive's own CRC-32 holds for the .npy file
        raw = zlib.decompress(row["data"], -zlib.MAX_WBITS)
        assert zlib.crc32(raw) == zipfile.ZipFile(file).getinfo("image.npy").CRC
        np.testing.assert_array_equal(np.load(io.BytesIO(raw)), expected)
        assert row["crc32"] == zlib.crc32(np.ascontiguousarray(expected).data)
        np.testing.assert_array_equal(loaded[episode_id].frames.images, expected)


def test_a_resaved_corpus_keeps_the_recorders_bytes(recorder_dir, tmp_path):
    save_corpus(import_crafter_recorder(recorder_dir, progress=False).corpus, tmp_path / "a")
    save_corpus(load_corpus(tmp_path / "a"), tmp_path / "b")
    first = {row["episode"]: row["data"] for row in _frames_rows(tmp_path / "a")}
    again = {row["episode"]: (row["codec"], row["data"]) for row in _frames_rows(tmp_path / "b")}
    assert again == {key: (NPY_DEFLATE, blob) for key, blob in first.items()}


def test_an_uncompressed_npz_is_encoded_as_before(recorder_dir, tmp_path):
    source = sorted(recorder_dir.glob("*.npz"))[0]
    folder = tmp_path / "plain"
    folder.mkdir()
    with np.load(source) as data:
        arrays = {name: data[name] for name in data.files}
    np.savez(folder / source.name, **arrays)  # stored, not deflated: no bytes to keep
    save_corpus(import_crafter_recorder(folder, progress=False).corpus, tmp_path / "c")
    (row,) = _frames_rows(tmp_path / "c")
    assert row["codec"] == CODEC
    np.testing.assert_array_equal(load_corpus(tmp_path / "c")[source.stem].frames.images, arrays["image"])


def test_a_bad_npy_deflate_blob_is_refused(recorder_dir, tmp_path):
    file = sorted(recorder_dir.glob("*.npz"))[0]
    with np.load(file) as data:
        count = len(data["image"])
    blob = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    with zipfile.ZipFile(file) as archive:
        raw = archive.read("image.npy")
    stream = blob.compress(raw) + blob.flush()
    assert decode_npy_deflate(stream, count).shape == (count, 64, 64, 3)
    with pytest.raises(ValueError, match="complete deflate stream"):
        decode_npy_deflate(stream[: len(stream) // 2], count)
    with pytest.raises(ValueError, match="expected uint8"):
        decode_npy_deflate(stream, count - 1)  # a stream of more frames than said is cut off, then refused
    with pytest.raises(ValueError, match="deflate"):
        decode_npy_deflate(b"\xff" * 64, count)
    with pytest.raises(ValueError, match="CRC-32"):
        decode_npy_deflate(stream, count, crc=zlib.crc32(raw) ^ 1)


def test_damaged_stored_recorder_frames_are_named(recorder_dir, tmp_path):
    save_corpus(import_crafter_recorder(recorder_dir, progress=False).corpus, tmp_path / "c")
    (path,) = sorted((tmp_path / "c" / "frames").glob("*.parquet"))
    table = pq.read_table(path)
    data = table.column("data").to_pylist()
    raw = bytearray(zlib.decompress(data[0], -zlib.MAX_WBITS))
    raw[-1] ^= 0xFF  # one pixel value changed, the stream still complete
    data[0] = zlib.compress(bytes(raw), 6)[2:-4]  # a raw deflate stream (no zlib header, no adler32)
    table = table.set_column(table.schema.get_field_index("data"), "data", [data])
    pq.write_table(table, path, row_group_size=1)
    episode_id = table.column("episode")[0].as_py()
    with pytest.raises(CorpusFormatError, match="checksum mismatch"):
        load_corpus(tmp_path / "c")[episode_id].frames
