"""Reading a corpus's Parquet files: Arrow's own file on the open descriptor, decoded into the storage's memory pool."""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq


def _read_pool() -> pa.MemoryPool:
    """jemalloc where pyarrow has it, else the system allocator. pyarrow's default, mimalloc,
    keeps freed memory resident: opening a 1M-decision corpus measured +19 MB for a 1 MB
    episodes table and about three times a row group's decode when Parquet decodes on several
    threads (+70 MB against +35 MB with jemalloc)."""
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:
        return pa.system_memory_pool()


READ_POOL = _read_pool()


class ParquetReader:
    """The reads the storage makes of one Parquet file, allocating from ``READ_POOL``.

    pyarrow's ``ParquetFile`` and ``read_table`` take no memory pool (checked up to pyarrow 26);
    its dataset API does, so a file is read as a dataset fragment of the open handle (its
    footer read once). Rows come in file order; as with ``ParquetFile``, a column asked for
    that the file lacks is left out of the result (the callers check the schema). pyarrow's
    default pool is never changed, so other threads' reads and allocations are left alone.
    Raises what pyarrow raises.
    """

    def __init__(self, handle: Any, *, dictionary: Collection[str] = (), verify_checksums: bool = True) -> None:
        """Args:
        handle: an open binary file of the table.
        dictionary: columns read as dictionary arrays (as stored, not expanded).
        verify_checksums: check each page's CRC (a flipped bit is an error, not a value).
        """
        file_format = ds.ParquetFileFormat(
            read_options=ds.ParquetReadOptions(dictionary_columns=set(dictionary)),
            default_fragment_scan_options=ds.ParquetFragmentScanOptions(page_checksum_verification=verify_checksums),
        )
        self._file = _native_file(handle)
        self._fragment = file_format.make_fragment(self._file)
        self.metadata: pq.FileMetaData = self._fragment.metadata
        self.num_row_groups: int = self._fragment.num_row_groups
        self.schema_arrow: pa.Schema = self._fragment.physical_schema

    def read(self, columns: list[str] | None = None, use_threads: bool = True) -> pa.Table:
        """The whole table (``columns`` only, when given)."""
        return self._fragment.to_table(columns=self._present(columns), use_threads=use_threads, memory_pool=READ_POOL)

    def read_row_group(self, group: int, columns: list[str] | None = None, use_threads: bool = True) -> pa.Table:
        """Row group ``group`` (``columns`` only, when given)."""
        part = self._fragment.subset(row_group_ids=[group])
        # One batch for the group (the scan's default cuts it in 131,072-row chunks, which a
        # caller's combine_chunks would then copy together again).
        rows = max(1, self.metadata.row_group(group).num_rows) if 0 <= group < self.num_row_groups else 1
        return part.to_table(
            columns=self._present(columns), use_threads=use_threads, memory_pool=READ_POOL, batch_size=rows
        )

    def _present(self, columns: list[str] | None) -> list[str] | None:
        """``columns`` less those the file lacks (None: every column)."""
        return None if columns is None else [name for name in columns if name in self.schema_arrow.names]


def _native_file(handle: Any) -> Any:
    """Arrow's own file on the open ``handle``'s descriptor (the very file opened, through
    ``/proc/self/fd``), else ``handle`` itself. A dataset scan may finish its clean-up on Arrow's
    threads after the read returned; a Python file object there must take the GIL to be
    released, and at interpreter exit that aborted the process ("terminate called without an
    active exception", exit 134, about 1 run in 10-40 of a command failing right after a read).
    Arrow's file needs no GIL."""
    try:
        proc = f"/proc/self/fd/{handle.fileno()}"
    except (AttributeError, OSError, ValueError):
        return handle
    if not os.path.exists(proc):
        return handle
    try:
        return pa.OSFile(proc)
    except OSError:
        return handle
