"""Importers: episodes recorded elsewhere, turned into a workbench ``Corpus``.

- ``import_crafter_recorder(path)``: a folder (or one ``.npz``) written by ``crafter.Recorder``.
- ``import_rollouts(path)``: synth-ai task-app rollout responses (one JSON file, JSONL of many,
  or a folder of both), with what the task app logged about its shaped reward kept in
  ``episode.logged`` so scoring can check its re-computation against it.

- ``import_traces(db)``: synth-ai's SQLite trace database (``task-app serve --trace``), one
  episode per finished session (``traces`` also has the API a live follower reads it with).

All return an ``ImportResult``: the corpus of good episodes and one ``ImportIssue`` (file,
location, problem) per bad item. A batch goes on past bad items, so one corrupt file never costs
the episodes already read. Nothing here re-simulates Crafter (it is not reproducible from seed
and actions): every state comes from the file.
"""

from typing import TYPE_CHECKING

from workbench.util.lazy_names import lazy_names

if TYPE_CHECKING:  # what the names below resolve to, for type checkers and readers
    from workbench.data.importers.batch import ImportIssue, ImportResult
    from workbench.data.importers.crafter_recorder import RECORDER_ARRAYS, import_crafter_recorder
    from workbench.data.importers.rollouts import import_rollouts
    from workbench.data.importers.toolcalls import PlayedActions, played_actions
    from workbench.data.importers.traces import import_traces, read_trace_sessions

#: Each name and its module, imported on first use (PEP 562): a command that reads one helper
#: (``corpus info``: ``counts``, ``producers``) does not import every importer (sqlite3, the
#: rollout parser, the recorder's reader).
_HOMES = {
    "ImportIssue": "workbench.data.importers.batch",
    "ImportResult": "workbench.data.importers.batch",
    "RECORDER_ARRAYS": "workbench.data.importers.crafter_recorder",
    "import_crafter_recorder": "workbench.data.importers.crafter_recorder",
    "import_rollouts": "workbench.data.importers.rollouts",
    "PlayedActions": "workbench.data.importers.toolcalls",
    "played_actions": "workbench.data.importers.toolcalls",
    "import_traces": "workbench.data.importers.traces",
    "read_trace_sessions": "workbench.data.importers.traces",
}

__all__ = [
    "RECORDER_ARRAYS",
    "ImportIssue",
    "ImportResult",
    "PlayedActions",
    "import_crafter_recorder",
    "import_rollouts",
    "import_traces",
    "played_actions",
    "read_trace_sessions",
]


__getattr__ = lazy_names(__name__, _HOMES)
