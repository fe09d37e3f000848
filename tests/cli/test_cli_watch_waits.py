"""``workbench watch`` started before the run (a missing or empty folder): it waits, tells the kind
from the first file (once), and appends each file's episodes once, within 2 s of landing."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from helpers.hostile import SAMPLE_RECORDER, SAMPLE_ROLLOUTS, WORKBENCH

from workbench.data.importers import import_crafter_recorder, import_rollouts
from workbench.data.storage import load_corpus
from workbench.data.watch import KINDS

#: The promise: an episode is appended within 2 s of its file landing.
LANDED_SECONDS = 2.0


class Running:
    """``workbench watch`` in a subprocess, its stdout lines collected (with arrival times) by a thread."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            [*WORKBENCH, "watch", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ}
        )
        self.lines: list[tuple[float, str]] = []
        self._collector = threading.Thread(target=self._collect, daemon=True)
        self._collector.start()

    def _collect(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def wait_for(self, wanted, seconds: float = 60.0) -> float:
        """When (monotonic) the first line ``wanted(line)`` arrived; fails after ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            for when, line in list(self.lines):
                if wanted(line):
                    return when
            assert self.process.poll() is None, (self.lines, self.process.stderr.read() if self.process.stderr else "")
            assert time.monotonic() < deadline, f"never printed it: {self.lines}"
            time.sleep(0.01)

    def stop(self) -> tuple[int, str]:
        """Ctrl-C; the exit code and stderr."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=30)
        self._collector.join(timeout=30)  # the last lines (the count) read to the end
        assert self.process.stderr is not None
        return code, self.process.stderr.read()


def land(file: Path, folder: Path) -> float:
    """Copy ``file`` into ``folder`` as a writer would (written in place); when it was complete."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(file, folder / file.name)
    return time.monotonic()


@pytest.mark.parametrize("start", ["missing", "empty"])
@pytest.mark.parametrize("kind", ["rollouts", "recorder"])
def test_watch_waits_for_the_first_file_and_appends_each_once(tmp_path: Path, start: str, kind: str) -> None:
    source, target = tmp_path / "runs" / "live", tmp_path / "corpus"
    if start == "empty":
        source.mkdir(parents=True)
    if kind == "rollouts":
        files = sorted(SAMPLE_ROLLOUTS.iterdir())
        expected = {f.name: import_rollouts(f, progress=False).corpus.ids for f in files}
    else:
        files = sorted(SAMPLE_RECORDER.glob("*.npz"))
        expected = {f.name: import_crafter_recorder(f, progress=False).corpus.ids for f in files}
    running = Running([str(source), "--into", str(target)])  # the default interval: 1 s
    try:
        running.wait_for(lambda line: line.startswith(f"watching {source} (its kind told by the first file"))
        if kind == "recorder":  # what crafter.Recorder makes first: its folder and an empty stats.jsonl
            source.mkdir(parents=True, exist_ok=True)
            (source / "stats.jsonl").touch()
            time.sleep(1.5)  # two polls: stats.jsonl alone must not make it a rollouts folder
        for file in files:
            landed = land(file, source)
            for episode_id in expected[file.name]:
                appended = running.wait_for(lambda line, e=episode_id: line.startswith(f"+ {e} "), seconds=30)
                assert appended - landed <= LANDED_SECONDS, (file.name, episode_id, appended - landed)
        time.sleep(1.5)  # more polls: nothing is appended twice
    finally:
        code, err = running.stop()
    lines = [line for _, line in running.lines]
    every_id = [e for ids in expected.values() for e in ids]
    assert code == 0, err
    told = [line for line in lines if "the first file tells its kind" in line]
    assert told == [f"{source}: the first file tells its kind: {kind} ({KINDS[kind]})"]
    assert sorted(line.split()[1] for line in lines if line.startswith("+ ")) == sorted(every_id)
    assert sorted(load_corpus(target).ids) == sorted(every_id)
    assert lines[-1] == f"appended {len(every_id)} episode(s) into {target}; 0 problem(s)"
