"""Importers: files written by the real ``crafter.Recorder`` and task-app rollout responses."""

from __future__ import annotations

import json
from pathlib import Path

import crafter
import numpy as np
import pytest
from helpers.rollouts import (
    PER_ACHIEVEMENT_TABLE,
    play_rollout,
    raw_variant,
    text_variant,
    write_json,
    write_jsonl,
)

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, ACTIONS, INVENTORY_ITEMS
from workbench.core.episode_reward import score_episode
from workbench.data.episodes import reset_state_arrays
from workbench.data.importers import import_crafter_recorder, import_rollouts
from workbench.scoring import verify


# -- crafter.Recorder -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def recorder_dir(tmp_path_factory) -> Path:
    """Two short random episodes recorded by crafter.Recorder itself (different lengths, so
    their file names differ even within one second)."""
    folder = tmp_path_factory.mktemp("recorder")
    rng = np.random.default_rng(0)
    for seed, length in ((1, 40), (2, 25)):
        env = crafter.Recorder(crafter.Env(seed=seed, length=length), folder, save_video=False)
        env.reset()
        done = False
        while not done:
            _, _, done, _ = env.step(int(rng.integers(len(ACTIONS))))
    return folder


def _copy_recorder_file(recorder_dir: Path, target: Path) -> Path:
    source = sorted(recorder_dir.glob("*.npz"))[0]
    target.mkdir(parents=True, exist_ok=True)
    path = target / source.name
    path.write_bytes(source.read_bytes())
    return path


def test_recorder_episodes_keep_the_files_rows(recorder_dir):
    result = import_crafter_recorder(recorder_dir, progress=False)
    assert result.ok, str(result)
    assert len(result.corpus) == 2
    for episode in result.corpus:
        file = recorder_dir / f"{episode.id}.npz"
        with np.load(file) as data:
            steps = len(data["action"]) - 1
            assert episode.n_decisions == episode.n_steps == steps
            assert [a[0] for a in episode.actions] == [ACTIONS[a] for a in data["action"][1:]]
            np.testing.assert_array_equal(
                episode.inventory[1:, INVENTORY_ITEMS.index("wood")], data["ainventory_wood"][1:]
            )
            np.testing.assert_array_equal(
                episode.achievement_counts[1:, ACHIEVEMENTS.index("wake_up")], data["achievement_wake_up"][1:]
            )
            np.testing.assert_array_equal(episode.env_reward, data["reward"][1:])
            np.testing.assert_array_equal(episode.player_pos[1:], data["player_pos"][1:])
            np.testing.assert_array_equal(episode.frames.images, data["image"])  # row 0 = reset frame
        assert episode.done[-1] and not episode.done[:-1].any()
        np.testing.assert_array_equal(episode.frames.step_decision, np.arange(1, steps + 1))
        assert episode.metadata["source"] == "crafter-recorder"
        assert episode.metadata["file"] == f"{episode.id}.npz"
        assert episode.metadata["policy"] == "unknown"


def test_recorder_reset_state_is_crafters_start_not_the_zero_row(recorder_dir):
    episode = import_crafter_recorder(recorder_dir, progress=False).corpus[0]
    inventory, counts = reset_state_arrays()
    np.testing.assert_array_equal(episode.inventory[0], inventory)
    assert episode.inventory[0, INVENTORY_ITEMS.index("health")] == 9
    np.testing.assert_array_equal(episode.achievement_counts[0], counts)
    assert episode.player_pos[0].tolist() == [-1, -1]  # unknown: the Recorder zero-fills it


def test_recorder_single_file(recorder_dir):
    file = sorted(recorder_dir.glob("*.npz"))[0]
    result = import_crafter_recorder(file, progress=False)
    assert result.ok and result.corpus.ids == [file.stem]


