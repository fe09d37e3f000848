"""The kinds of live source ``workbench watch`` follows, in a module that imports nothing.

The command line's parser lists them in ``--help`` without importing the watchers.
"""

from __future__ import annotations

__all__ = ["KINDS"]

#: The kinds of live source, and what each is.
KINDS = {
    "rollouts": "a folder task-app rollout responses (.json, .jsonl) keep landing in",
    "recorder": "a folder crafter.Recorder writes its .npz episode files into",
    "corpus": "a workbench corpus folder being written (workbench record, workbench.env.RecordEpisodes)",
    "traces": "a synth-ai trace database (task-app serve --trace-db) a server is writing",
}
