"""Recording with real Crafter: episodes, seeds, workers, resume, failing policies, the CLI."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.core.crafter_facts import INVENTORY_ITEMS
from workbench.data.policies import PolicyInput
from workbench.data.recording import episode_seeds, record
from workbench.data.storage import load_corpus, read_index
from workbench.errors import RecordingError

pytestmark = pytest.mark.crafter

HEALTH = INVENTORY_ITEMS.index("health")


# Policies for the tests, importable as "test_recording:<name>" by spawned workers too.
def fails_in_some_episodes(rng: np.random.Generator):
    """Answers "jump" at decision 3 in the episodes whose generator's first draw is < 0.5."""
    doomed = rng.random() < 0.5
    decisions = []

    def act(obs: PolicyInput) -> list[str]:
        decisions.append(obs.step)
        return ["jump"] if doomed and len(decisions) == 3 else ["noop"]

    return act


def _misbehaving(answer):
    def factory(rng):
        calls = []

        def act(obs):
            calls.append(1)
            if len(calls) < 3:
                return ["noop"]
            if isinstance(answer, Exception):
                raise answer
            return answer

        return act

    return factory


def test_small_run_records_states_frames_and_metadata(tmp_path):
    report = record("random", 2, tmp_path / "c", seed=3, max_steps=40, progress=False)
    assert report.ok and report.recorded == ["random-s3-00000", "random-s3-00001"] and not report.skipped
    assert report.steps == 80 and report.steps_per_second > 0  # random agents survive 40 steps
    assert "recorded 2 episode(s)" in str(report) and "steps/s" in str(report)
    corpus = load_corpus(tmp_path / "c")
    assert corpus.ids == report.recorded
    for number, episode in enumerate(corpus):
        assert episode.n_decisions == episode.n_steps == 40
        assert episode.done[-1] and not episode.done[:-1].any()
        assert episode.inventory[0, HEALTH] == 9 and not episode.achievement_counts[0].any()
        assert (episode.player_pos[0] == 32).all()  # Crafter starts at the world's centre
        assert episode.frames.images.shape == (41, 64, 64, 3) and episode.frames.images.dtype == np.uint8
        np.testing.assert_array_equal(episode.frames.step_decision, np.arange(1, 41))
        meta = episode.metadata
        assert meta["source"] == "recorded" and meta["policy"] == "random"
        assert meta["seed"] == episode_seeds(3, number)[0] and meta["corpus_seed"] == 3
        assert meta["actions_per_decision"] == 1 and meta["max_steps"] == 40
        assert meta["crafter_version"] == "1.8.3" and meta["created"].endswith("+00:00")
        # Crafter's reward is health change / 10 plus 1 per step that unlocks something new:
        # the recorded rows line up with the rewards only if every row is the right one.
        bonus = episode.env_reward - np.diff(episode.inventory[:, HEALTH]) / 10
        unlocked = (np.diff(episode.achievement_status.astype(int), axis=0) > 0).any(axis=1)
        np.testing.assert_allclose(bonus, unlocked.astype(float), atol=1e-9)


def test_decisions_hold_up_to_k_actions_and_stop_at_the_end(tmp_path):
    record("random", 1, tmp_path, seed=1, actions_per_decision=4, max_steps=10, frames=False, progress=False)
    (episode,) = load_corpus(tmp_path)
    assert [len(d) for d in episode.actions] == [4, 4, 2]  # the third ran 2 actions before the limit
    assert episode.n_steps == 10 and not episode.has_frames


def test_seeds_derive_from_corpus_seed_and_episode_number():
    assert episode_seeds(0, 5)[0] == episode_seeds(0, 5)[0]
    assert episode_seeds(0, 5)[1].random() == episode_seeds(0, 5)[1].random()
    worlds = {episode_seeds(0, n)[0] for n in range(50)}
    assert len(worlds) == 50 and all(0 <= w < 2**31 - 1 for w in worlds)
    assert episode_seeds(1, 5)[0] != episode_seeds(0, 5)[0]


def test_two_workers_record_the_same_worlds(tmp_path):
    one = record("random", 3, tmp_path / "one", max_steps=25, progress=False)
    two = record("random", 3, tmp_path / "two", max_steps=25, workers=2, progress=False)
    assert one.ok and two.ok and sorted(two.recorded) == one.recorded
    first, second = load_corpus(tmp_path / "one"), load_corpus(tmp_path / "two")
    assert second.ids == first.ids  # the index lists episodes in order whatever finished first
    for a in first:
        b = second[a.id]
        assert a.metadata["seed"] == b.metadata["seed"]
        # Same world: the reset frames agree (later frames may not: Crafter is not reproducible).
        np.testing.assert_array_equal(a.frames.images[0], b.frames.images[0])