def _bad_recorder_files(recorder_dir: Path, folder: Path) -> dict[str, str]:
    """Bad files next to a good one: file name -> the words its error must contain."""
    good = _copy_recorder_file(recorder_dir, folder)
    with np.load(good) as data:
        arrays = {k: data[k] for k in data.files}
    blob = good.read_bytes()
    (folder / "truncated.npz").write_bytes(blob[: len(blob) // 2])
    (folder / "garbage.npz").write_bytes(b"not a zip file at all" * 10)
    np.savez_compressed(
        folder / "no_inventory.npz", **{k: v for k, v in arrays.items() if not k.startswith("ainventory_")}
    )
    np.savez_compressed(folder / "small_images.npz", **{**arrays, "image": arrays["image"][:, :32, :32]})
    np.savez_compressed(folder / "reset_only.npz", **{k: v[:1] for k, v in arrays.items()})
    np.savez_compressed(folder / "bad_action.npz", **{**arrays, "action": np.full_like(arrays["action"], 17)})
    stem = good.stem.replace(f"len{len(arrays['action']) - 1}", "len999")
    np.savez_compressed(folder / f"{stem}.npz", **arrays)
    return {
        "truncated.npz": "corrupt or truncated",
        "garbage.npz": "corrupt or truncated",
        "no_inventory.npz": "missing array(s) ainventory_health",
        "small_images.npz": "image: has shape",
        "reset_only.npz": "at least one decision",
        "bad_action.npz": "action: holds values outside",
        f"{stem}.npz": "len999",
    }


def test_recorder_batch_goes_on_past_bad_files_and_names_them(recorder_dir, tmp_path):
    expected = _bad_recorder_files(recorder_dir, tmp_path)
    result = import_crafter_recorder(tmp_path, progress=False)
    assert len(result.corpus) == 1  # the good file still imports
    assert result.files == len(expected) + 1
    by_file = {Path(issue.file).name: str(issue) for issue in result.errors}
    assert set(by_file) == set(expected)
    for name, words in expected.items():
        assert words in by_file[name]
        assert str(tmp_path / name) in by_file[name]  # every message names its file
    assert "7 problem(s)" in str(result)


def test_recorder_missing_path_is_an_issue(tmp_path):
    result = import_crafter_recorder(tmp_path / "nope", progress=False)
    assert not result.ok and "no such file or folder" in str(result)
    assert "no crafter.Recorder episode files" in str(import_crafter_recorder(tmp_path, progress=False))


# -- rollouts ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reset_rollout() -> dict:
    """One trajectory of two episodes (on_done = reset): 12 decisions of 3 actions on 20-step
    episodes, so the first episode ends (truncated) at its 7th decision, mid-decision."""
    return play_rollout(seed=7, decisions=12, actions_per_decision=3, episode_length=20, run_id="reset-run")


def test_rollout_splits_at_done_and_links_the_episodes(reset_rollout, tmp_path):
    result = import_rollouts(write_json(tmp_path / "r.json", text_variant(reset_rollout)), progress=False)
    assert result.ok, str(result)
    first, second = result.corpus
    assert (first.id, second.id) == ("reset-run-e1", "reset-run-e2")
    assert first.n_decisions == 7 and second.n_decisions == 5
    assert first.done[-1] and not first.done[:-1].any() and not second.done.any()
    assert first.n_steps == 20  # the 7th decision ran 2 of its 3 actions before the episode ended
    assert second.metadata["follows"] == first.id and "follows" not in first.metadata
    # The rollout did not store the state after the done decision: rebuilt from info.stepwise.
    assert "rebuilt" in first.metadata["terminal_state"] and "terminal_state" not in second.metadata
    steps = reset_rollout["trajectories"][0]["steps"]
    asked = [s["tool_calls"][0]["arguments"]["actions"] for s in steps[:7]]
    assert first.actions == asked[:6] + [asked[6][:2]]  # only what ran before the step limit
    assert first.env_reward.tolist() == [s["reward"] or 0.0 for s in steps[:7]]  # null unless it unlocked


def test_text_and_raw_observations_give_the_same_states(reset_rollout, tmp_path):
    text = import_rollouts(write_json(tmp_path / "t.json", text_variant(reset_rollout)), progress=False).corpus
    raw = import_rollouts(write_json(tmp_path / "r.json", raw_variant(reset_rollout)), progress=False).corpus
    for t, r in zip(text, raw):
        np.testing.assert_array_equal(t.inventory, r.inventory)
        np.testing.assert_array_equal(t.achievement_status, r.achievement_status)
        np.testing.assert_array_equal(t.player_pos, r.player_pos)
        assert t.actions == r.actions
        assert t.metadata["observations"] == "text" and r.metadata["observations"] == "raw"
        assert r.metadata["counts"] == "observed"
        # Text has no counts: a per_achievement rollout logged every rise, so they are exact.
        assert t.metadata["counts"] == "logged", t.metadata["counts_note"]
        np.testing.assert_array_equal(t.achievement_counts, r.achievement_counts)
    last_raw = reset_rollout["trajectories"][0]["final"]["observation"]["achievements_counts"]
    assert raw[1].achievement_counts[-1].tolist() == [last_raw[a] for a in ACHIEVEMENTS]


@pytest.mark.crafter
def test_text_counts_are_rebuilt_exactly_from_logged_rises(tmp_path):
    # A long per_achievement rollout collects things many times; its text keeps no counts.
    response = play_rollout(seed=3, decisions=400, actions_per_decision=2, on_done="reset", episode_length=300)
    text = import_rollouts(write_json(tmp_path / "t.json", text_variant(response)), progress=False).corpus
    raw = import_rollouts(write_json(tmp_path / "r.json", raw_variant(response)), progress=False).corpus
    assert len(text) >= 2  # the reset split puts a following episode (quirk 7) in the file
    for t, r in zip(text, raw):
        if t.metadata["counts"] == "logged":
            np.testing.assert_array_equal(t.achievement_counts, r.achievement_counts)
        else:
            # Only an episode that follows another can be left unpinned: its first decision's
            # rises are relative to the previous end (Crafter does not replay alike, so whether
            # this happens varies run to run). Then the counts are lower bounds, said so.
            note = t.metadata["counts_note"]
            assert "follows" in t.metadata and (
                "does not pin" in note or "before it in the rollout has estimated" in note
            )
            assert t.metadata["counts"] == "estimated" and (t.achievement_counts <= r.achievement_counts).all()
    assert text[0].metadata["counts"] == "logged"  # the first episode starts from a reset: always exact
    assert max(int(t.achievement_counts.max()) for t in text if t.metadata["counts"] == "logged") > 1
    assert list(text.index["counts"]) == [t.metadata["counts"] for t in text]


@pytest.mark.crafter
def test_counts_of_a_consistent_text_rollout_are_estimated_lower_bounds(tmp_path):
    table = {"enabled": True, "mode": "decision_stepwise", "strategy": "consistent"}
    response = play_rollout(seed=3, decisions=400, actions_per_decision=2, table=table, episode_length=300)
    text = import_rollouts(write_json(tmp_path / "t.json", text_variant(response)), progress=False).corpus
    raw = import_rollouts(write_json(tmp_path / "r.json", raw_variant(response)), progress=False).corpus
    for t, r in zip(text, raw):
        assert t.metadata["counts"] == "estimated"
        assert (t.achievement_counts <= r.achievement_counts).all()  # never more than the truth
        assert ((t.achievement_counts > 0) == t.achievement_status).all()
    # The estimate sees more than the unlocks: some collections are counted more than once.
    assert max(int(t.achievement_counts.max()) for t in text) > 1


def test_rescoring_reproduces_the_logged_stepwise_rewards(reset_rollout, tmp_path):
    corpus = import_rollouts(write_json(tmp_path / "r.json", raw_variant(reset_rollout)), progress=False).corpus
    first, second = corpus
    config = RewardConfig.from_dict(first.logged["config"])
    for episode in corpus:
        logged = episode.logged["stepwise"]
        assert len(logged) == episode.n_decisions and all(isinstance(s, dict) for s in logged)
        assert len(episode.logged["decision_rewards"]) == episode.n_decisions
        scored = score_episode(episode.states(), config, episode.actions).decisions
        skip = 1 if episode is second else 0  # quirk 7: scored against the previous episode's end
        for mine, theirs in list(zip(scored, logged))[skip:]:
            assert {k: v for k, v in mine.stepwise_info.items() if k != "decision_index"} == {
                k: v for k, v in theirs.items() if k != "decision_index"
            }
    # decision_index counts through the whole rollout.
    assert [s["decision_index"] for s in second.logged["stepwise"]] == list(range(8, 13))


def test_logged_config_comes_from_the_summary_echo_or_the_request(reset_rollout, tmp_path):
    episode = import_rollouts(write_json(tmp_path / "r.json", raw_variant(reset_rollout)), progress=False).corpus[0]
    config = episode.logged["config"]
    assert episode.logged["config_source"] == "metrics.details.stepwise"
    assert config["enabled"] is True and config["strategy"] == "per_achievement"
    assert config["weights"] == PER_ACHIEVEMENT_TABLE["weights"] and config["indicator_lambda"] == 0.5
    assert episode.logged["summary"] == reset_rollout["metrics"]["details"]["stepwise"]

    with_request = raw_variant(play_rollout(seed=3, decisions=3, include_request=True))
    episode = import_rollouts(write_json(tmp_path / "q.json", with_request), progress=False).corpus[0]
    assert episode.logged["config_source"] == "request.env.config.step_rewards"
    assert episode.logged["config"] == PER_ACHIEVEMENT_TABLE
    assert episode.metadata["seed"] == 3


def test_rollout_without_shaping_logs_nothing(tmp_path):
    response = text_variant(play_rollout(seed=4, decisions=6, episode_length=4, table=None))
    first, second = import_rollouts(write_json(tmp_path / "r.json", response), progress=False).corpus
    assert first.logged is None and second.logged is None
    assert first.metadata["terminal_state"].startswith("unknown")


def test_terminate_keeps_the_final_observation(tmp_path):
    response = raw_variant(play_rollout(seed=5, decisions=10, episode_length=5, on_done="terminate"))
    (episode,) = import_rollouts(write_json(tmp_path / "r.json", response), progress=False).corpus
    assert episode.done[-1] and "terminal_state" not in episode.metadata
    final = response["trajectories"][0]["final"]["observation"]
    assert episode.inventory[-1].tolist() == [final["inventory"][i] for i in INVENTORY_ITEMS]


def test_early_termination_step_is_not_a_decision(tmp_path):
    response = text_variant(play_rollout(seed=6, decisions=4))
    trajectory = response["trajectories"][0]
    trajectory["steps"].append(
        {
            "obs": trajectory["final"]["observation"],
            "tool_calls": [],
            "reward": None,
            "done": True,
            "info": {"terminated": True, "reason": "no_tool_calls"},
        }
    )
    (episode,) = import_rollouts(write_json(tmp_path / "r.json", response), progress=False).corpus
    assert episode.n_decisions == 4 and episode.metadata["ended"] == "no_tool_calls"


def _text(step: int, health: int, position: str, inventory: str, achievements: str) -> dict:
    return {
        "text": f"=== CRAFTER GAME STATE ===\nStep: {step}/100\nHealth: {health}\nPosition: {position}\n"
        f"Facing: [0, 1]\nInventory: {inventory}\nAchievements: {achievements}\n\nMap view unavailable\n"
    }


def _hand_written(observations: list[dict], actions: list[list[str]]) -> dict:
    steps = [
        {"obs": obs, "tool_calls": [{"tool": "interact_many", "args": {"actions": a}}], "reward": 0.0, "done": False}
        for obs, a in zip(observations, actions)
    ]
    return {"run_id": "hand", "trajectories": [{"steps": steps, "final": {"observation": observations[-1]}}]}


def test_text_observation_variants(tmp_path):
    observations = [
        _text(0, 9, "[32, 32]", "food:9, drink:9, energy:9", "none"),
        _text(1, 0, "[33 32]", "empty", "collect_wood, wake_up"),  # numpy-style position, nothing held
    ]
    (episode,) = import_rollouts(
        write_json(tmp_path / "h.json", _hand_written(observations, [["do"]])), progress=False
    ).corpus
    assert episode.player_pos.tolist() == [[32, 32], [33, 32]]
    assert episode.inventory[1].tolist() == [0] * 16 and episode.inventory[0, :4].tolist() == [9, 9, 9, 9]
    assert episode.unlocked == ["collect_wood", "wake_up"] and episode.metadata["max_steps"] == 100


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("inventory", "wood=2", "Inventory entry 'wood=2' is not '<item>:<count>'"),
        ("inventory", "gold:1", "Inventory entry 'gold:1'"),
        ("achievements", "collect_gold", "unknown achievement(s) ['collect_gold']"),
        ("position", "here", "Position: 'here' is not '[x, y]'"),
    ],
)
def test_bad_text_observations_name_the_step(tmp_path, field, value, words):
    fields = {"position": "[1, 2]", "inventory": "empty", "achievements": "none", field: value}
    bad = _text(1, 9, fields["position"], fields["inventory"], fields["achievements"])
    response = _hand_written([_text(0, 9, "[1, 2]", "empty", "none"), bad], [["noop"], ["noop"]])
    (issue,) = import_rollouts(write_json(tmp_path / "h.json", response), progress=False).errors
    assert issue.location == "trajectories[0].steps[1].obs" and words in issue.message


