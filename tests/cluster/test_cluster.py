"""Recording, scoring and search on a real 2-process Dask ``LocalCluster`` (127.0.0.1)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")  # the `cluster` extra; `dev` includes it

from workbench.analysis.search import search  # noqa: E402
from workbench.cli import main  # noqa: E402
from workbench.cluster import DaskScheduler, connect, parse_cluster, score_on_cluster, trial_mapper  # noqa: E402
from workbench.core.config import RewardConfig  # noqa: E402
from workbench.data.recording import record  # noqa: E402
from workbench.data.sample import sample_corpus, sample_path  # noqa: E402
from workbench.data.storage import load_corpus, read_index  # noqa: E402
from workbench.errors import ClusterError  # noqa: E402
from workbench.scoring import crafter_score, score  # noqa: E402
from workbench.scoring.partitioned import score_partitioned  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CONFIGS = [RewardConfig(strategy="per_achievement"), RewardConfig(strategy="consistent", indicator_lambda=0.5)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def client():
    """A 2-worker LocalCluster for the module; afterwards no worker or nanny process is left."""
    with connect("local:2", stream=sys.stderr) as client:
        client.wait_for_workers(2, timeout=60)
        pids: set[int] = set()
        yield client, pids
        for pid in client.run(os.getpid).values():
            pids.add(pid)
        # (A LocalCluster's nannies and scheduler run in this process: its worker processes are what must go.)
    deadline = time.monotonic() + 20
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in pids if _alive(pid)], "cluster processes left running"


def test_parse_cluster_names_the_bad_setting():
    assert parse_cluster("local:3") == ("local", 3)
    assert parse_cluster("tcp://10.0.0.5:8786") == ("remote", "tcp://10.0.0.5:8786")
    for bad in ("local:0", "local", "10.0.0.5:8786", "tcp://host", "slurm:4"):
        with pytest.raises(ClusterError, match="--cluster"):
            parse_cluster(bad)


def test_connect_to_a_missing_scheduler_is_a_cluster_error():
    with pytest.raises(ClusterError, match="no Dask scheduler answered"):
        with connect("tcp://127.0.0.1:9", timeout=2):
            pass


@pytest.mark.crafter
def test_record_on_the_cluster_matches_a_local_run(client, tmp_path):
    dask_client, _ = client
    local = record("random", 4, tmp_path / "local", seed=3, max_steps=120, progress=False)
    remote = record(
        "random", 4, tmp_path / "cluster", seed=3, max_steps=120, progress=False, scheduler=DaskScheduler(dask_client)
    )
    assert local.ok and remote.ok
    assert sorted(remote.recorded) == sorted(local.recorded)
    a, b = load_corpus(tmp_path / "local"), load_corpus(tmp_path / "cluster")
    assert a.ids == b.ids  # the index lists episodes by number, whatever order they finished in
    assert [e.metadata["seed"] for e in a] == [e.metadata["seed"] for e in b]
    assert all(e.has_frames for e in b)
    for config in CONFIGS:
        scores = score(b, config)
        assert list(scores.episodes["episode"]) == b.ids
        assert scores.episodes["decisions"].sum() == b.n_decisions > 0


@pytest.mark.crafter
def test_resume_and_policy_failures_on_the_cluster(client, tmp_path):
    dask_client, _ = client
    out = tmp_path / "corpus"
    first = record("random", 2, out, max_steps=60, frames=False, progress=False, scheduler=DaskScheduler(dask_client))
    again = record(
        "random", 4, out, max_steps=60, frames=False, progress=False, resume=True, scheduler=DaskScheduler(dask_client)
    )
    assert sorted(again.skipped) == sorted(first.recorded) and len(again.recorded) == 2
    assert len(read_index(out)) == 4

    # A policy failing for its own reasons fails its episode, reported as locally (never retried).
    spec = "test_recording:fails_in_some_episodes"
    local = record(spec, 6, tmp_path / "fail-local", max_steps=30, frames=False, progress=False)
    remote = record(
        spec,
        6,
        tmp_path / "fail-cluster",
        max_steps=30,
        frames=False,
        progress=False,
        scheduler=DaskScheduler(dask_client),
    )
    assert local.failed and remote.failed == local.failed
    assert sorted(remote.recorded) == sorted(local.recorded)


@pytest.mark.crafter
def test_a_killed_worker_still_records_every_episode_once(client, tmp_path):
    dask_client, pids = client
    worker_pids = dask_client.run(os.getpid)
    pids.update(worker_pids.values())
    killed: list[int] = []

    def kill_a_busy_worker() -> None:
        # Polls the workers' call stacks until one is playing an episode (inside
        # ``_record_episode``), then kills that worker mid-episode.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            stacks = dask_client.call_stack()  # worker -> {task key -> frames} of what runs now
            playing = [
                address for address, tasks in stacks.items() if any("_record_episode" in str(f) for f in tasks.values())
            ]
            if playing:
                os.kill(worker_pids[playing[0]], signal.SIGKILL)
                killed.append(worker_pids[playing[0]])
            else:
                time.sleep(0.05)  # a poll interval, not a wait for something to happen

    killer = threading.Thread(target=kill_a_busy_worker)
    killer.start()
    out = tmp_path / "corpus"
    report = record(
        "random", 6, out, seed=1, max_steps=300, frames=False, progress=False, scheduler=DaskScheduler(dask_client)
    )
    killer.join()
    assert killed, "no worker was killed"
    assert report.ok, report.failed
    expected = [f"random-s1-{n:05d}" for n in range(6)]
    assert sorted(report.recorded) == expected  # each once
    rows = read_index(out)
    assert [row["episode"] for row in rows] == expected
    assert len(list((out / "episodes").iterdir())) == 6
    assert load_corpus(out).ids == expected
    dask_client.wait_for_workers(2, timeout=60)  # the nanny restarted the killed worker
    pids.update(dask_client.run(os.getpid).values())


def _corpus_folder(tmp_path: Path) -> Path:
    """The sample corpus twice over (20 episodes) as a folder of 7 parts of 3 episodes or fewer,
    and one episode written again (overwrite) in a last part: its data then lives in a later part
    than its place in the corpus."""
    from workbench.data.episodes import Corpus
    from workbench.data.storage import save_corpus

    corpus = sample_corpus()
    doubled = Corpus.concat([corpus, corpus])
    folder = tmp_path / "doubled"
    for start in range(0, len(doubled), 3):
        save_corpus(doubled[start : start + 3], folder)
    save_corpus(doubled[4:5], folder, overwrite=True)
    return folder


@pytest.mark.parametrize("config", CONFIGS, ids=["per_achievement", "consistent"])
def test_score_on_the_cluster_equals_score_in_memory(client, tmp_path, config):
    from workbench.analysis.alignment import progress_summary
    from workbench.scoring.partitioned import task_parts

    dask_client, _ = client
    folder = _corpus_folder(tmp_path)
    corpus = load_corpus(folder)
    assert len(corpus) == 20
    expected = score(corpus, config)
    for per_part in (1, 4, 50):
        groups = task_parts(folder, per_part)
        # The re-written episode (second part) and its new part (the last) stay in one task.
        assert any(len(group) > 1 for group in groups) and sum(map(len, groups)) == 8
        got = score_on_cluster(dask_client, folder, config, episodes_per_part=per_part, progress=False)
        pd.testing.assert_frame_equal(got.episodes, expected.episodes, check_exact=True)
        assert got.totals() == expected.totals()
        pd.testing.assert_frame_equal(
            got.contributions[["kind", "name", "count"]], expected.contributions[["kind", "name", "count"]]
        )
        np.testing.assert_allclose(
            got.contributions[["reward", "scaled"]].to_numpy(),
            expected.contributions[["reward", "scaled"]].to_numpy(),
            rtol=1e-12,
            atol=0,
        )
        assert got.crafter_score == crafter_score(corpus)
        assert progress_summary(got.episodes) == progress_summary(expected)
    # The same combination in this process, over a Corpus or the folder, gives the same table.
    for source in (corpus, folder):
        pd.testing.assert_frame_equal(
            score_partitioned(source, config, episodes_per_part=4).episodes, expected.episodes, check_exact=True
        )
    assert sorted(p.name for p in (folder / "episodes").iterdir()) == sorted(
        f"{name}.parquet" for group in task_parts(folder, 1) for name in group
    )  # the folder only read


def test_search_on_the_cluster_one_at_a_time_equals_serial(client):
    dask_client, _ = client
    corpus = sample_corpus()
    serial = search(corpus, trials=6, seed=2, show_progress=False, bootstrap_reps=200)
    remote = search(
        corpus,
        trials=6,
        seed=2,
        show_progress=False,
        bootstrap_reps=200,
        evaluate_on=lambda evaluator: trial_mapper(dask_client, evaluator),
        batch_size=1,
    )
    columns = [c for c in serial.trials.columns if c != "seconds"]
    pd.testing.assert_frame_equal(remote.trials[columns], serial.trials[columns], check_exact=True)
    assert remote.weights == serial.weights and str(remote.held_out) == str(serial.held_out)
    batched = search(
        corpus,
        trials=6,
        seed=2,
        show_progress=False,
        bootstrap_reps=200,
        evaluate_on=lambda evaluator: trial_mapper(dask_client, evaluator),
        batch_size=2,
    )
    assert len(batched.trials) == 6 and batched.trials["state"].eq("COMPLETE").all()


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def _main(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_score_and_search_on_a_running_scheduler(client, tmp_path, capsys, monkeypatch):
    dask_client, _ = client
    address = dask_client.scheduler.address
    monkeypatch.chdir(tmp_path)
    config = str(REPO / "configs" / "recommended.yaml")
    status, in_memory, _ = _main(capsys, "score", "--config", config, str(sample_path()))
    assert status == 0
    status, on_cluster, err = _main(
        capsys, "score", "--config", config, str(sample_path()), "--cluster", address, "--out", "s.parquet", "--quiet"
    )
    assert status == 0, err
    assert f"connected to {address}" in err
    assert on_cluster.splitlines()[: len(in_memory.splitlines())] == in_memory.splitlines()
    assert (tmp_path / "s.episodes.parquet").exists() and not (tmp_path / "s.decisions.parquet").exists()
    status, serial, _ = _main(capsys, "search", "sample", "--trials", "4", "--quiet")
    assert status == 0
    status, remote, err = _main(
        capsys, "search", "sample", "--trials", "4", "--quiet", "--cluster", address, "--batch", "1"
    )
    assert status == 0, err
    assert remote == serial
    status, _, err = _main(capsys, "search", "sample", "--trials", "4", "--batch", "2")
    assert status == 2 and "--batch needs --cluster" in err


def test_cli_score_on_the_cluster_gives_the_intervals_and_notes_score_gives(client, tmp_path, capsys):
    # Episodes with estimated counts (a synth-ai 0.2.24 import) under a per_achievement config:
    # the cluster run prints the same intervals and weights-ignored note as the in-memory one.
    dask_client, _ = client
    corpus = tmp_path / "corpus"
    source = REPO / "tests" / "fixtures" / "synth-ai-0.2.24" / "responses"
    assert _main(capsys, "import", "rollouts", str(source), "--out", str(corpus), "--quiet")[0] == 0
    config = str(REPO / "configs" / "recommended.yaml")
    status, in_memory, _ = _main(capsys, "score", "--config", config, str(corpus))
    assert status == 0 and "[return_low, return_high]" in in_memory and "ignored your step_rewards" in in_memory
    address = dask_client.scheduler.address
    status, on_cluster, err = _main(capsys, "score", "--config", config, str(corpus), "--cluster", address, "--quiet")
    assert status == 0, err
    assert on_cluster == in_memory


@pytest.mark.crafter
def test_cli_record_on_a_local_cluster_prints_the_dashboard(tmp_path):
    result = _cli(
        "record",
        "--policy",
        "random",
        "--episodes",
        "2",
        "--max-steps",
        "40",
        "--no-frames",
        "--quiet",
        "--cluster",
        "local:1",
        "--out",
        "corpus",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "dashboard http://127.0.0.1:" in result.stderr
    assert "recorded 2 episode(s)" in result.stdout
    assert len(read_index(tmp_path / "corpus")) == 2
    bad = _cli(
        "record",
        "--policy",
        "random",
        "--episodes",
        "2",
        "--workers",
        "2",
        "--cluster",
        "local:2",
        "--out",
        "other",
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and "pick one" in bad.stderr


def test_cli_import_on_the_cluster_saves_what_a_local_import_saves(client, tmp_path, capsys):
    dask_client, _ = client
    rollouts = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "taskapp"
    status, local, _ = _main(capsys, "import", "rollouts", str(rollouts), "--out", str(tmp_path / "l"), "--quiet")
    assert status == 0
    address = dask_client.scheduler.address
    args = ["import", "rollouts", str(rollouts), "--out", str(tmp_path / "c"), "--quiet", "--cluster", address]
    status, remote, err = _main(capsys, *args)
    assert status == 0, err
    assert remote.replace(str(tmp_path / "c"), "OUT") == local.replace(str(tmp_path / "l"), "OUT")
    here, there = load_corpus(tmp_path / "l"), load_corpus(tmp_path / "c")
    assert list(here.ids) == list(there.ids)
    for a, b in zip(here, there):
        assert np.array_equal(a.inventory, b.inventory) and a.actions == b.actions and a.logged == b.logged
