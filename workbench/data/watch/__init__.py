"""Live sources: episodes that keep arriving, polled into a corpus folder, each appended once.

Sources: a folder rollout files land in, a crafter.Recorder folder, a corpus being recorded, a
synth-ai trace database a task app is writing (read in short transactions).

``open_source(path, kind=None)`` gives a ``Source`` whose ``poll()`` returns a ``Poll`` (the
episodes new since the last poll and the problems met: a bad file is named and the source goes
on). A file is read once complete: its size and mtime unchanged across two polls, and it reads
cleanly (or it stayed unchanged and unreadable for a few more polls: then it is a problem).
``Watcher(source, into)`` saves each new episode into a corpus folder once, even across
restarts (the origins are kept in the corpus, progress in ``watch-state.json``), and wakes on
file events (watchfiles, the ``live`` extra) or polls every ``interval`` seconds.
"""

from workbench.data.watch.open import KINDS, detect_kind, open_source
from workbench.data.watch.source import ORIGIN_KEY, Poll, Source, origin_of
from workbench.data.watch.watcher import STATE_FILE, Watcher, WatchReport

__all__ = [
    "KINDS",
    "ORIGIN_KEY",
    "STATE_FILE",
    "Poll",
    "Source",
    "WatchReport",
    "Watcher",
    "detect_kind",
    "open_source",
    "origin_of",
]
