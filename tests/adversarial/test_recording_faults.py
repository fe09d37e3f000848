"""Recording under faults: hung or raising policies, full disks, signals to the parent and its workers."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers.hostile import REPO, WORKBENCH, alive, cli, committed_parts, descendants, one_line_error, saved_ids

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
