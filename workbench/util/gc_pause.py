"""Python's cyclic garbage collector held off while an import builds and keeps many objects.

An import parses JSON into millions of small dicts, lists and strings and keeps a batch of
episodes (up to ``BATCH_DECISIONS`` decisions) alive until they are written. Every ~700 new
container objects the collector runs, and its older generations walk every object the batch
holds: 20% of the CPU time of importing 10k rollout decisions (1.05 against 0.84 s measured),
for nothing, since what an import builds holds no reference cycles (its parsed documents and
episodes are trees, freed by their reference counts). ``gc_paused`` turns the collector off for
the duration and back on after; the caller collects (``gc.collect()``) where it lets a batch
go, so cycles that do arise (an exception's traceback kept with an issue) cannot pile
up past a batch.

The collector's switch is the process's; nested and concurrent pauses (threads) count, so it is
switched back on by the last to leave, and only when it was on before the first.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
#: How many pauses are running, and whether the collector was on before the first of them.
_state = {"depth": 0, "was_on": False}


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the body with the cyclic garbage collector off (reference counting still frees).

    Yields:
        None; on leaving, the collector is on again if it was before the first pause began.
    """
    with _LOCK:
        if _state["depth"] == 0:
            _state["was_on"] = gc.isenabled()
            gc.disable()
        _state["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _state["depth"] -= 1
            if _state["depth"] == 0 and _state["was_on"]:
                gc.enable()
