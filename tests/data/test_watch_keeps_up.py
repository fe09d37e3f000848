"""A watcher following a writer that keeps writing (rollout files, a trace database) appends every run once: nothing lost, nothing doubled."""

from __future__ import annotations

import threading
import time

import pytest
from helpers.live_writers import new_trace_db, write_rollouts, write_sessions

from workbench.data.storage import load_corpus
from workbench.data.watch import open_source
from workbench.data.watch.watcher import Watcher

RATE = 400  # decisions a second
SECONDS = 3.0


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["rollouts", "traces"])
def test_every_run_a_live_writer_writes_is_appended_once(tmp_path, kind):
    source = tmp_path / ("in" if kind == "rollouts" else "traces.db")
    if kind == "traces":
        new_trace_db(source)
    else:
        source.mkdir()
    into = tmp_path / "corpus"
    appended: list[str] = []
    stop = threading.Event()
    with Watcher(open_source(source, kind), into, on_append=lambda c: appended.extend(c.ids)) as watcher:
        thread = threading.Thread(target=watcher.run, kwargs={"interval": 0.2, "stop": stop}, daemon=True)
        thread.start()
        try:
            written = (write_rollouts if kind == "rollouts" else write_sessions)(source, RATE, SECONDS, period=0.25)
            deadline = time.monotonic() + 60
            while len(appended) < len(written.landed) and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            stop.set()
            thread.join(timeout=60)
    # Each run id (w000000, w000001, ...) is one episode's id: exactly the runs written, once each.
    assert len(written.landed) >= SECONDS / 0.25  # the writer wrote all along (a batch a period at least)
    assert sorted(appended) == sorted(written.landed)
    assert sorted(load_corpus(into).ids) == sorted(written.landed)
