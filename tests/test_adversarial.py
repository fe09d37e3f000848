"""Bad input and faults: every bad item a named error (file and key, line or step), every fault
survived (nothing lost, nothing left behind, no process left running), never a traceback.

Disk-full and unwritable folders are real: a tiny tmpfs (full) and a read-only tmpfs, mounted
by the test (we run as root here) and unmounted at its end; without mount rights the tests
fall back to a chmod-ed folder and an injected ENOSPC. Tests of the corpus format (the
storage layer's promises) are marked ``storage_contract``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.core.config import RewardConfig
from workbench.data.importers import import_crafter_recorder, import_rollouts
from workbench.errors import ConfigError, WorkbenchError

REPO = Path(__file__).resolve().parents[1]
SAMPLE_ROLLOUTS = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "rollouts"
SAMPLE_RECORDER = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "recorder"
RECOMMENDED = REPO / "configs" / "recommended.yaml"
WORKBENCH = [sys.executable, "-m", "workbench"]


# -- helpers --------------------------------------------------------------------------------
def cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the command line in-process: any exception but the exit code is a traceback (a bug)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def one_line_error(err: str, *names: str) -> None:
    """The CLI's named error: one ``workbench: error:`` line naming every one of ``names``."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("workbench: error: "), err
    for name in names:
        assert str(name) in lines[0], (name, lines[0])


def saved_ids(folder: Path) -> list[str]:
    """The episode ids a corpus folder holds (through the public API: the layout is storage's)."""
    from workbench.data.storage import holds_episodes, load_corpus

    return list(load_corpus(folder).ids) if holds_episodes(folder) else []


def committed_parts(folder: Path) -> bool:
    """Whether every decisions part of a columnar corpus folder is committed by an episodes part
    of the same name (a failed write leaves no part that no episode table lists)."""
    decisions = {p.name for p in (folder / "decisions").glob("*.parquet")}
    episodes = {p.name for p in (folder / "episodes").glob("*.parquet")}
    return decisions == episodes


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (what "nothing changed" compares)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def text_obs(step: int = 0, health: str = "9", inventory: str = "wood:1") -> dict:
    return {"text": f"Step: {step}/100\nHealth: {health}\nInventory: {inventory}\nAchievements: none\n"}


def raw_obs(**inventory: object) -> dict:
    return {"inventory": {"health": 9, "wood": 1, **inventory}, "achievements_status": {"collect_wood": True}}


def rollout(run_id: str, observations: list[dict], **step_fields: object) -> dict:
    """A minimal task-app rollout response: one decision per observation but the last (the final state)."""
    steps = [
        {"obs": obs, "tool_calls": [{"args": {"actions": ["noop"]}}], "reward": 0.0, "done": False}
        for obs in observations[:-1]
    ]
    steps[-1].update(step_fields)
    return {"run_id": run_id, "trajectories": [{"steps": steps, "final": {"observation": observations[-1]}}]}


def good_rollout(run_id: str = "good") -> dict:
    return rollout(run_id, [text_obs(0), text_obs(1), text_obs(2)])


