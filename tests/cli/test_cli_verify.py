"""``workbench verify`` against what ran, ``--producer``, producers in ``corpus info`` and ``audit``,
and ``workbench app`` on a busy port: exit codes and the lines the user reads."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import yaml
from helpers import REPO

from workbench.cli import main
from workbench.data.importers.producers import WEIGHTS_IGNORED
from workbench.data.sample import sample_imports_path

FIXTURE = REPO / "tests" / "fixtures" / "synth-ai-0.2.24"
PER_ACHIEVEMENT = "newest_per_achievement_policy_lambda_half"


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _imported(tmp_path: Path, capsys, source: Path, *extra: str) -> Path:
    corpus = tmp_path / "corpus"
    code, out, _ = _run(capsys, "import", "rollouts", source, "--out", corpus, "--quiet", *extra)
    assert code == 0, out
    return corpus


def test_verify_that_checked_nothing_exits_3_with_its_reason(tmp_path, capsys):
    corpus = _imported(tmp_path, capsys, FIXTURE / "responses")
    code, out, _ = _run(capsys, "verify", corpus)
    assert code == 3
    assert out.startswith("checked 0 logged decision(s)")
    (reason,) = [line for line in out.splitlines() if line.startswith("nothing verified:")]
    assert "--request or --config" in reason
    assert "every logged decision reproduced" not in out


def test_verify_with_the_request_checks_every_decision_and_names_the_ignored_weights(tmp_path, capsys):
    corpus = _imported(tmp_path, capsys, FIXTURE / "responses" / f"{PER_ACHIEVEMENT}.json")
    code, out, _ = _run(capsys, "verify", corpus, "--request", FIXTURE / "requests" / f"{PER_ACHIEVEMENT}.json")
    assert code == 0, out
    assert "checked 12 logged decision(s) in 1 episode(s)" in out
    assert "12 decision(s) checked against the reward of synth-ai 0.2.16-0.2.24" in out
    assert sum(WEIGHTS_IGNORED in line for line in out.splitlines()) == 1
    assert out.rstrip().endswith("every logged decision reproduced")


def test_verify_with_a_config_file(tmp_path, capsys):
    """The same rollout with the run's table given as a YAML config (lambda 0.5)."""
    corpus = _imported(tmp_path, capsys, FIXTURE / "responses" / f"{PER_ACHIEVEMENT}.json")
    table = json.loads((FIXTURE / "requests" / f"{PER_ACHIEVEMENT}.json").read_text())["policy"]["config"]
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(table["step_rewards"]), encoding="utf-8")
    code, out, _ = _run(capsys, "verify", corpus, "--config", config)
    assert code == 0 and "checked 12 logged decision(s)" in out and WEIGHTS_IGNORED in out


def test_verify_with_a_request_that_holds_no_table_is_one_line_exit_2(tmp_path, capsys):
    corpus = _imported(tmp_path, capsys, FIXTURE / "responses" / f"{PER_ACHIEVEMENT}.json")
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"policy": {"config": {}}, "env": {"config": {}}}))
    code, _, err = _run(capsys, "verify", corpus, "--request", request)
    assert code == 2 and err.count("\n") == 1 and "no step_rewards table" in err and str(request) in err


def test_verify_with_a_request_nested_100000_deep_is_one_line_exit_2(tmp_path, capsys):
    corpus = _imported(tmp_path, capsys, FIXTURE / "responses" / f"{PER_ACHIEVEMENT}.json")
    request = tmp_path / "request.json"
    request.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = _run(capsys, "verify", corpus, "--request", request)
    assert code == 2 and err.count("\n") == 1 and str(request) in err and "not a readable JSON rollout request" in err


def test_verify_of_0_2_14_rollouts_is_unchanged(tmp_path, capsys):
    corpus = _imported(tmp_path, capsys, sample_imports_path() / "taskapp")
    code, out, _ = _run(capsys, "verify", corpus)
    assert code == 0 and "checked 220 logged decision(s) in 4 episode(s)" in out
    assert WEIGHTS_IGNORED not in out


def test_an_unknown_producer_is_one_line_exit_2(tmp_path, capsys):
    code, out, err = _run(
        capsys, "import", "rollouts", FIXTURE / "responses", "--out", tmp_path / "c", "--producer", "synth-ai==0.3.1"
    )
    assert code == 2 and out == "" and err.startswith("workbench: error: --producer 'synth-ai==0.3.1'")
    assert not (tmp_path / "c").exists()


def test_corpus_info_names_the_producers(tmp_path, capsys):
    corpus = _imported(tmp_path, capsys, FIXTURE / "responses")
    code, out, _ = _run(capsys, "corpus", "info", corpus)
    assert code == 0
    assert "producer synth-ai 0.2.16-0.2.24: 3 episode(s) (indicator-only reward" in out


def test_audit_says_a_per_achievement_config_was_not_what_the_indicator_runs_were_paid(tmp_path, capsys):
    newest = _imported(tmp_path / "a", capsys, FIXTURE / "responses")
    older = _imported(tmp_path / "b", capsys, sample_imports_path() / "taskapp")
    per_achievement = REPO / "configs" / "upstream_complex.yaml"
    assert yaml.safe_load(per_achievement.read_text())["strategy"] == "per_achievement"
    _, out, _ = _run(capsys, "audit", newest, "--config", per_achievement)
    assert sum(WEIGHTS_IGNORED in line for line in out.splitlines()) == 1
    _, out, _ = _run(capsys, "audit", older, "--config", per_achievement)
    assert WEIGHTS_IGNORED not in out
    # --json carries it as a note (a note never changes the exit status), and only where it applies
    code_text, _, _ = _run(capsys, "audit", newest, "--config", per_achievement)
    code_json, out, _ = _run(capsys, "audit", newest, "--config", per_achievement, "--json")
    notes = json.loads(out)["notes"]
    assert len(notes) == 1 and WEIGHTS_IGNORED in notes[0] and code_json == code_text
    _, out, _ = _run(capsys, "audit", older, "--config", per_achievement, "--json")
    assert "notes" not in json.loads(out)


def test_score_names_the_weights_the_indicator_runs_never_saw(tmp_path, capsys):
    corpus = _imported(tmp_path, capsys, FIXTURE / "responses")
    code, out, _ = _run(capsys, "score", "--config", REPO / "configs" / "recommended.yaml", corpus)
    assert code == 0 and sum(WEIGHTS_IGNORED in line for line in out.splitlines()) == 1
    consistent = tmp_path / "consistent.yaml"
    consistent.write_text(yaml.safe_dump({"enabled": True, "mode": "decision_stepwise", "strategy": "consistent"}))
    code, out, _ = _run(capsys, "score", "--config", consistent, corpus)
    assert code == 0 and WEIGHTS_IGNORED not in out


def test_app_on_a_busy_port_is_one_line_exit_2_before_any_url():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "workbench", "app", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=REPO,
        )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and "token=" not in done.stderr
    assert done.stderr.splitlines() == [
        f"workbench: error: --port {port}: cannot serve on 127.0.0.1:{port}: "
        "already in use (another server listens there); pick another --port"
    ]
