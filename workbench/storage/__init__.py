"""The on-disk corpus format (schema_version 2): a folder of columnar parts, Parquet through pyarrow.

::

    my_corpus/
      corpus.json                   {"format": "crafter-workbench-corpus", "schema_version": 2, "layout": "columnar", ...}
      decisions/<part>.parquet      one row per state: decision 0 = after reset, then one per decision
      episodes/<part>.parquet       one row per episode: the corpus index, metadata and logged rewards (JSON)
      frames/<part>.parquet         one row group per episode with frames (codec: workbench.storage.frames)
      .corpus.lock                  the writers' lock (filelock)

The column layout of the two tables is documented in ``workbench.storage.tables``: inventory
uint8 (Crafter's 0..9), counts uint16, status bool, positions int16, actions as lists of uint8
Crafter ids, Crafter's reward float64, ``done`` bool; ``pandas.read_parquet("my_corpus/decisions")``
reads it as one tidy table (hidden temporary files are skipped).

Parts: every write adds one part under a fresh tool-made name (``part-<time>-<pid>-<random>``)
and never rewrites an existing one. The index is derived from the parts: a part exists once its
episodes table (written last) does. Writes hold ``.corpus.lock``, so two concurrent imports
into one folder both land, one after the other, and an id can be added only once (a second
time with ``overwrite=True``, which writes the episode again in a new part that replaces the old
one in place). Each file is written to a temporary file in its own folder and renamed, so a
crash leaves a whole part or files no part names, which the next write deletes. Names never
come from an index row or an episode id, and a symlink inside the folder is refused
(``UnsafeCorpusPathError``).

Values are checked when written and when read (``workbench.episodes.check_values``): a
violation is an ``EpisodeValueError`` (writing) or ``CorpusValueError`` (reading) naming the
episode, decision and column.

Opening reads the episodes tables and streams the decisions tables, checking every value and
keeping only the episodes' events for scoring (``workbench.storage.decode``); the state columns
are decoded whole, column-major, when first asked for (an ``Episode``, ``decision_arrays``), and
an episode's frames are read when touched. Folders of the old layout (schema_version 1, one ``.npz`` per episode,
``workbench.storage.legacy``) open read-only; ``upgrade_corpus`` (``workbench corpus upgrade
OLD NEW``) converts them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.atomic import write_errors_named
from workbench.episodes import INDEX_COLUMNS, Corpus, Episode, register_writer
from workbench.errors import (
    CorpusFormatError,
    CorpusValueError,
    EpisodeValueError,
    TargetExistsError,
    UnsafeCorpusPathError,
)
from workbench.storage import columnar
from workbench.storage.layout import (
    FORMAT,
    MARKER,
    SCHEMA_VERSION,
    committed_parts,
    read_marker,
    refuse_symlinks,
    writing,
)
from workbench.storage.legacy import load_episode, load_legacy_corpus

INDEX_FILE = MARKER

__all__ = [
    "FORMAT",
    "INDEX_FILE",
    "SCHEMA_VERSION",
    "CorpusFormatError",
    "CorpusValueError",
    "EpisodeValueError",
    "UnsafeCorpusPathError",
    "holds_episodes",
    "load_corpus",
    "load_episode",
    "read_index",
    "save_corpus",
    "save_episode",
    "schema_version",
    "upgrade_corpus",
]


def schema_version(root: str | Path) -> int:
    """The layout version of a corpus folder (1 = old npz layout, 2 = columnar)."""
    root = Path(root)
    refuse_symlinks(root)
    version = read_marker(root).get("schema_version")
    if version not in (1, SCHEMA_VERSION):
        raise CorpusFormatError(
            f"{root / MARKER}: schema_version {version!r}; this workbench reads 1 and {SCHEMA_VERSION}"
        )
    return int(version)


def load_corpus(root: str | Path) -> Corpus:
    """Open a corpus folder (either layout). ``CorpusFormatError`` (or a subclass) naming the
    file when it cannot be read, holds a symlink or a value outside Crafter's ranges."""
    root = Path(root)
    if schema_version(root) == 1:
        return load_legacy_corpus(root)
    return columnar.load(root)


def save_corpus(corpus: Corpus, root: str | Path, *, overwrite: bool = False, progress: bool = False) -> Path:
    """Add every episode of ``corpus`` to the folder ``root`` as one new part (made if missing).

    Episodes already in ``root`` are kept; an id it already holds is written again only with
    ``overwrite`` (the new one takes the old one's place), otherwise ``TargetExistsError`` names
    it before anything is written. ``EpisodeValueError`` names the episode, decision and column
    of a value outside Crafter's ranges (nothing is written then); ``CorpusFormatError`` when
    ``root`` is an old-layout folder (read-only) or unsafe; ``OutputError`` when it cannot be
    written (disk full, no permission). ``progress`` shows tqdm bars (frames
    are encoded episode by episode: minutes for a large corpus). Returns ``root``."""
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
    """Add one episode to ``root`` (a part of its own); see ``save_corpus``."""
    return save_corpus(Corpus([episode]), root, overwrite=overwrite)


def read_index(root: str | Path) -> list[dict[str, Any]]:
    """The corpus index of ``root`` as plain rows (``Corpus.index`` columns), in corpus order."""
    index = load_corpus(root).index
    return [{column: row[column] for column in INDEX_COLUMNS} for row in index.to_dict("records")]


def holds_episodes(root: str | Path) -> bool:
    """Whether ``root`` is a corpus folder holding at least one episode (either layout)."""
    root = Path(root)
    if not (root / MARKER).exists():
        return False
    return schema_version(root) == 1 or bool(committed_parts(root))


def upgrade_corpus(old: str | Path, new: str | Path, *, progress: bool = False) -> Path:
    """Write the corpus at ``old`` (either layout) into ``new`` in the current layout, as one
    part: the same episodes, ids, order, values, metadata and frames. ``new`` must not hold
    episodes (``TargetExistsError``); ``old`` is only read. Returns ``new``."""
    corpus = load_corpus(old)
    new = Path(new)
    if Path(old).resolve() == new.resolve():
        raise TargetExistsError(f"{new}: is the corpus being upgraded; write the upgrade to another folder")
    if holds_episodes(new):
        raise TargetExistsError(f"{new}: already holds a corpus; choose an empty folder for the upgrade")
    return save_corpus(corpus, new, progress=progress)


register_writer(save_corpus)