def test_jsonl_batch_goes_on_past_bad_lines_and_names_file_and_line(tmp_path):
    good = raw_variant(play_rollout(seed=8, decisions=4, run_id="good"))
    bad_action = json.loads(json.dumps(good))
    bad_action["run_id"] = "bad-action"
    bad_action["trajectories"][0]["steps"][2]["tool_calls"] = [{"arguments": {"actions": ["do"]}}]  # no name
    bad_text = text_variant(play_rollout(seed=9, decisions=3, run_id="bad-text"))
    bad_text["trajectories"][0]["steps"][1]["obs"]["text"] = "Step: 1/10000\nHealth: 9\n"
    empty = {"run_id": "empty", "trajectories": [{"steps": [], "final": {"observation": {}}}]}
    path = tmp_path / "batch.jsonl"
    lines = [
        json.dumps(good),
        json.dumps(bad_action),
        '{"run_id": "cut", "trajectories": [',
        json.dumps(bad_text),
        json.dumps(empty),
        json.dumps({"hello": 1}),
        json.dumps(dict(good, run_id="good-2")),
    ]
    path.write_text("\n".join(lines) + "\n")
    result = import_rollouts(path, progress=False)
    assert result.corpus.ids == ["good", "good-2"]
    messages = [str(issue) for issue in result.errors]
    assert len(messages) == 5
    assert all(m.startswith(f"{path}: line ") for m in messages)
    assert "line 2, trajectories[0].steps[2].tool_calls: a tool call with neither 'tool' nor 'tool_name'" in messages[0]
    assert "line 3: not valid JSON" in messages[1]
    assert (
        "line 4, trajectories[0].steps[1].obs: text observation without a 'Inventory:', 'Achievements:' line"
        in messages[2]
    )
    assert "line 5, trajectories[0]: has no steps" in messages[3] and "at least one decision" in messages[3]
    assert "line 6: no 'trajectories' list" in messages[4]


