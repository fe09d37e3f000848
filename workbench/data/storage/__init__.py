"""The on-disk corpus format (schema_version 2): a folder of columnar parts, Parquet through pyarrow.

::

    my_corpus/
      corpus.json                   {"format": "crafter-workbench-corpus", "schema_version": 2, "layout": "columnar", ...}
      decisions/<part>.parquet      one row per state: decision 0 = after reset, then one per decision
      episodes/<part>.parquet       one row per episode: the corpus index, metadata and logged rewards (JSON)
      frames/<part>.parquet         one row group per episode with frames (codec: workbench.data.storage.frames)
      events/<part>.parquet         one row per episode: its events, derived from the decisions (events_table)
      .corpus.lock                  the writers' lock file (flock'ed, never through a link; the folder too)

The column layout of the two tables is documented in ``workbench.data.storage.schema``: inventory
uint8 (Crafter's 0..9), counts uint16, status bool, positions int16, actions as lists of uint8
Crafter ids, Crafter's reward float64, ``done`` bool; ``pandas.read_parquet("my_corpus/decisions")``
reads it as one tidy table (hidden temporary files are skipped).

Parts: every write adds one part under a fresh tool-made name (``part-<time>-<pid>-<random>``)
and never rewrites an existing one. The index is derived from the parts: a part exists once its
episodes table (written last) does. Writes hold ``.corpus.lock``, so two concurrent imports
into one folder both land, one after the other, and an id can be added only once (a second
time with ``overwrite=True``, which writes the episode again in a new part that replaces the old
one in place). The lock that guarantees it is an ``flock`` on the folder itself
(``layout.folder_lock``), which deleting or replacing ``.corpus.lock`` cannot break. Each file
is written to a temporary file in its own folder and renamed, so a crash leaves a whole part or
files no part names, which the next write deletes (when their writer process is gone). Names never
come from an index row or an episode id, and a symlink inside the folder is refused
(``UnsafeCorpusPathError``).

Values are checked when written and when read (``workbench.data.episodes.check_values`` for
the decisions, ``workbench.data.storage.rows`` for every column of the episodes table): a
violation is an ``EpisodeValueError`` (writing) or ``CorpusValueError`` (reading) naming the
episode or file, the decision or row, and the column.

Opening reads the episodes tables and each part's events from its events table when the
decisions table is the one they were computed from (its SHA-256 recorded;
``workbench.data.storage.events_table``), else streams the decisions table but its status
columns, checking every value read and keeping only the episodes' events for scoring
(``workbench.data.storage.stream``); the state columns are decoded whole, column-major, and the
status checked against the counts, when first asked for (an ``Episode``, ``decision_arrays``), and
an episode's frames are read when touched. A ``corpus.json`` that is not exactly this layout's
marker (another format or schema version) is a ``CorpusFormatError`` naming it.

This package's names are the storage's one interface: no module outside it imports one of its
modules (``tests/test_architecture.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from workbench.data.episodes import INDEX_COLUMNS, Corpus, Episode, register_writer
from workbench.data.storage import checks, columnar
from workbench.data.storage.checks import PartCheck, check_parts
from workbench.data.storage.frames import npy_deflate_frames
from workbench.data.storage.layout import (
    FORMAT,
    LOCK,
    MARKER,
    SCHEMA_VERSION,
    TABLES,
    clean_leftovers,
    committed_parts,
    folder_lock,
    part_file,
    writing,
)
from workbench.data.storage.rows import check_storable
from workbench.data.storage.staging import StagedSave, staged_save
from workbench.errors import (
    CorpusFormatError,
    CorpusValueError,
    EpisodeValueError,
    TargetExistsError,
    UnsafeCorpusPathError,
)
from workbench.util.atomic import write_errors_named

__all__ = [
    "FORMAT",
    "MARKER",
    "check_storable",
    "npy_deflate_frames",
    "part_file",
    "add_events_tables",
    "check_corpus",
    "PartCheck",
    "SCHEMA_VERSION",
    "committed_parts",
    "episode_ids_by_part",
    "CorpusFormatError",
    "CorpusValueError",
    "EpisodeValueError",
    "UnsafeCorpusPathError",
    "holds_episodes",
    "load_corpus",
    "read_index",
    "remove_empty_corpus",
    "save_corpus",
    "save_episode",
    "staged_save",
    "StagedSave",
]


def load_corpus(root: str | Path, *, parts: Collection[str] | None = None) -> Corpus:
    """Open a corpus folder (only the committed parts named in ``parts``, when given: what a
    watcher following a folder being written reads; ``committed_parts`` lists them).

    Args:
        root: The corpus folder.
        parts: Names of committed parts to open; None opens them all.

    Returns:
        The corpus; frames and large arrays are read on first use.

    Raises:
        CorpusFormatError: A file cannot be read, is of another schema version, holds a
            symlink, or (``CorpusValueError``) a value outside Crafter's ranges; names the file.
    """
    return columnar.load(Path(root), parts)


def episode_ids_by_part(root: str | Path) -> dict[str, list[str]]:
    """The committed parts of a corpus folder and the episodes each holds.

    Reads only the episodes tables' ``episode`` column (once per part and process: a committed
    part is never rewritten). An id written again with ``overwrite`` is in its old part and its
    new one; ``load_corpus`` shows the newest.

    Args:
        root: a corpus folder.

    Returns:
        Part name -> the ids of its episodes, in commit (corpus) order; pass names to
        ``load_corpus(root, parts=...)`` to open only those parts.
    """
    return columnar.part_ids(Path(root))


def save_corpus(corpus: Corpus, root: str | Path, *, overwrite: bool = False, progress: bool = False) -> Path:
    """Add every episode of ``corpus`` to the folder ``root`` as one new part (made if missing).

    Episodes already in ``root`` are kept; an id it already holds is written again only with
    ``overwrite`` (the new one takes the old one's place).

    Args:
        corpus: The episodes.
        root: The corpus folder.
        overwrite: Replace episodes whose ids ``root`` already holds.
        progress: Show tqdm bars (frames are encoded episode by episode: minutes for a large corpus).

    Returns:
        ``root``.

    Raises:
        TargetExistsError: An id ``root`` already holds, without ``overwrite`` (before anything is written).
        EpisodeValueError: A value outside Crafter's ranges; names the episode, decision and column
            (nothing is written).
        CorpusFormatError: ``root`` is of another schema version or unsafe.
        OutputError: ``root`` cannot be written (disk full, no permission).
    """
    root = Path(root)
    # A full disk or an unwritable folder is the user's to fix: OutputError names the folder,
    # and the part being written is removed (a failed save leaves nothing behind).
    with write_errors_named(root, "cannot save the corpus"), writing(root):
        held = columnar.stored_ids(root)
        clashes = [i for i in corpus.ids if i in held]
        if clashes and not overwrite:
            raise TargetExistsError(
                f"{root}: already holds episode(s) {clashes[:5]}; pass overwrite=True to replace them"
            )
        columnar.append(root, corpus, set(clashes), progress=progress)
    return root


def save_episode(root: str | Path, episode: Episode, *, overwrite: bool = False) -> Path:
    """Add one episode to ``root`` (a part of its own); see ``save_corpus``.

    Args:
        root: The corpus folder.
        episode: The episode.
        overwrite: Replace an episode of the same id.

    Returns:
        ``root``.

    Raises:
        TargetExistsError: As ``save_corpus``; so do its other errors.
    """
    return save_corpus(Corpus([episode]), root, overwrite=overwrite)


def add_events_tables(root: str | Path, *, rebuild: bool = False) -> tuple[list[str], int]:
    """Give every committed part of ``root`` a current events table, so that it opens without
    decoding its decisions (``workbench.data.storage.events_table``).

    Parts written before events tables have none, a part whose decisions table changed since it
    was written has a stale one, and so has one made by another version of ``decision_events``;
    each such part's (with ``rebuild``, every part's) events are computed by the checked
    decisions read (as opening would) and written, under the writers' lock. Other parts are
    left as they are.

    Args:
        root: The corpus folder.
        rebuild: Rewrite every part's events table from its decisions, current or not (a table
            forged with its digests recomputed is current; ``check_corpus(deep=True)`` finds it).

    Returns:
        The names of the parts given an events table, and how many were left as they were.

    Raises:
        CorpusFormatError: ``root`` is not a corpus folder, a table does not read, or
            (``CorpusValueError``) a value is outside Crafter's ranges; names the file.
        OutputError: The folder cannot be written (disk full, no permission).
    """
    root = Path(root)
    with write_errors_named(root, "cannot write the events tables"):
        return checks.add_events_tables(root, rebuild=rebuild)


def check_corpus(root: str | Path, *, deep: bool = False) -> list[PartCheck]:
    """Check a corpus folder's derived tables against their source, part by part
    (``workbench.data.storage.checks``): every check an open makes, each events table's state
    and, with ``deep``, each part's events re-derived from its decisions and compared with its
    events table value by value.

    Args:
        root: The corpus folder.
        deep: Re-derive every part's events from its decisions.

    Returns:
        One ``PartCheck`` per part (its ``problems`` empty when sound).

    Raises:
        CorpusFormatError: ``root`` is not a corpus folder, or an episodes table does not read.
    """
    return check_parts(Path(root), deep=deep)


def read_index(root: str | Path) -> list[dict[str, Any]]:
    """The corpus index of ``root`` as plain rows (``Corpus.index`` columns), in corpus order.

    Args:
        root: The corpus folder.

    Returns:
        One dict per episode.
    """
    index = load_corpus(root).index
    return [{column: row[column] for column in INDEX_COLUMNS} for row in index.to_dict("records")]


def remove_empty_corpus(root: str | Path) -> bool:
    """Remove the folder ``root`` if it is a corpus folder no write has committed to (its
    marker, lock, empty table folders and leftovers; under the folder lock, so never while a
    writer is mid-write); anything else in it keeps it.

    Args:
        root: The folder.

    Returns:
        Whether it was removed.
    """
    root = Path(root)
    if root.is_symlink() or not root.is_dir():
        return False
    try:
        with folder_lock(root):
            if committed_parts(root):
                return False
            clean_leftovers(root)
            for table in TABLES:
                if (root / table).is_dir() and not (root / table).is_symlink():
                    (root / table).rmdir()
            for name in (MARKER, LOCK):
                if (root / name).is_file() and not (root / name).is_symlink():
                    (root / name).unlink()
            root.rmdir()  # fails (and keeps the folder) when anything else is in it
    except OSError:  # something else is in there (or the folder went away): leave it
        return False
    return True


def holds_episodes(root: str | Path) -> bool:
    """Whether ``root`` is a corpus folder holding at least one episode.

    Args:
        root: Any path.

    Returns:
        True for a corpus folder with a committed episode.
    """
    root = Path(root)
    return (root / MARKER).exists() and bool(committed_parts(root))


register_writer(save_corpus)
