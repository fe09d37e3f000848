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

from workbench.data.importers.batch import ImportIssue, ImportResult
from workbench.data.importers.crafter_recorder import RECORDER_ARRAYS, import_crafter_recorder
from workbench.data.importers.rollouts import import_rollouts
from workbench.data.importers.toolcalls import PlayedActions, played_actions
from workbench.data.importers.traces import import_traces, read_trace_sessions

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
