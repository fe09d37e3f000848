"""Bad rollouts and Recorder files: one bad number never costs the batch."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from helpers.hostile import SAMPLE_RECORDER, cli, good_rollout, raw_obs, rollout, saved_ids, text_obs, write_json

from workbench.data.importers import import_crafter_recorder, import_rollouts

BAD_TEXT = [
    ("inf", "wood:1", "Health"),
    ("1e30", "wood:1", "Health"),
    ("8.7", "wood:1", "Health"),
    ("-1", "wood:1", "Health"),
    ("9", "food:99999999999999999999", "Inventory food"),
    ("9", "wood:-3", "Inventory wood"),
    ("9", "wood:2147483648", "Inventory wood"),
    ("9", "wood:1.5", "Inventory wood"),
    ("9", "wood:1, wood:2", "Inventory wood: given twice"),
    ("９", "wood:1", "Health"),  # a full-width digit is not Crafter's text
]


@pytest.mark.parametrize(("health", "inventory", "key"), BAD_TEXT)
def test_a_bad_text_number_fails_only_its_file(tmp_path, capsys, health, inventory, key):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a_good.json").write_text(json.dumps(good_rollout()))
    bad = rollout("bad", [text_obs(0), text_obs(1, health, inventory), text_obs(2)])
    (folder / "b_bad.json").write_text(json.dumps(bad))
    result = import_rollouts(folder, progress=False)
    assert result.corpus.ids == ["good"]
    (issue,) = result.errors
    assert issue.file.endswith("b_bad.json") and "steps[1]" in issue.location and key in issue.message
    code, out, err = cli("import", "rollouts", folder, "--out", tmp_path / "o", "--quiet", capsys=capsys)
    assert code == 1 and err == "" and "b_bad.json" in out
    assert saved_ids(tmp_path / "o") == ["good"]


BAD_RAW = [
    ({"wood": float("inf")}, "inventory.wood"),
    ({"wood": 1e30}, "inventory.wood"),
    ({"wood": float("nan")}, "inventory.wood"),
    ({"wood": -1}, "inventory.wood"),
    ({"wood": 2**31}, "inventory.wood"),
    ({"wood": 8.7}, "inventory.wood"),
    ({"wood": "3"}, "inventory.wood"),
    ({"wood": True}, "inventory.wood"),
    ({"wood": "HUGE"}, "line 1"),  # replaced by 5000 digits: past Python's int() limit, not readable JSON
]


@pytest.mark.parametrize(("inventory", "key"), BAD_RAW)
def test_a_bad_raw_number_is_named_and_the_batch_goes_on(tmp_path, inventory, key):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a_good.json").write_text(json.dumps(good_rollout()))
    bad = rollout("bad", [raw_obs(), raw_obs(**inventory), raw_obs()])
    text = json.dumps(bad).replace('"HUGE"', "9" * 5000)
    (folder / "b_bad.json").write_text(text)
    result = import_rollouts(folder, progress=False)
    assert result.corpus.ids == ["good"]
    (issue,) = result.errors
    assert issue.file.endswith("b_bad.json") and key in f"{issue.location} {issue.message}"


@pytest.mark.parametrize(
    ("field", "value", "key"),
    [
        ("player_position", [1e30, 2], "player_position"),
        ("player_position", "ab", "player_position"),
        ("achievements_counts", {"collect_wood": float("nan")}, "achievements_counts.collect_wood"),
        ("achievements_counts", {"collect_wood": -2}, "achievements_counts.collect_wood"),
        ("num_steps_taken", 1e300, "num_steps_taken"),
        ("achievements_status", "all", "achievements_status"),
    ],
)
def test_other_raw_fields_are_strict(tmp_path, field, value, key):
    obs = {**raw_obs(), field: value}
    result = import_rollouts(write_json(tmp_path / "r.json", rollout("s", [raw_obs(), obs, raw_obs()])), progress=False)
    assert not len(result.corpus)
    (issue,) = result.errors
    assert issue.location.endswith("steps[1].obs") and issue.message.startswith(key), issue


@pytest.mark.parametrize(
    ("done", "reward"),
    [("false", 0.0), ("true", 0.0), (0.5, 0.0), ([], 0.0), (False, float("nan")), (False, float("inf")), (False, "1")],
)
def test_done_and_reward_are_strict(tmp_path, done, reward):
    bad = rollout("bad", [raw_obs(), raw_obs(), raw_obs()], done=done, reward=reward)
    result = import_rollouts(write_json(tmp_path / "r.json", bad), progress=False)
    assert len(result.corpus) == 0
    (issue,) = result.errors
    assert "steps[1]" in issue.location
    assert ("done" if done is not False else "reward") in issue.message


def test_a_status_written_as_a_string_is_refused(tmp_path):
    obs = {"inventory": {"health": 9}, "achievements_status": {"collect_wood": "false"}}
    result = import_rollouts(write_json(tmp_path / "r.json", rollout("s", [obs, obs])), progress=False)
    assert not len(result.corpus) and "achievements_status.collect_wood" in result.errors[0].message


def test_deep_nesting_fails_only_its_line(tmp_path):
    lines = [json.dumps(good_rollout("one")), "[" * 100_000 + "]" * 100_000, json.dumps(good_rollout("two"))]
    file = tmp_path / "r.jsonl"
    file.write_text("\n".join(lines) + "\n")
    result = import_rollouts(file, progress=False)
    assert result.corpus.ids == ["one", "two"]
    (issue,) = result.errors
    assert issue.location == "line 2" and "nested too deeply" in issue.message


def test_upper_case_jsonl_is_read_as_jsonl(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "RUNS.JSONL").write_text(json.dumps(good_rollout("a")) + "\n" + json.dumps(good_rollout("b")) + "\n")
    result = import_rollouts(folder, progress=False)
    assert result.ok and result.corpus.ids == ["a", "b"]


def test_a_300_character_run_id_is_saved_under_a_short_name(tmp_path, capsys):
    long_id = "r" * 300
    source = write_json(tmp_path / "r.json", good_rollout(long_id))
    code, out, err = cli("import", "rollouts", source, "--out", tmp_path / "o", "--quiet", capsys=capsys)
    assert code == 0 and err == ""
    (episode_id,) = saved_ids(tmp_path / "o")
    assert len(episode_id) <= 120 and episode_id.startswith("r" * 50)
    assert all(len(p.name) < 255 and long_id not in p.name for p in (tmp_path / "o").rglob("*"))


def test_two_long_ids_stay_distinct(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    write_json(folder / "a.json", good_rollout("x" * 300 + "a"))
    write_json(folder / "b.json", good_rollout("x" * 300 + "b"))
    ids = import_rollouts(folder, progress=False).corpus.ids
    assert len(set(ids)) == 2 and all(len(i) <= 120 for i in ids)


@pytest.mark.parametrize(
    ("array", "value", "message"),
    [
        ("done", 0.5, "not true or false"),
        ("reward", np.nan, "not a finite number"),
        ("ainventory_wood", np.nan, "not a finite number"),
        ("ainventory_wood", -1, "outside 0.."),
        ("ainventory_wood", 2**40, "outside 0.."),
        ("achievement_collect_wood", 1.5, "not an integer"),
        ("player_pos", np.inf, "not a finite number"),
    ],
)
def test_recorder_values_are_checked(tmp_path, array, value, message):
    source = sorted(SAMPLE_RECORDER.glob("*.npz"))[0]
    with np.load(source) as data:
        arrays = {name: data[name] for name in data.files}
    changed = arrays[array].astype(np.float64 if isinstance(value, float) else np.int64)
    changed[3] = value
    arrays[array] = changed
    folder = tmp_path / "logdir"
    folder.mkdir()
    shutil.copy(source, folder / "a_good.npz")
    np.savez(folder / "b_bad.npz", **arrays)
    result = import_crafter_recorder(folder, progress=False)
    assert result.corpus.ids == ["a_good"]
    (issue,) = result.errors
    assert issue.file.endswith("b_bad.npz") and issue.location == array and message in issue.message


def test_any_exception_of_one_file_becomes_its_problem(tmp_path, monkeypatch):
    """Whatever breaks inside one file (here a RecursionError the checks did not foresee), the
    batch goes on and says what broke."""
    import workbench.data.importers.rollouts as rollouts

    real = rollouts.rollout_episode

    def breaks(context, *args, **kwargs):
        if context.file.name == "b.json":
            raise RecursionError("maximum recursion depth exceeded")
        return real(context, *args, **kwargs)

    monkeypatch.setattr(rollouts, "rollout_episode", breaks)
    folder = tmp_path / "in"
    folder.mkdir()
    write_json(folder / "a.json", good_rollout("a"))
    write_json(folder / "b.json", good_rollout("b"))
    result = import_rollouts(folder, progress=False)
    assert result.corpus.ids == ["a"] and "nested too deeply" in result.errors[0].message


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_jsonl_lines_are_split_at_newlines_only(tmp_path, separator):
    """JSON allows these characters unescaped inside strings; only ``\\n`` ends a JSON Lines line."""
    odd = good_rollout("odd")
    odd["trajectories"][0]["env_id"] = f"a{separator}b"
    text = json.dumps(good_rollout("first")) + "\n" + json.dumps(odd, ensure_ascii=False) + "\n" + "{broken\n"
    file = tmp_path / "r.jsonl"
    file.write_bytes(text.encode("utf-8"))
    result = import_rollouts(file, progress=False)
    assert list(result.corpus.ids) == ["first", "odd"]
    assert result.corpus["odd"].metadata["env_id"] == f"a{separator}b"
    assert [issue.location for issue in result.errors] == ["line 3"]


def test_crlf_jsonl_reads_with_the_right_line_numbers(tmp_path):
    file = tmp_path / "r.jsonl"
    file.write_bytes(b"\r\n".join(json.dumps(d).encode() for d in (good_rollout("a"), {"x": 1}, good_rollout("b"))))
    result = import_rollouts(file, progress=False)
    assert list(result.corpus.ids) == ["a", "b"]
    assert [issue.location for issue in result.errors] == ["line 2"]
