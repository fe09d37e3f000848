"""Against the real synth-ai 0.2.24 server: the newest release with the Crafter app, whose served
loop (``examples/warming_up_to_rl``) pays indicator-only, plays every action and writes no messages.

The module builds (once, cached) a venv with ``synth-ai==0.2.24`` and ``crafter``, serves
``grpo-crafter-task-app`` with ``synth-ai task-app-group serve`` (tracing on: 0.2.24 fails every
rollout without it) on a free loopback port, answers its policy with the seeded stand-in (one case
loosely) and posts ``tests/taskapp/cases.py``'s ``NEWEST_CASES``. Then: the importer tells the
producer from the responses' shape, keeps the actions the server's own log says it played (more
than 20 in a decision), ``verify`` checks every decision against the indicator-only reward with
the run's request (0 mismatches) and exits 3 without one, the "weights ignored" line appears for
the per_achievement run only, and the trace database imports every session equal to the JSON.

Skipped only when the venv is not built yet and the package index cannot be reached.
Run: ``.venv/bin/python -m pytest tests/data/test_taskapp_newest.py -m taskapp -q``
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from taskapp.cases import NEWEST_CASES
from taskapp.produce import Produced, produce
from taskapp.truth import parse_text_state, played_from_log
from taskapp.venv import NEWEST, RegistryUnreachable, ensure_venv

from workbench.cli import main
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.importers import ImportResult, import_rollouts, import_traces
from workbench.data.importers.producers import WEIGHTS_IGNORED
from workbench.scoring import verify

pytestmark = pytest.mark.taskapp


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> Produced:
    """The real 0.2.24 server's responses to every case, and its trace database."""
    try:
        venv = ensure_venv(version=NEWEST)
    except RegistryUnreachable as error:
        pytest.skip(f"synth-ai {NEWEST} is not in its cached venv yet and cannot be installed: {error}")
    return produce(
        tmp_path_factory.mktemp("newest_rollouts"),
        tmp_path_factory.mktemp("newest_server"),
        NEWEST_CASES,
        venv=venv,
        trace=tmp_path_factory.mktemp("newest_trace"),
        version=NEWEST,
    )


@pytest.fixture(scope="module")
def imported(produced: Produced) -> ImportResult:
    return import_rollouts(next(iter(produced.files.values())).parent, progress=False)


def _table(produced: Produced, name: str) -> dict:
    request = produced.requests[name]
    return request["policy"]["config"].get("step_rewards") or request["env"]["config"]["step_rewards"]


def test_the_server_is_the_indicator_loop(produced: Produced) -> None:
    """What the spec says 0.2.24 serves: no summary, four stepwise keys, a structured trace."""
    assert "[task:server] Starting 'grpo-crafter-task-app'" in produced.server_log
    for name, path in produced.files.items():
        response = json.loads(path.read_text())
        assert response["metrics"]["details"] == {} and isinstance(response["trace"], dict), name
        steps = response["trajectories"][0]["steps"]
        case = next(c for c in NEWEST_CASES if c.name == name)
        assert len(steps) == case.decisions
        assert {tuple(s["info"]["stepwise"]) for s in steps} == {
            ("decision_index", "indicator", "new_achievements", "reward")
        }


def test_import_tells_the_producer_and_keeps_every_action_played(imported: ImportResult, produced: Produced) -> None:
    """Actions kept = what the server's log says each decision played; some decision played more than 20."""
    assert imported.ok, str(imported)
    assert sorted(imported.corpus.ids) == sorted(produced.files)
    longest = 0
    for case in NEWEST_CASES:
        episode = imported.corpus[case.name]
        assert episode.metadata["producer"] == "synth-ai 0.2.16-0.2.24", case.name
        truth = played_from_log(produced.server_log, case.seed)
        assert [list(a) for a in episode.actions] == truth, case.name
        longest = max(longest, *map(len, truth))
    assert longest > 20


def test_verify_checks_every_decision_against_the_indicator_reward(imported: ImportResult, produced: Produced) -> None:
    for case in NEWEST_CASES:
        one = imported.corpus[[i == case.name for i in imported.corpus.ids]]
        result = verify(one, _table(produced, case.name), "request")
        assert result.decisions_checked == case.decisions and result.mismatches.empty, case.name
        assert result.weights_ignored == ([case.name] if case.strategy == "per_achievement" else [])
    assert verify(imported.corpus).decisions_checked == 0


def test_the_logged_rewards_are_lambda_times_any_unlock(produced: Produced) -> None:
    """Independently of the importer: the text states' unlocks times the request's lambda (0 when omitted)."""
    unlocks = 0
    for case in NEWEST_CASES:
        response = json.loads(produced.files[case.name].read_text())
        trajectory = response["trajectories"][0]
        texts = [s["obs"]["text"] for s in trajectory["steps"]] + [trajectory["final"]["observation"]["text"]]
        status = [parse_text_state(t)[1] for t in texts]
        factor = float(case.step_rewards.get("indicator_lambda") or 0.0)
        for i, step in enumerate(trajectory["steps"]):
            unlocked = [a for a in ACHIEVEMENTS if status[i + 1][a] and not status[i][a]]
            assert step["info"]["stepwise"]["reward"] == (factor if unlocked else 0.0), (case.name, i)
            unlocks += bool(unlocked)
    assert unlocks >= 3


def test_cli_verify_with_and_without_the_request(produced: Produced, tmp_path: Path, capsys) -> None:
    name = next(c.name for c in NEWEST_CASES if c.strategy == "per_achievement")
    corpus = tmp_path / "corpus"
    assert main(["import", "rollouts", str(produced.files[name]), "--out", str(corpus), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["verify", str(corpus)]) == 3
    assert "nothing verified:" in capsys.readouterr().out
    request = tmp_path / "request.json"
    request.write_text(json.dumps(produced.requests[name]))
    assert main(["verify", str(corpus), "--request", str(request)]) == 0
    out = capsys.readouterr().out
    assert "every logged decision reproduced" in out and WEIGHTS_IGNORED in out


def test_the_trace_database_imports_every_session_equal_to_the_json(produced: Produced, imported: ImportResult) -> None:
    assert produced.trace_db is not None
    traced = import_traces(produced.trace_db, progress=False)
    assert traced.ok, str(traced)
    assert sorted(traced.corpus.ids) == sorted(imported.corpus.ids)
    for episode in traced.corpus:
        same = imported.corpus[episode.id]
        assert episode.actions == same.actions and episode.calls == same.calls, episode.id
        assert episode.messages == same.messages and episode.views == same.views, episode.id
        assert np.array_equal(episode.inventory, same.inventory), episode.id
        assert np.array_equal(episode.achievement_status, same.achievement_status), episode.id
        assert episode.env_reward.tolist() == same.env_reward.tolist(), episode.id
        assert episode.metadata["producer"] == "synth-ai 0.2.16-0.2.24"