def _stamps() -> dict[str, tuple[int, int, int]]:
    """(size, mtime, mode) of every file of the repository's data, configs and tests folders."""
    watched = [REPO / "workbench" / "data", REPO / "configs", REPO / "tests" / "data"]
    return {
        str(p): (p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_mode)
        for folder in watched
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(autouse=True)
def outside_untouched(tmp_path: Path) -> Iterator[None]:
    """Nothing outside the test's temp folder changes: the repository's data and configs, and
    no file is left in the working directory."""
    before, cwd = _stamps(), sorted(os.listdir("."))
    yield
    assert _stamps() == before
    assert sorted(os.listdir(".")) == cwd


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[bool]:
    """A tmpfs of ``size`` at ``path`` (True), or nothing when mounting is not allowed (False)."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
        ).returncode
        == 0
    )
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(path)], check=True)


@pytest.fixture
def full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on a full filesystem: a 256 KB tmpfs filled up (or, without mount rights, every
    fsync of a written file raising ENOSPC)."""
    root = tmp_path / "full"
    with tmpfs(root, "256k") as mounted:
        if mounted:  # leave room for a few small files only
            free = os.statvfs(root).f_bavail * os.statvfs(root).f_frsize
            (root / "filler").write_bytes(b"\0" * (free - 16 * 1024))
        else:

            def no_space(path: object) -> None:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

            monkeypatch.setattr("workbench.util.atomic._fsync", no_space)
        yield root


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder nobody can write into (a read-only tmpfs; without mount rights, mode 0555),
    holding ``train.toml``."""
    root = tmp_path / "ro"
    with tmpfs(root, "64k") as mounted:
        (root / "train.toml").write_text(TRAINING_TOML)
        if mounted:
            subprocess.run(["mount", "-o", "remount,ro", str(root)], check=True)
        else:
            root.chmod(0o555)
        try:
            yield root
        finally:
            if not mounted:
                root.chmod(0o755)


def alive(pids: list[int]) -> list[int]:
    """The pids still running (zombies are dead), read from /proc."""
    running = []
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if "State:\tZ" not in status:
            running.append(pid)
    return running


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc/*/stat)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


TRAINING_TOML = """# a training file
[training]
batch_size = 4  # keep

[rollout.env_config.step_rewards]
enabled = true
mode = "decision_stepwise"
strategy = "consistent"
"""


# -- importers: one bad number never costs the batch -----------------------------------------
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
    result = import_rollouts(_write(tmp_path / "r.json", rollout("s", [raw_obs(), obs, raw_obs()])), progress=False)
    assert not len(result.corpus)
    (issue,) = result.errors
    assert issue.location.endswith("steps[1].obs") and issue.message.startswith(key), issue


@pytest.mark.parametrize(
    ("done", "reward"),
    [("false", 0.0), ("true", 0.0), (0.5, 0.0), ([], 0.0), (False, float("nan")), (False, float("inf")), (False, "1")],
)
def test_done_and_reward_are_strict(tmp_path, done, reward):
    bad = rollout("bad", [raw_obs(), raw_obs(), raw_obs()], done=done, reward=reward)
    result = import_rollouts(_write(tmp_path / "r.json", bad), progress=False)
    assert len(result.corpus) == 0
    (issue,) = result.errors
    assert "steps[1]" in issue.location
    assert ("done" if done is not False else "reward") in issue.message


def test_a_status_written_as_a_string_is_refused(tmp_path):
    obs = {"inventory": {"health": 9}, "achievements_status": {"collect_wood": "false"}}
    result = import_rollouts(_write(tmp_path / "r.json", rollout("s", [obs, obs])), progress=False)
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
    source = _write(tmp_path / "r.json", good_rollout(long_id))
    code, out, err = cli("import", "rollouts", source, "--out", tmp_path / "o", "--quiet", capsys=capsys)
    assert code == 0 and err == ""
    (episode_id,) = saved_ids(tmp_path / "o")
    assert len(episode_id) <= 120 and episode_id.startswith("r" * 50)
    assert all(len(p.name) < 255 and long_id not in p.name for p in (tmp_path / "o").rglob("*"))


def test_two_long_ids_stay_distinct(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    _write(folder / "a.json", good_rollout("x" * 300 + "a"))
    _write(folder / "b.json", good_rollout("x" * 300 + "b"))
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

    real = rollouts._episode

    def breaks(context, *args, **kwargs):
        if context.file.name == "b.json":
            raise RecursionError("maximum recursion depth exceeded")
        return real(context, *args, **kwargs)

    monkeypatch.setattr(rollouts, "_episode", breaks)
    folder = tmp_path / "in"
    folder.mkdir()
    _write(folder / "a.json", good_rollout("a"))
    _write(folder / "b.json", good_rollout("b"))
    result = import_rollouts(folder, progress=False)
    assert result.corpus.ids == ["a"] and "nested too deeply" in result.errors[0].message


# -- import saves: all or nothing, --overwrite ---------------------------------------------------
def test_import_overwrite(tmp_path, capsys):
    source = _write(tmp_path / "r.json", good_rollout())
    out = tmp_path / "o"
    assert cli("import", "rollouts", source, "--out", out, "--quiet", capsys=capsys)[0] == 0
    saved = tree(out)
    code, _, err = cli("import", "rollouts", source, "--out", out, "--quiet", capsys=capsys)
    assert code == 2
    one_line_error(err, out, "good", "--overwrite")
    assert tree(out) == saved
    assert cli("import", "rollouts", source, "--out", out, "--quiet", "--overwrite", capsys=capsys)[0] == 0
    assert saved_ids(out)[0] == "good"


def test_import_into_a_full_disk_leaves_nothing_and_loses_nothing(tmp_path, full_disk, capsys):
    out = full_disk / "corpus"
    small = _write(tmp_path / "small.json", good_rollout("kept"))
    first = cli("import", "rollouts", small, "--out", out, "--quiet", capsys=capsys)
    saved = tree(out) if first[0] == 0 else {}
    code, _, err = cli("import", "rollouts", SAMPLE_ROLLOUTS, "--out", out, "--quiet", capsys=capsys)
    assert code == 2
    one_line_error(err, out)
    assert tree(out) == saved if out.exists() else saved == {}
    if (full_disk / "filler").exists():  # room again: the retry succeeds (no orphan blocks it)
        (full_disk / "filler").unlink()
        assert cli("import", "rollouts", SAMPLE_ROLLOUTS, "--out", out, "--quiet", capsys=capsys)[0] == 0
        assert len(saved_ids(out)) == 4 + len(saved and [1])


def test_import_into_an_unwritable_folder(read_only_dir, capsys):
    code, _, err = cli("import", "rollouts", SAMPLE_ROLLOUTS, "--out", read_only_dir / "o", "--quiet", capsys=capsys)
    assert code == 2
    one_line_error(err, read_only_dir / "o")


def test_score_out_into_an_unwritable_folder(read_only_dir, capsys):
    code, _, err = cli("score", "--config", RECOMMENDED, "sample", "--out", read_only_dir / "s.csv", capsys=capsys)
    assert code == 2
    one_line_error(err, read_only_dir)


# -- config export and files -------------------------------------------------------------
def test_export_refuses_a_read_only_toml_unless_forced(tmp_path, capsys):
    target = tmp_path / "train.toml"
    target.write_text(TRAINING_TOML)
    target.chmod(0o444)
    code, _, err = cli("config", "export", RECOMMENDED, target, capsys=capsys)
    assert code == 2
    one_line_error(err, target, "read-only", "--force")
    assert target.read_text() == TRAINING_TOML
    assert cli("config", "export", RECOMMENDED, target, "--force", capsys=capsys)[0] == 0
    assert "per_achievement" in target.read_text() and "batch_size = 4  # keep" in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o444


def test_export_keeps_hard_links_only_when_forced(tmp_path, capsys):
    target, link = tmp_path / "train.toml", tmp_path / "link.toml"
    target.write_text(TRAINING_TOML)
    os.link(target, link)
    code, _, err = cli("config", "export", RECOMMENDED, target, capsys=capsys)
    assert code == 2
    one_line_error(err, target, "hard links", "--force")
    assert link.read_text() == TRAINING_TOML
    assert cli("config", "export", RECOMMENDED, target, "--force", capsys=capsys)[0] == 0
    assert os.path.samefile(target, link) and "per_achievement" in link.read_text()
    assert RewardConfig.from_file(link) == RewardConfig.from_file(target)


def test_export_keeps_crlf_line_endings(tmp_path, capsys):
    target = tmp_path / "train.toml"
    target.write_bytes(TRAINING_TOML.replace("\n", "\r\n").encode())
    assert cli("config", "export", RECOMMENDED, target, capsys=capsys)[0] == 0
    data = target.read_bytes()
    assert b"per_achievement" in data and data.count(b"\n") == data.count(b"\r\n")
    assert RewardConfig.from_file(target).effective_strategy == "per_achievement"


@pytest.mark.slow  # two subprocesses: a hang must not hang the test run
def test_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "x.toml"
    os.mkfifo(fifo)
    for argv in (["config", "export", RECOMMENDED, fifo], ["config", "lint", fifo]):
        done = subprocess.run(
            [*WORKBENCH, *map(str, argv)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert done.returncode == 2 and "Traceback" not in done.stderr
        one_line_error(done.stderr, fifo, "not a regular file")


def test_export_into_an_unwritable_folder(read_only_dir, capsys):
    target = read_only_dir / "train.toml"
    code, _, err = cli("config", "export", RECOMMENDED, target, "--force", capsys=capsys)
    assert code == 2
    one_line_error(err, target)
    assert target.read_text() == TRAINING_TOML


def test_export_on_a_full_disk(full_disk, capsys):
    target = full_disk / "train.toml"
    target.write_text(TRAINING_TOML)
    with open(full_disk / "more", "wb", buffering=0) as handle, contextlib.suppress(OSError):
        while True:  # the last bytes too
            handle.write(b"\0" * 512)
    code, _, err = cli("config", "export", RECOMMENDED, target, capsys=capsys)
    assert code == 2
    one_line_error(err, target)
    assert target.read_text() == TRAINING_TOML
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler", "more", "train.toml"]


@pytest.mark.parametrize(
    ("name", "text", "named"),
    [
        pytest.param(
            "deep.yaml", "weights: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply", marks=pytest.mark.slow
        ),  # PyYAML takes seconds to reach its recursion limit
        ("deep.toml", "[step_rewards]\nweights = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
        ("digits.yaml", "step_beta: " + "5" * 5000 + "\n", "digits"),
        ("digits.toml", "[step_rewards]\nstep_beta = " + "5" * 5000 + "\n", "digits"),
        (
            "k.yaml",
            "strategy: per_achievement\nk_limits:\n  collect_wood: " + "1" + "0" * 29 + "\n",
            "k_limits.collect_wood",
        ),
        ("w.toml", "[step_rewards]\nweights = { collect_wood = 1e308 }\n", "weights.collect_wood"),
        ("l.yaml", "indicator_lambda: 1.0e+308\n", "indicator_lambda"),
        ("hint.yaml", "indicator_lambda: 1.0e3\n", "1.0e+3"),
    ],
)
def test_config_files_give_named_errors(tmp_path, capsys, name, text, named):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        RewardConfig.from_file(path)
    assert str(path) in str(caught.value) and named in str(caught.value)
    assert "remove the quotes" not in str(caught.value)
    code, _, err = cli("config", "lint", path, capsys=capsys)
    assert code == 2
    one_line_error(err, path, named)


def test_the_quotes_hint_only_for_quoted_numbers(tmp_path):
    path = tmp_path / "q.yaml"
    path.write_text('indicator_lambda: "1.5"\n')
    with pytest.raises(ConfigError, match="remove the quotes"):
        RewardConfig.from_file(path)


@pytest.mark.parametrize(
    ("config", "key"),
    [
        (RewardConfig(strategy="per_achievement", k_limits={"collect_wood": 10**29}), "k_limits.collect_wood"),
        (RewardConfig(weights={"collect_wood": 1e308}), "weights.collect_wood"),
        (RewardConfig(indicator_lambda=1e308), "indicator_lambda"),
    ],
)
def test_a_config_built_in_code_is_checked_before_export(tmp_path, config, key):
    target = tmp_path / "train.toml"
    target.write_text(TRAINING_TOML)
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        config.export_into(target)
    assert target.read_text() == TRAINING_TOML
    for suffix in (".yaml", ".toml"):
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            config.to_file(tmp_path / f"c{suffix}")
        assert not (tmp_path / f"c{suffix}").exists()


def test_a_config_built_in_code_that_overflows_is_refused():
    from workbench.data.sample import sample_corpus
    from workbench.scoring import score

    with pytest.raises(ConfigError, match=r"weights\.collect_wood"):
        score(sample_corpus(), RewardConfig(strategy="per_achievement", weights={"collect_wood": 1e308}))


# -- the corpus format (the storage layer's promises) ---------------------------------------
@pytest.mark.storage_contract
@pytest.mark.parametrize(
    "index",
    [
        b"\xff\xfe not utf-8",
        b'{"format": "crafter-reward-workbench-corpus", "schema_version": 1, "episodes": ["a string"]}',
        b'{"format": "crafter-reward-workbench-corpus", "schema_version": 1, "episodes": [{"file": "episodes/x.npz"}]}',
        b'{"format": "crafter-reward-workbench-corpus", "schema_version": 1, "episodes": {}}',
        b"[]",
    ],
)
def test_a_malformed_corpus_index_is_a_named_error(tmp_path, index):
    from workbench.data.storage import load_corpus

    sample = _saved_sample(tmp_path)
    document = json.loads((sample / "corpus.json").read_text())
    text = index.replace(
        b'"crafter-reward-workbench-corpus", "schema_version": 1',
        f'"{document["format"]}", "schema_version": {document["schema_version"]}'.encode(),
    )
    (sample / "corpus.json").write_bytes(text)
    with pytest.raises(WorkbenchError, match="corpus.json"):
        corpus = load_corpus(sample)
        [episode.n_decisions for episode in corpus]


@pytest.mark.parametrize("index", [b"\xff\xfe not utf-8", b'{"episodes": ["a string"]}', b'{"episodes": [{}]}', None])
def test_the_cli_names_a_malformed_corpus_index(tmp_path, capsys, index):
    sample = _saved_sample(tmp_path)
    document = json.loads((sample / "corpus.json").read_text())
    if index is None:
        (sample / "corpus.json").unlink()
        (sample / "corpus.json").mkdir()
    else:
        patched = {**document, **json.loads(index)} if index.startswith(b"{") else None
        (sample / "corpus.json").write_bytes(json.dumps(patched).encode() if patched else index)
    code, _, err = cli("score", "--config", RECOMMENDED, sample, capsys=capsys)
    assert code == 2
    one_line_error(err, sample / "corpus.json")
    before = tree(sample)
    for overwrite in ([], ["--overwrite"]):
        code, _, err = cli("import", "rollouts", SAMPLE_ROLLOUTS, "--out", sample, "--quiet", *overwrite, capsys=capsys)
        assert code == 2
        one_line_error(err, sample / "corpus.json")
        assert tree(sample) == before


@pytest.mark.parametrize("edit", [{"layout": "rows"}, {"tables": ["decisions"]}, {"episodes": []}, {"extra": 1}])
def test_a_columnar_marker_holding_anything_else_is_a_named_error(tmp_path, edit):
    from workbench.data.storage import load_corpus

    sample = _saved_sample(tmp_path)
    document = json.loads((sample / "corpus.json").read_text())
    (sample / "corpus.json").write_text(json.dumps({**document, **edit}))
    with pytest.raises(WorkbenchError, match=f"corpus.json: .*{next(iter(edit))}"):
        load_corpus(sample)


@pytest.mark.storage_contract
def test_a_directory_named_corpus_json_is_a_named_error(tmp_path):
    from workbench.data.storage import load_corpus

    (tmp_path / "c" / "corpus.json").mkdir(parents=True)
    with pytest.raises(WorkbenchError, match="corpus.json"):
        load_corpus(tmp_path / "c")


@pytest.mark.storage_contract
def test_corpus_save_on_a_full_disk_leaves_nothing(full_disk):
    from workbench.data.sample import sample_corpus

    with pytest.raises(WorkbenchError, match="cannot save"):
        sample_corpus().save(full_disk / "c")
    assert saved_ids(full_disk / "c") == [] and committed_parts(full_disk / "c")
    assert not [p for p in (full_disk / "c").rglob("*") if p.is_file() and p.suffix in (".parquet", ".tmp")]


@pytest.mark.storage_contract
def test_a_killed_saves_temp_file_is_no_corpus(tmp_path):
    from workbench.data.storage import load_corpus

    sample = _saved_sample(tmp_path)
    (sample / "episodes" / ".x.npz.0123456789abcdef.tmp").write_bytes(b"half")
    assert len(load_corpus(sample)) == 10


# -- recording ------------------------------------------------------------------------------
_HUNG_ONCE = {"calls": 0}


def hangs_in_first_episode(rng):
    """A policy factory whose first episode hangs at decision 3 (workers=1: one process)."""
    _HUNG_ONCE["calls"] += 1
    first = _HUNG_ONCE["calls"] == 1

    def policy(seen):
        if first and seen.step >= 2:
            while True:
                time.sleep(0.01)
        return ["noop"]

    return policy


def raises_system_exit(rng):
    def policy(seen):
        raise SystemExit(3)

    return policy


def raises_keyboard_interrupt(rng):
    def policy(seen):
        raise KeyboardInterrupt

    return policy


@pytest.mark.parametrize(
    ("option", "value"),
    [("--seed", "-1"), ("--seed", "1" + "0" * 300), ("--decision-timeout", "nan"), ("--decision-timeout", "-1")],
)
def test_record_settings_out_of_range_are_named(tmp_path, capsys, option, value):
    with pytest.raises(SystemExit) if option == "--decision-timeout" else contextlib.nullcontext():
        code, _, err = cli(
            "record", "--policy", "random", "--episodes", "1", "--out", tmp_path / "c", option, value, capsys=capsys
        )
        assert code == 2
        one_line_error(err, "seed", "0..")
    if option == "--decision-timeout":  # argparse's own usage error (exit 2)
        assert "--decision-timeout" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


@pytest.mark.crafter
def test_a_hung_policy_fails_only_its_episode(tmp_path):
    from workbench.data.recording import record

    _HUNG_ONCE["calls"] = 0
    report = record(
        hangs_in_first_episode, 2, tmp_path / "c", max_steps=10, frames=False, progress=False, decision_timeout=0.5
    )
    assert len(report.recorded) == 1 and len(report.failed) == 1
    (message,) = report.failed.values()
    assert "decision 3 (after step 2)" in message and "0.5 s" in message and "-00000" in message


@pytest.mark.crafter
@pytest.mark.parametrize("factory", [raises_system_exit, raises_keyboard_interrupt])
def test_a_policy_raising_systemexit_or_keyboardinterrupt_fails_its_episode(tmp_path, factory):
    from workbench.data.recording import record

    report = record(factory, 2, tmp_path / "c", max_steps=10, frames=False, progress=False)
    assert not report.recorded and len(report.failed) == 2
    assert all(
        "decision 1 (after step 0)" in m and ("SystemExit" in m or "KeyboardInterrupt" in m)
        for m in report.failed.values()
    )


@pytest.mark.crafter
def test_record_on_a_full_disk_is_named_and_leaves_no_orphan(full_disk, capsys):
    out = full_disk / "c"
    code, _, err = cli(
        "record", "--policy", "random", "--episodes", "2", "--max-steps", "300", "--out", out, "--quiet", capsys=capsys
    )
    assert code == 2
    one_line_error(err, out)
    saved_ids(out)  # whatever was committed opens
    assert committed_parts(out)


@pytest.mark.crafter
def test_a_folder_holding_only_a_killed_saves_temp_file_can_be_recorded_into(tmp_path, capsys):
    out = tmp_path / "c"
    (out / "episodes").mkdir(parents=True)
    (out / "episodes" / ".random-s0-00000.npz.0123456789abcdef.tmp").write_bytes(b"half")
    code, _, _ = cli(
        "record", "--policy", "random", "--episodes", "1", "--max-steps", "5", "--out", out, "--quiet", capsys=capsys
    )
    assert code == 0
    assert saved_ids(out) == ["random-s0-00000"]


def _record_then_signal(out: Path, sig: signal.Signals) -> tuple[subprocess.Popen, list[int]]:
    """Start ``workbench record --workers 2`` and send ``sig`` once one episode is saved and both
    workers run; returns the finished parent and every process it had started."""
    command = [
        *WORKBENCH,
        "record",
        "--policy",
        "random",
        "--episodes",
        "6",
        "--workers",
        "2",
        "--max-steps",
        "400",
        "--no-frames",
        "--quiet",
        "--out",
        str(out),
    ]
    parent = subprocess.Popen(
        command, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    children: list[int] = []
    while time.monotonic() < deadline and parent.poll() is None:
        children = descendants(parent.pid)
        if len(children) >= 3 and saved_ids(out):
            break
        time.sleep(0.1)
    assert parent.poll() is None, parent.communicate()
    children = descendants(parent.pid)
    parent.send_signal(sig)
    parent.communicate(timeout=60)
    return parent, children


def _gone_within(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(pids)


@pytest.mark.crafter
def test_sigkill_to_the_parent_takes_the_workers_with_it(tmp_path):
    parent, children = _record_then_signal(tmp_path / "c", signal.SIGKILL)
    assert parent.returncode == -signal.SIGKILL and len(children) >= 3
    assert _gone_within(children, 10) == []


@pytest.mark.crafter
def test_sigterm_stops_like_ctrl_c_and_the_run_resumes(tmp_path, capsys):
    out = tmp_path / "c"
    parent, children = _record_then_signal(out, signal.SIGTERM)
    assert parent.returncode == 130 and len(children) >= 3
    assert _gone_within(children, 10) == []
    kept = saved_ids(out)
    assert kept and committed_parts(out)
    code, out_text, _ = cli(
        "record",
        "--policy",
        "random",
        "--episodes",
        "6",
        "--max-steps",
        "400",
        "--no-frames",
        "--quiet",
        "--resume",
        "--out",
        out,
        capsys=capsys,
    )
    assert code == 0 and f"skipped {len(kept)} episode(s)" in out_text
    assert len(saved_ids(out)) == 6


# -- fuzzing: any input gives a result or a WorkbenchError ----------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from workbench.data.importers.observations import text_observation  # noqa: E402

_FIELDS = ["Step", "Health", "Position", "Inventory", "Achievements", "Local Map View (5x5)"]
_VALUES = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "inf",
            "nan",
            "1e30",
            "-0",
            "8.7",
            "99999999999999999999",
            "9" * 5000,
            "[3, 4]",
            "(1 2)",
            "wood:1, stone:2",
            "wood:",
            ":3",
            "empty",
            "none",
            "collect_wood, eat_cow",
            "0/10000",
        ]
    ),
)
_LINES = st.lists(st.tuples(st.sampled_from(_FIELDS), _VALUES).map(lambda kv: f"{kv[0]}: {kv[1]}"), max_size=8)
_FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_FUZZ
@given(lines=_LINES, noise=st.text(max_size=40))
def test_fuzz_text_observation(lines, noise):
    text = "\n".join(lines) + "\n" + noise
    try:
        observed = text_observation(text, "fuzz")
    except WorkbenchError:
        return
    assert all(0 <= v <= 2**31 - 1 for v in observed.state["inventory"].values())


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@_FUZZ
@given(
    path=st.lists(
        st.sampled_from(
            [
                "trajectories",
                0,
                "steps",
                1,
                "obs",
                "inventory",
                "wood",
                "done",
                "reward",
                "tool_calls",
                "final",
                "observation",
                "text",
                "achievements_status",
            ]
        ),
        min_size=1,
        max_size=6,
    ),
    value=_JSON,
)
def test_fuzz_rollout_reader(tmp_path_factory, path, value):
    document = json.loads(json.dumps(rollout("f", [raw_obs(), text_obs(1), raw_obs()])))
    _put(document, path, value)
    file = tmp_path_factory.mktemp("fuzz") / "r.json"
    file.write_text(json.dumps(document, allow_nan=True))
    result = import_rollouts(file, progress=False)  # never raises
    for episode in result.corpus:
        assert np.isfinite(episode.env_reward).all() and (episode.inventory >= 0).all()


@_FUZZ
@given(
    text=st.one_of(
        st.text(max_size=200),
        st.lists(
            st.tuples(
                st.sampled_from(
                    [
                        "enabled",
                        "mode",
                        "strategy",
                        "indicator_lambda",
                        "step_beta",
                        "weights",
                        "k_limits",
                        "weights.collect_wood",
                        "k_limits.collect_wood",
                    ]
                ),
                st.sampled_from(
                    [
                        "true",
                        "1e308",
                        "1.0e3",
                        "-inf",
                        "nan",
                        "[[[[",
                        "{a = 1}",
                        "'x'",
                        "3",
                        "1" + "0" * 30,
                        "9" * 5000,
                        "",
                        '"1.5"',
                    ]
                ),
            ),
            max_size=6,
        ).map(lambda kvs: "\n".join(f"{k} = {v}" for k, v in kvs)),
    ),
    suffix=st.sampled_from([".yaml", ".toml"]),
)
def test_fuzz_config_readers(tmp_path_factory, text, suffix):
    path = tmp_path_factory.mktemp("cfg") / f"c{suffix}"
    path.write_text(text if suffix == ".toml" else text.replace(" = ", ": "))
    try:
        config = RewardConfig.from_file(path)
    except WorkbenchError:
        return
    assert all(abs(w) <= 1e9 for w in config.weights.values())


@pytest.mark.storage_contract
@_FUZZ
@given(value=_JSON, key=st.sampled_from(["format", "schema_version", "layout", "tables", "extra"]))
def test_fuzz_corpus_index_reader(tmp_path_factory, value, key):
    from workbench.data.storage import load_corpus

    root = _saved_sample(tmp_path_factory.mktemp("idx"))
    document = json.loads((root / "corpus.json").read_text())
    document[key] = value
    (root / "corpus.json").write_text(json.dumps(document))
    try:
        corpus = load_corpus(root)
        [episode.n_decisions for episode in corpus]
    except WorkbenchError:
        pass


# -- small helpers --------------------------------------------------------------------------
def _write(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document))
    return path


def _saved_sample(tmp: Path) -> Path:
    """A copy of the shipped sample corpus folder under ``tmp``."""
    target = tmp / "sample"
    shutil.copytree(REPO / "workbench" / "data" / "shipped" / "sample", target)
    return target


def _put(document: object, path: list, value: object) -> None:
    """Set ``document[path...] = value`` as far as the path exists (a fuzzed edit of a valid file)."""
    node = document
    for key in path[:-1]:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
        else:
            break
    last = path[-1]
    if isinstance(node, dict) and isinstance(last, str):
        node[last] = value
    elif isinstance(node, list) and isinstance(last, int) and last < len(node):
        node[last] = value