def test_bad_action_fails_only_its_episode_of_a_split_trajectory(reset_rollout, tmp_path):
    response = text_variant(reset_rollout)
    response["trajectories"][0]["steps"][9]["tool_calls"][0] = {"tool": "", "arguments": {"actions": ["fly"]}}
    result = import_rollouts(write_json(tmp_path / "r.json", response), progress=False)
    assert result.corpus.ids == ["reset-run-e1"]
    (issue,) = result.errors
    assert issue.location == "trajectories[0].steps[9].tool_calls" and "neither 'tool' nor 'tool_name'" in issue.message


def test_truncated_json_file_names_the_line(reset_rollout, tmp_path):
    path = tmp_path / "cut.json"
    text = json.dumps(text_variant(reset_rollout), indent=1)
    path.write_text(text[: len(text) // 2])
    (issue,) = import_rollouts(path, progress=False).errors
    assert issue.file == str(path) and issue.location.startswith("line ") and "not valid JSON" in issue.message
    assert int(issue.location.split()[1]) > 10


def test_folder_of_json_and_jsonl_with_repeated_run_ids(tmp_path):
    response = text_variant(play_rollout(seed=10, decisions=3, run_id="same"))
    write_json(tmp_path / "a.json", [response, response])
    (tmp_path / "sub").mkdir()
    write_jsonl(tmp_path / "sub" / "b.jsonl", [response])
    (tmp_path / "notes.txt").write_text("ignored")
    result = import_rollouts(tmp_path, progress=False)
    assert result.ok and result.files == 2
    assert result.corpus.ids == ["same", "same-2", "same-3"]
    assert result.corpus["same-2"].metadata["location"] == "[1], trajectories[0]"


# -- the CLI ----------------------------------------------------------------------------------
def test_cli_import_recorder_saves_frames_and_states(recorder_dir, tmp_path, capsys):
    from workbench.cli import main
    from workbench.data.storage import load_corpus

    assert main(["import", "recorder", str(recorder_dir), "--out", str(tmp_path / "c"), "--quiet"]) == 0
    assert "saved 2 episode(s)" in capsys.readouterr().out
    saved, imported = load_corpus(tmp_path / "c"), import_crafter_recorder(recorder_dir, progress=False).corpus
    assert saved.ids == imported.ids
    for a, b in zip(saved, imported):
        np.testing.assert_array_equal(a.frames.images, b.frames.images)
        np.testing.assert_array_equal(a.inventory, b.inventory)
    # The same ids again: refused (exit 2), nothing overwritten.
    assert main(["import", "recorder", str(recorder_dir), "--out", str(tmp_path / "c"), "--quiet"]) == 2
    assert "already holds episode(s)" in capsys.readouterr().err


def test_cli_import_rollouts_keeps_logged_data_and_reports_bad_input(reset_rollout, tmp_path, capsys):
    from workbench.cli import main
    from workbench.data.storage import load_corpus

    folder = tmp_path / "in"
    folder.mkdir()
    write_json(folder / "good.json", text_variant(reset_rollout))
    (folder / "bad.jsonl").write_text('{"run_id": \n')
    assert main(["import", "rollouts", str(folder), "--out", str(tmp_path / "c"), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert f"{folder / 'bad.jsonl'}: line 1: not valid JSON" in out and "saved 2 episode(s)" in out
    saved = load_corpus(tmp_path / "c")
    assert saved.ids == ["reset-run-e1", "reset-run-e2"] and saved.index["has_logged"].all()
    assert (
        saved[0].logged["stepwise"]
        == import_rollouts(folder / "good.json", progress=False).corpus[0].logged["stepwise"]
    )
    assert main(["import", "rollouts", str(tmp_path / "missing"), "--out", str(tmp_path / "d")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_a_real_server_rollout_never_done_is_one_episode_that_verifies(tmp_path):
    # The real task app never sets done, so a rollout plays on past the end of Crafter's episode.
    response = text_variant(
        play_rollout(seed=5, decisions=40, actions_per_decision=2, episode_length=30, done_when_over=False)
    )
    steps = response["trajectories"][0]["steps"]
    assert not any(step["done"] for step in steps) and all(step["truncated"] is None for step in steps)
    assert {step["reward"] for step in steps} <= {None, 1.0}
    corpus = import_rollouts(write_json(tmp_path / "r.json", response), progress=False).corpus
    (episode,) = corpus
    assert episode.n_decisions == 40 and episode.metadata["counts"] == "logged"
    assert verify(corpus).ok


def test_text_episodes_keep_map_views_and_the_models_words(reset_rollout, tmp_path):
    corpus = import_rollouts(write_json(tmp_path / "t.json", text_variant(reset_rollout)), progress=False).corpus
    first = corpus[0]
    assert len(first.views) == first.n_decisions + 1 and len(first.messages) == first.n_decisions
    assert first.views[0].splitlines()[2].split()[2] == "player"  # a 5x5 grid centred on the player
    said = reset_rollout["trajectories"][0]["steps"][0]["info"]["meta"]["raw_response"]
    call = said["choices"][0]["message"]["tool_calls"][0]["function"]
    assert first.messages[0].endswith(f"interact_many({call['arguments']})")
    raw = import_rollouts(write_json(tmp_path / "r.json", raw_variant(reset_rollout)), progress=False).corpus
    assert raw[0].views is None and raw[0].messages is None  # raw observations have frames' data instead


@pytest.mark.crafter
def test_the_task_apps_rewrite_of_move_right_do_is_what_ran(tmp_path):
    response = play_rollout(seed=2, decisions=300, actions_per_decision=2, done_when_over=False)
    rewritten = [
        s
        for s in response["trajectories"][0]["steps"]
        if s["info"]["meta"]["raw_response"]["choices"][0]["message"]["content"] == "I will move_right, do."
    ]
    assert rewritten and all(s["tool_calls"][0]["arguments"]["actions"] == ["move_right"] for s in rewritten)
    corpus = import_rollouts(write_json(tmp_path / "r.json", text_variant(response)), progress=False).corpus
    assert verify(corpus).ok


def test_inventory_disagreeing_with_the_logged_deltas_is_a_warning(tmp_path):
    response = text_variant(play_rollout(seed=5, decisions=30, actions_per_decision=2, done_when_over=False))
    step = next(s for s in response["trajectories"][0]["steps"] if s["info"]["stepwise"].get("inventory_deltas"))
    step["info"]["stepwise"]["inventory_deltas"] = {"diamond": 3}
    result = import_rollouts(write_json(tmp_path / "edited.json", response), progress=False)
    assert result.ok and len(result.warnings) == 1
    assert "edited.json" in str(result.warnings[0]) and "inventory_deltas" in str(result.warnings[0])
    assert "warning:" in str(result)