@pytest.mark.parametrize(
    "answer, cause",
    [
        (RuntimeError("boom"), "raised RuntimeError: boom"),
        ([], "returned no action"),
        (["jump"], "returned unknown action(s) ['jump']"),
        (["noop", "noop"], "returned 2 actions, more than actions_per_decision=1"),
        ("noop", "returned 'noop'; expected a list of action names"),
    ],
)
def test_a_misbehaving_policy_fails_its_episode_only(tmp_path, answer, cause):
    report = record(_misbehaving(answer), 1, tmp_path, max_steps=20, progress=False)
    assert report.recorded == [] and list(report.failed) == ["factory-s0-00000"]
    message = report.failed["factory-s0-00000"]
    assert message.startswith("episode 'factory-s0-00000', decision 3 (after step 2): ") and cause in message
    assert "FAILED 1 episode(s)" in str(report) and message in str(report)
    assert not (tmp_path / "corpus.json").exists()


def test_failures_in_workers_spare_the_other_episodes(tmp_path):
    doomed = {n for n in range(4) if episode_seeds(0, n)[1].random() < 0.5}
    assert 0 < len(doomed) < 4  # the seed gives a mix
    report = record("test_recording:fails_in_some_episodes", 4, tmp_path, max_steps=15, workers=2, progress=False)
    ids = [f"test_recording_fails_in_some_episodes-s0-{n:05d}" for n in range(4)]
    assert set(report.failed) == {ids[n] for n in doomed}
    assert sorted(report.recorded) == [ids[n] for n in range(4) if n not in doomed]
    for episode_id, message in report.failed.items():
        assert f"episode {episode_id!r}, decision 3 (after step 2)" in message and "['jump']" in message
    assert load_corpus(tmp_path).ids == sorted(report.recorded)


def test_resume_skips_what_is_there_and_refuses_otherwise(tmp_path):
    record("random", 2, tmp_path, max_steps=12, frames=False, progress=False)
    with pytest.raises(FileExistsError, match=rf"{tmp_path} already holds episodes \(2\); pass resume=True"):
        record("random", 3, tmp_path, max_steps=12, frames=False, progress=False)
    report = record("random", 3, tmp_path, max_steps=12, frames=False, resume=True, progress=False)
    assert report.skipped == ["random-s0-00000", "random-s0-00001"] and report.recorded == ["random-s0-00002"]
    assert "skipped 2 episode(s)" in str(report)
    assert [row["episode"] for row in read_index(tmp_path)] == [f"random-s0-{n:05d}" for n in range(3)]
    with pytest.raises(RecordingError, match="cannot resume with different settings.*max_steps 12 -> 13"):
        record("random", 3, tmp_path, max_steps=13, frames=False, resume=True, progress=False)
    with pytest.raises(RecordingError, match="frames False -> True"):
        record("random", 3, tmp_path, max_steps=12, resume=True, progress=False)


def test_an_interrupted_run_keeps_what_finished(tmp_path):
    def interrupted(rng):
        interrupted.calls += 1
        if interrupted.calls == 2:
            raise KeyboardInterrupt
        return lambda obs: ["noop"]

    interrupted.calls = 0
    with pytest.raises(KeyboardInterrupt):
        record(interrupted, 3, tmp_path, max_steps=8, progress=False)
    assert load_corpus(tmp_path).ids == ["interrupted-s0-00000"]
    report = record(interrupted, 3, tmp_path, max_steps=8, resume=True, progress=False)
    assert report.skipped == ["interrupted-s0-00000"] and len(report.recorded) == 2


@pytest.mark.parametrize(
    "arguments, words",
    [
        ({"episodes": 0}, "episodes must be at least 1"),
        ({"max_steps": 0}, "an episode needs at least one decision"),
        ({"actions_per_decision": 0}, "actions_per_decision must be at least 1"),
        ({"workers": 0}, "workers must be at least 1"),
        ({"policy": "nonsense"}, "unknown policy 'nonsense'"),
        ({"policy": lambda rng: None, "workers": 2}, "cannot be sent to worker processes"),
    ],
)
def test_bad_arguments_fail_before_anything_runs(tmp_path, arguments, words):
    call = {"policy": "random", "episodes": 1, **arguments}
    with pytest.raises(RecordingError, match=words):
        record(call.pop("policy"), call.pop("episodes"), tmp_path, progress=False, **call)
    assert not any(tmp_path.iterdir())


def test_cli_record_exit_codes(tmp_path, capsys):
    from workbench.cli import main

    out = str(tmp_path / "c")
    assert main(["record", "--policy", "random", "--episodes", "1", "--max-steps", "10", "--out", out, "--quiet"]) == 0
    assert "recorded 1 episode(s)" in capsys.readouterr().out
    assert main(["record", "--policy", "random", "--episodes", "1", "--max-steps", "10", "--out", out, "--quiet"]) == 2
    assert "already holds episodes" in capsys.readouterr().err
    assert (
        main(
            [
                "record",
                "--policy",
                "test_recording:fails_in_some_episodes",
                "--episodes",
                "4",
                "--max-steps",
                "6",
                "--no-frames",
                "--out",
                str(tmp_path / "f"),
                "--quiet",
            ]
        )
        == 1
    )
    assert "FAILED" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit:
        main(["record", "--policy", "random", "--episodes", "0", "--out", out])
    assert exit.value.code == 2
