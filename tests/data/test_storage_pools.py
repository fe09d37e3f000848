"""Corpus reads allocate from the storage's own Arrow pool, passed to each reader: pyarrow's
default pool is never swapped, so threads reading corpora at once neither race on it nor see
each other's setting."""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa

from workbench.core.config import RewardConfig
from workbench.data.sample import sample_corpus
from workbench.data.storage import load_corpus, save_corpus
from workbench.data.storage.layout import open_file
from workbench.data.storage.parquet import READ_POOL, ParquetReader
from workbench.scoring import score

CONFIG = RewardConfig()


def _episode_returns(root) -> np.ndarray:
    """Every decision's column values and every episode's return, from a fresh open of ``root``."""
    corpus = load_corpus(root)
    arrays = corpus.decision_arrays()
    returns = score(corpus, CONFIG).episodes["reward_sum"].to_numpy()
    return np.concatenate([arrays.inventory.ravel().astype(float), returns])


def test_a_reader_allocates_from_the_read_pool_and_leaves_the_default_alone(tmp_path):
    root = save_corpus(sample_corpus(), tmp_path / "corpus")
    default = pa.default_memory_pool()
    path = next((root / "decisions").glob("*.parquet"))
    with open_file(path) as handle:
        reader = ParquetReader(handle)
        before = READ_POOL.bytes_allocated()
        table = reader.read_row_group(0)
        held = READ_POOL.bytes_allocated() - before
    assert table.num_rows > 0
    # The table's buffers are the pool's: at least its decoded size is allocated from it.
    assert held >= table.nbytes > 0
    assert pa.default_memory_pool().backend_name == default.backend_name


def test_two_threads_read_corpora_at_once(tmp_path, monkeypatch):
    swaps: list[object] = []
    monkeypatch.setattr(pa, "set_memory_pool", swaps.append)  # any swap of the default is recorded
    root = save_corpus(sample_corpus(), tmp_path / "corpus")
    expected = _episode_returns(root)
    backend = pa.default_memory_pool().backend_name
    start = threading.Barrier(2)
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def read(k: int) -> None:
        try:
            start.wait(timeout=30)
            results[k] = _episode_returns(root)
        except BaseException as error:  # reported by the main thread below
            errors.append(error)

    threads = [threading.Thread(target=read, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert all(not thread.is_alive() for thread in threads)
    for k in range(2):
        np.testing.assert_array_equal(results[k], expected)
    assert pa.default_memory_pool().backend_name == backend
    assert swaps == []
