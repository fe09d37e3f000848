"""Live sources and the watcher: complete files only, each episode once across restarts, the source untouched."""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import time
from pathlib import Path

import pytest
from helpers.episodes import make_episode

from workbench.data.episodes import Corpus
from workbench.data.importers import import_crafter_recorder, import_rollouts
from workbench.data.sample import sample_path
from workbench.data.storage import load_corpus, save_corpus
from workbench.data.watch import KINDS, STATE_FILE, Watcher, detect_kind, open_source, origin_of
from workbench.errors import WatchError

SHIPPED = sample_path().parent / "sample_imports"
ROLLOUTS = SHIPPED / "rollouts"
RECORDER = SHIPPED / "recorder"


def tree_digest(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under ``root``: size, mtime and content hash (the source must keep all three)."""
    return {
        p.relative_to(root).as_posix(): (
            p.stat().st_size,
            p.stat().st_mtime_ns,
            hashlib.sha256(p.read_bytes()).hexdigest(),
        )
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def poll_until(watcher: Watcher, done, *, deadline: float = 20.0):
    """Poll until ``done(reports)`` holds, failing after ``deadline`` seconds."""
    reports = []
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        reports.append(watcher.poll())
        if done(reports):
            return reports
        time.sleep(0.01)
    raise AssertionError(f"not done after {deadline}s: {reports[-3:]}")


def appended_ids(reports) -> list[str]:
    return [i for r in reports for i in r.appended.ids]


def reseeded(original: Path, copy: Path, *, seed: int) -> None:
    """``original`` written to ``copy`` with the request's seed set to ``seed``."""
    document = json.loads(original.read_text(encoding="utf-8"))
    document["request"]["env"]["seed"] = seed
    copy.write_text(json.dumps(document), encoding="utf-8")


def test_rollout_files_land_and_are_appended_once_complete(tmp_path: Path) -> None:
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    source.mkdir()
    watcher = Watcher(open_source(source, "rollouts"), target)
    shutil.copy(ROLLOUTS / "text_runs.jsonl", source)
    first = watcher.poll()
    assert len(first.appended) == 0 and first.settling == 1  # seen once: not yet known complete
    second = watcher.poll()
    expected = import_rollouts(ROLLOUTS / "text_runs.jsonl", progress=False).corpus
    assert second.appended.ids == expected.ids
    assert load_corpus(target).ids == expected.ids
    assert [e.n_decisions for e in load_corpus(target)] == [e.n_decisions for e in expected]
    assert all(t >= 0 for t in second.latency) and len(second.latency) == len(expected)
    assert len(watcher.poll().appended) == 0  # taken: never again
    watcher.close()


def test_a_half_written_file_is_never_read_while_it_changes(tmp_path: Path) -> None:
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    source.mkdir()
    text = (ROLLOUTS / "shaped_raw.json").read_text(encoding="utf-8")
    file = source / "run.json"
    watcher = Watcher(open_source(source, "rollouts"), target)
    pieces = [text[: len(text) // 3], text[: 2 * len(text) // 3], text]
    for piece in pieces:
        file.write_text(piece, encoding="utf-8")  # grows between polls: always settling
        report = watcher.poll()
        assert len(report.appended) == 0 and report.problems == [] and report.settling == 1
    report = watcher.poll()
    assert report.problems == []
    assert report.appended.ids == import_rollouts(ROLLOUTS / "shaped_raw.json", progress=False).corpus.ids


def test_a_paused_writer_gets_its_retries_before_a_problem(tmp_path: Path) -> None:
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    source.mkdir()
    text = (ROLLOUTS / "shaped_raw.json").read_text(encoding="utf-8")
    file = source / "run.json"
    file.write_text(text[:100], encoding="utf-8")
    watcher = Watcher(open_source(source, "rollouts"), target)
    # seen, then unchanged but unparseable twice (retries=2): still no problem, still waiting
    for _ in range(3):
        report = watcher.poll()
        assert report.problems == [] and report.settling == 1
    file.write_text(text, encoding="utf-8")  # the writer resumes and finishes
    reports = poll_until(watcher, lambda rs: len(rs[-1].appended) > 0)
    assert all(r.problems == [] for r in reports)


def test_a_corrupt_file_is_a_named_problem_and_the_watcher_goes_on(tmp_path: Path) -> None:
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    source.mkdir()
    (source / "bad.json").write_text('{"run_id": "x", "trajectories": [', encoding="utf-8")
    shutil.copy(ROLLOUTS / "shaped_raw.json", source)
    watcher = Watcher(open_source(source, "rollouts"), target)
    reports = poll_until(watcher, lambda rs: any(r.problems for r in rs))
    problems = [p for r in reports for p in r.problems]
    assert len(problems) == 1 and problems[0].file.endswith("bad.json") and "not valid JSON" in problems[0].message
    assert appended_ids(reports) == import_rollouts(ROLLOUTS / "shaped_raw.json", progress=False).corpus.ids
    # reported once; the good file is not read again
    later = [watcher.poll() for _ in range(4)]
    assert all(r.problems == [] and len(r.appended) == 0 for r in later)
    # fixed later (a new signature): read then (another seed: other episodes than shaped_raw's)
    reseeded(ROLLOUTS / "shaped_raw.json", source / "bad.json", seed=22)
    fixed = poll_until(watcher, lambda rs: len(rs[-1].appended) > 0)
    assert len(appended_ids(fixed)) == len(import_rollouts(ROLLOUTS / "shaped_raw.json", progress=False).corpus)


def test_restarts_never_duplicate_even_without_the_state_file(tmp_path: Path) -> None:
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    source.mkdir()
    shutil.copy(ROLLOUTS / "text_runs.jsonl", source)
    with Watcher(open_source(source), target) as watcher:
        poll_until(watcher, lambda rs: len(rs[-1].appended) > 0)
    held = load_corpus(target).ids
    with Watcher(open_source(source), target) as watcher:
        assert [len(watcher.poll().appended) for _ in range(3)] == [0, 0, 0]
    (target / STATE_FILE).unlink()  # progress lost: the files are read again, the origins say they are held
    with Watcher(open_source(source), target) as watcher:
        reports = [watcher.poll() for _ in range(3)]
        assert appended_ids(reports) == [] and sum(r.skipped for r in reports) == len(held)
    shutil.copy(ROLLOUTS / "shaped_raw.json", source)  # a new file after the restarts: appended
    with Watcher(open_source(source), target) as watcher:
        new = appended_ids(poll_until(watcher, lambda rs: len(rs[-1].appended) > 0))
    assert load_corpus(target).ids == held + new
    origins = [origin_of(e.metadata) for e in load_corpus(target)]
    assert len(set(origins)) == len(origins) and None not in origins


def test_the_source_is_never_modified(tmp_path: Path) -> None:
    rollouts, recorder = tmp_path / "rollouts", tmp_path / "recorder"
    shutil.copytree(ROLLOUTS, rollouts)
    shutil.copytree(RECORDER, recorder)
    before = {"r": tree_digest(rollouts), "c": tree_digest(recorder)}
    for path, target in ((rollouts, tmp_path / "a"), (recorder, tmp_path / "b")):
        with Watcher(open_source(path), target) as watcher:
            poll_until(watcher, lambda rs: len(rs) > 2 and rs[-1].settling == 0)
    assert {"r": tree_digest(rollouts), "c": tree_digest(recorder)} == before


def test_recorder_files_and_a_truncated_one(tmp_path: Path) -> None:
    source, target = tmp_path / "recorder", tmp_path / "corpus"
    shutil.copytree(RECORDER, source)
    good = sorted(RECORDER.glob("*.npz"))[0]
    (source / "20261201T000000-ach0-len60.npz").write_bytes(good.read_bytes()[:5000])
    assert detect_kind(source) == "recorder"  # the Recorder's stats.jsonl does not make it a rollout folder
    with Watcher(open_source(source), target) as watcher:
        reports = poll_until(watcher, lambda rs: any(r.problems for r in rs))
    problems = [p for r in reports for p in r.problems]
    assert len(problems) == 1 and "truncated" in problems[0].message and problems[0].file.endswith("len60.npz")
    expected = import_crafter_recorder(RECORDER, progress=False).corpus
    assert sorted(appended_ids(reports)) == sorted(expected.ids)
    saved = load_corpus(target)
    assert saved[expected.ids[0]].has_frames  # frames were copied into the target


def test_a_corpus_being_written_while_watched(tmp_path: Path) -> None:
    source, target = tmp_path / "recording", tmp_path / "corpus"
    episodes = [make_episode(f"rec-{i}", decisions=3 + i, seed=i) for i in range(12)]
    stop = threading.Event()

    def record() -> None:
        for episode in episodes:  # one part per episode, as workbench record writes them
            save_corpus(Corpus([episode]), source)
            time.sleep(0.005)
        stop.set()

    writer = threading.Thread(target=record)
    with Watcher(open_source(source, "corpus"), target) as watcher:
        writer.start()
        seen: list[str] = []
        watcher.run(interval=0.05, on_report=lambda r: seen.extend(r.appended.ids) or len(seen) == len(episodes))
        writer.join(timeout=30)
    assert seen == [e.id for e in episodes]
    saved = load_corpus(target)
    assert saved.ids == seen
    for episode in episodes:
        assert saved[episode.id].inventory.tolist() == episode.inventory.tolist()


def test_run_wakes_on_file_events(tmp_path: Path) -> None:
    source, target = tmp_path / "rollouts", tmp_path / "corpus"
    source.mkdir()
    text = (ROLLOUTS / "shaped_raw.json").read_text(encoding="utf-8")
    document = json.loads(text)
    names = [f"run-{i}" for i in range(5)]
    per_file = len(import_rollouts(ROLLOUTS / "shaped_raw.json", progress=False).corpus)  # on_done reset: several

    def land() -> None:
        for name in names:
            tmp = source / f".{name}.tmp"
            tmp.write_text(json.dumps({**document, "run_id": name}), encoding="utf-8")
            tmp.rename(source / f"{name}.json")  # a writer that renames: complete on arrival
            time.sleep(0.05)

    seen: list[str] = []
    with Watcher(open_source(source, "rollouts"), target) as watcher:
        threading.Thread(target=land).start()
        started = time.monotonic()
        watcher.run(
            interval=60.0, on_report=lambda r: seen.extend(r.appended.ids) or len(seen) == per_file * len(names)
        )
        elapsed = time.monotonic() - started
    assert sorted({i.rsplit("-", 1)[0] for i in seen}) == names and len(seen) == per_file * len(names)
    # file events woke it: it did not sleep through a 60 s interval (the bound is far from the
    # ~1 s this takes, so load never fails it)
    assert elapsed < 30.0


def test_ids_clashing_across_sources_are_renamed(tmp_path: Path) -> None:
    a, b, target = tmp_path / "a", tmp_path / "b", tmp_path / "corpus"
    for folder, seed in ((a, 21), (b, 22)):  # the same ids, other episodes (a copy would be the same ones)
        folder.mkdir()
        reseeded(ROLLOUTS / "shaped_raw.json", folder / "shaped_raw.json", seed=seed)
    for folder in (a, b):
        with Watcher(open_source(folder), target) as watcher:
            poll_until(watcher, lambda rs: len(rs[-1].appended) > 0)
    ids = load_corpus(target).ids
    first = import_rollouts(ROLLOUTS / "shaped_raw.json", progress=False).corpus.ids
    assert ids == first + [f"{i}-2" for i in first]


def test_refusals(tmp_path: Path) -> None:
    source = tmp_path / "rollouts"
    source.mkdir()
    with pytest.raises(WatchError, match="inside the watched"):
        Watcher(open_source(source, "rollouts"), source / "corpus")
    with Watcher(open_source(source, "rollouts"), tmp_path / "corpus"):
        with pytest.raises(WatchError, match="another watcher"):
            Watcher(open_source(source, "rollouts"), tmp_path / "corpus")
    (tmp_path / "notes.txt").write_text("not a database")
    with pytest.raises(WatchError, match="not a synth-ai trace database"):
        open_source(tmp_path / "notes.txt")
    with pytest.raises(WatchError, match="unknown source kind 'ftp'"):
        open_source(source, "ftp")
    assert detect_kind(sample_path()) == "corpus"
    assert detect_kind(ROLLOUTS) == "rollouts"
    missing = open_source(tmp_path / "later", "rollouts")  # a folder the run has not made yet
    assert len(missing.poll().corpus) == 0


@pytest.mark.parametrize("start", ["missing", "empty"])
def test_an_undecided_folder_waits_and_tells_its_kind_from_the_first_file(tmp_path: Path, start: str) -> None:
    source, target = tmp_path / "recorder", tmp_path / "corpus"
    if start == "empty":
        source.mkdir()
    undecided = open_source(source)  # nothing tells the kind yet: waits
    assert undecided.kind == "undecided"
    with Watcher(undecided, target) as watcher:
        assert watcher.poll().notes == [] and undecided.kind == "undecided"
        source.mkdir(exist_ok=True)
        (source / "stats.jsonl").touch()  # what crafter.Recorder writes first: tells nothing yet
        assert watcher.poll().notes == [] and undecided.kind == "undecided"
        assert not (target / STATE_FILE).exists()  # nothing read: no progress recorded
        for npz in sorted(RECORDER.glob("*.npz")):
            shutil.copyfile(npz, source / npz.name)
        expected = import_crafter_recorder(RECORDER, progress=False).corpus
        reports = poll_until(watcher, lambda rs: sum(len(r.appended) for r in rs) == len(expected))
        reports += [watcher.poll() for _ in range(3)]  # and nothing more
    notes = [note for report in reports for note in report.notes]
    assert notes == [f"{source}: the first file tells its kind: recorder ({KINDS['recorder']})"]
    assert undecided.kind == "recorder" and undecided.key == open_source(source, "recorder").key
    assert sorted(load_corpus(target).ids) == sorted(expected.ids)


def test_load_corpus_reads_only_the_named_parts(tmp_path: Path) -> None:
    from workbench.data.storage import committed_parts

    for i in range(3):
        save_corpus(Corpus([make_episode(f"p{i}", seed=i)]), tmp_path / "c")
    parts = committed_parts(tmp_path / "c")
    assert len(parts) == 3
    assert load_corpus(tmp_path / "c", parts=parts[1:]).ids == ["p1", "p2"]
    assert load_corpus(tmp_path / "c", parts=[]).ids == []
