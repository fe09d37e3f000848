"""The adversarial tests' tools: the CLI run in-process, minimal hostile rollouts, a full disk
and a read-only folder (tmpfs mounted by the test), process trees read from /proc."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import REPO
from workbench.cli import main

SAMPLE_ROLLOUTS = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "rollouts"
SAMPLE_RECORDER = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "recorder"
RECOMMENDED = REPO / "configs" / "recommended.yaml"
WORKBENCH = [sys.executable, "-m", "workbench"]


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
        {
            "obs": obs,
            "tool_calls": [{"tool": "interact_many", "args": {"actions": ["noop"]}}],
            "reward": 0.0,
            "done": False,
        }
        for obs in observations[:-1]
    ]
    steps[-1].update(step_fields)
    return {"run_id": run_id, "trajectories": [{"steps": steps, "final": {"observation": observations[-1]}}]}


def good_rollout(run_id: str = "good") -> dict:
    return rollout(run_id, [text_obs(0), text_obs(1), text_obs(2)])


def stamps() -> dict[str, tuple[int, int, int]]:
    """(size, mtime, mode) of every file of the repository's data, configs and tests folders."""
    watched = [REPO / "workbench" / "data", REPO / "configs", REPO / "tests" / "data"]
    return {
        str(p): (p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_mode)
        for folder in watched
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


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


def write_json(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document))
    return path


def saved_sample(tmp: Path) -> Path:
    """A copy of the shipped sample corpus folder under ``tmp``."""
    target = tmp / "sample"
    shutil.copytree(REPO / "workbench" / "data" / "shipped" / "sample", target)
    return target


def put(document: object, path: list, value: object) -> None:
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


def python_process(code: str) -> subprocess.Popen:
    """A fresh interpreter running ``code`` (dedented) with this checkout and the tests on its path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
