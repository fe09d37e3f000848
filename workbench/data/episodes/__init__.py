"""Episodes and corpora: what the workbench scores and replays.

An ``Episode`` (``workbench.data.episodes.model``) is the state after reset plus one row per
decision, with optional frames that stay on disk until first touched. A ``Corpus``
(``workbench.data.episodes.corpus``) is an ordered collection of episodes with a tidy index
``DataFrame`` built from metadata only, so selecting and iterating never reads frames; its
``decision_arrays()`` / ``decision_batches()`` give whole state columns
(``workbench.data.episodes.columns``). Saving and loading live in ``workbench.data.storage``, which
builds on this package (never the reverse).
"""

from workbench.data.episodes.checks import check_status, check_values
from workbench.data.episodes.columns import STATE_DTYPES, DecisionArrays, count_dtype, narrow
from workbench.data.episodes.corpus import BATCH_DECISIONS, Corpus, register_writer
from workbench.data.episodes.index import INDEX_COLUMNS, index_frame, unique_id
from workbench.data.episodes.model import (
    ACTION_IDS,
    COUNT_SOURCES,
    FRAME_SHAPE,
    Episode,
    EpisodeError,
    Frames,
    now_iso,
    reset_state_arrays,
)
from workbench.data.episodes.store import ColumnStore, EpisodeExtras

__all__ = [
    "ACTION_IDS",
    "BATCH_DECISIONS",
    "COUNT_SOURCES",
    "FRAME_SHAPE",
    "INDEX_COLUMNS",
    "STATE_DTYPES",
    "ColumnStore",
    "Corpus",
    "DecisionArrays",
    "Episode",
    "EpisodeError",
    "EpisodeExtras",
    "narrow",
    "Frames",
    "check_status",
    "check_values",
    "count_dtype",
    "index_frame",
    "now_iso",
    "register_writer",
    "reset_state_arrays",
    "unique_id",
]
