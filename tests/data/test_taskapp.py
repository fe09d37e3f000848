"""Against the real producer: synth-ai 0.2.14's Crafter task app, served by synth-ai's own CLI.

The module builds (once, cached) a venv with ``synth-ai==0.2.14``, serves
``grpo-crafter-task-app`` on a free loopback port, answers its policy's chat-completion calls
with a seeded stand-in (``tests/taskapp/standin.py``) and posts the rollouts of
``tests/taskapp/cases.py``. Then it checks that the workbench imports those responses, labels
their counts, reproduces every logged stepwise reward (``verify_logged`` and the CLI), and that
re-scoring under other configs equals the task app's own function (``compute_stepwise_reward``)
applied to the server's states wherever those states are known. The ``loose_*`` cases are
answered loosely (``standin.LOOSE_FORMS``): the actions kept per decision must be those the
server's own log says it played. The server traces into a SQLite database; the same rollouts read
from it must hold the same states, actions, calls and messages, with counts labelled estimated.

Skipped only when the venv is not built yet and the package index cannot be reached.
Run: ``PYTHONPATH=$PWD .venv/bin/python -m pytest tests/data/test_taskapp.py -m taskapp -q``
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers.episodes import assert_imports_alike
from taskapp.cases import CASES
from taskapp.produce import Produced, produce
from taskapp.standin import LOOSE_FORMS
from taskapp.truth import ServerEpisode, played_from_log, reference_stepwise, server_episode
from taskapp.venv import RegistryUnreachable, ensure_venv

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import Corpus
from workbench.data.importers import ImportResult, import_rollouts, import_traces
from workbench.data.importers.toolcalls import NORMALISATIONS
from workbench.data.importers.traces import read_trace_sessions, trace_sessions
from workbench.scoring import score, verify_logged

pytestmark = pytest.mark.taskapp

REPO = Path(__file__).resolve().parents[2]
#: Configs to re-score under: the shipped recommendation, per_achievement with k-limit 0
#: (unlimited) everywhere it is set, and consistent with a lambda the rollouts did not use.
RESCORE_CONFIGS = {
    "recommended": RewardConfig.from_file(REPO / "configs" / "recommended.yaml"),
    "per_achievement_k0": RewardConfig.from_dict(
        {
            "enabled": True,
            "mode": "decision_stepwise",
            "strategy": "per_achievement",
            "indicator_lambda": 2.0,
            "weights": {"collect_wood": 0.25, "collect_drink": 0.1, "collect_sapling": 0.5, "place_table": 3.0},
            "k_limits": {"collect_wood": 0, "collect_drink": 0, "collect_sapling": 0, "place_table": 0},
        }
    ),
    "consistent_lambda_0.3": RewardConfig.from_dict(
        {"enabled": True, "mode": "decision_stepwise", "strategy": "consistent", "indicator_lambda": 0.3}
    ),
}


CONSISTENT = {"enabled": True, "mode": "decision_stepwise", "strategy": "consistent"}


def _report(request: pytest.FixtureRequest, line: str) -> None:
    """Print past pytest's capture (timings belong in the run's output)."""
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if capture is None:
        print(line)
        return
    with capture.global_and_fixture_disabled():
        print(line, flush=True)


@pytest.fixture(scope="module")
def produced(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Produced:
    """The real task app's responses to every case, saved as ``<case>.json``."""
    started = time.monotonic()
    try:
        venv = ensure_venv()
    except RegistryUnreachable as error:
        pytest.skip(f"synth-ai 0.2.14 is not in its cached venv yet and cannot be installed: {error}")
    build = f"built in {venv.build_seconds:.0f} s" if venv.build_seconds is not None else "reused"
    after_build = time.monotonic()
    result = produce(
        tmp_path_factory.mktemp("taskapp_rollouts"),
        tmp_path_factory.mktemp("taskapp_server"),
        venv=venv,
        trace=tmp_path_factory.mktemp("taskapp_trace"),
    )
    rollouts = sum(v for k, v in result.seconds.items() if k.startswith("rollout:"))
    _report(
        request,
        f"\n[taskapp] venv {venv.root}: {build}; task app healthy after {result.seconds['server_start']:.1f} s; "
        f"{len(result.files)} rollouts in {rollouts:.1f} s; produced in {time.monotonic() - after_build:.1f} s",
    )

    def total() -> None:
        _report(
            request,
            f"[taskapp] module total {time.monotonic() - started:.1f} s "
            f"({time.monotonic() - after_build:.1f} s after the venv was ready)",
        )

    request.addfinalizer(total)
    return result


@pytest.fixture(scope="module")
def episodes(produced: Produced) -> dict[str, ServerEpisode]:
    """The server's states per case, read from the responses without the workbench's importer,
    with the actions each decision played as the server's log says."""
    seeds = {c.name: c.seed for c in CASES}
    return {
        name: server_episode(json.loads(path.read_text()), played_from_log(produced.server_log, seeds[name]))
        for name, path in produced.files.items()
    }


@pytest.fixture(scope="module")
def imported(produced: Produced) -> ImportResult:
    return import_rollouts(next(iter(produced.files.values())).parent, progress=False)


@pytest.fixture(scope="module")
def traced(produced: Produced) -> ImportResult:
    assert produced.trace_db is not None
    return import_traces(produced.trace_db, progress=False)


def _logged_config(produced: Produced, case: str) -> RewardConfig:
    request = produced.requests[case]
    for section in ("policy", "env"):
        if "step_rewards" in request[section]["config"]:
            return RewardConfig.from_dict(request[section]["config"]["step_rewards"])
    raise AssertionError(f"{case}: the request has no step_rewards")


def test_the_rollouts_cover_the_cases(produced: Produced, episodes: dict[str, ServerEpisode]) -> None:
    """Both config places, both strategies, a misspelled weight, k 0, lambda 0.5 and omitted;
    the move_right+do rewrite and counts that rise more than once actually happened."""
    tables = {
        name: (section, r[section]["config"]["step_rewards"])
        for name, r in produced.requests.items()
        for section in ("policy", "env")
        if "step_rewards" in r[section]["config"]
    }
    assert {section for section, _ in tables.values()} == {"policy", "env"}
    assert {t["strategy"] for _, t in tables.values()} == {"consistent", "per_achievement"}
    assert any("craft_wood_pickaxe" in t.get("weights", {}) for _, t in tables.values())
    assert any(0 in t.get("k_limits", {}).values() for _, t in tables.values())
    assert {t.get("indicator_lambda") for _, t in tables.values()} >= {0.5, None}
    rewritten = 0
    for name, path in produced.files.items():
        if name.startswith("loose"):
            continue  # answered loosely: see test_loose_answers_are_played_as_the_server_played_them
        response = json.loads(path.read_text())
        assert response["run_id"] == name and response["aborted"] is False
        (trajectory,) = response["trajectories"]
        case = next(c for c in CASES if c.name == name)
        assert len(trajectory["steps"]) == case.decisions == episodes[name].n_decisions
        for step in trajectory["steps"]:
            said = json.loads(
                step["info"]["meta"]["raw_response"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
            )
            if said["actions"] == ["move_right", "do"]:
                assert step["tool_calls"] == [{"tool_name": "interact_many", "arguments": {"actions": ["move_right"]}}]
                rewritten += 1
        if episodes[name].counts is not None:
            rises = np.array([list(c.values()) for c in episodes[name].counts])[-1]
            assert rises.max() >= 2, f"{name}: no achievement count rose more than once"
    assert rewritten >= 4
    assert "[task:server] Starting 'grpo-crafter-task-app'" in produced.server_log
    assert "[task:tracing] enabled" in produced.server_log
    assert len(produced.standin_calls) == sum(c.decisions for c in CASES)  # one stand-in call per decision


def test_the_task_app_function_over_the_server_states_reproduces_its_log(
    produced: Produced, episodes: dict[str, ServerEpisode]
) -> None:
    """The ground truth the other tests use: ``compute_stepwise_reward`` over the states read
    from the responses, under the config each rollout ran with, gives exactly what the server
    logged (every ``info.stepwise`` and ``decision_samples`` entry, keys, order and float bits)."""
    for name, episode in episodes.items():
        reference = reference_stepwise(episode, _logged_config(produced, name))
        for i, (info, sample, _stats) in enumerate(reference):
            assert json.dumps(info) == json.dumps(episode.logged_stepwise[i]), f"{name} decision {i}"
            assert json.dumps(sample) == json.dumps(episode.decision_samples[i]), f"{name} decision {i}"


def test_loose_answers_are_played_as_the_server_played_them(
    imported: ImportResult, produced: Produced, episodes: dict[str, ServerEpisode]
) -> None:
    """Every loose form happened; each decision's kept actions are what the server's log says it
    played, and as many as the text's step counter advanced; the report counts the normalised
    decisions of each loose file and names the first."""
    loose = [c for c in CASES if c.name.startswith("loose")]
    assert loose
    loose_calls = [c for c in produced.standin_calls if "loose" in c["cid"] and c["call"] % 3 != 2]
    assert len(loose_calls) >= len(LOOSE_FORMS) * len(loose)  # every form answered in every loose case
    for case in loose:
        episode, truth = imported.corpus[case.name], episodes[case.name]
        assert len(truth.actions) == case.decisions
        assert [list(a) for a in episode.actions] == truth.actions, case.name
        response = json.loads(produced.files[case.name].read_text())
        texts = [s["obs"]["text"] for s in response["trajectories"][0]["steps"]]
        texts.append(response["trajectories"][0]["final"]["observation"]["text"])
        steps = [int(t.split("Step: ")[1].split("/")[0]) for t in texts]
        assert [b - a for a, b in zip(steps, steps[1:])] == [len(a) for a in truth.actions], case.name
        assert [json.loads(c) for c in episode.calls] == [s["tool_calls"] for s in response["trajectories"][0]["steps"]]
        notes = {note for _, kinds in episode.metadata["normalised_calls"] for note in kinds}
        assert notes >= {"json_string", "noop", "unknown", "clipped", "cut"}, notes
        (decisions,) = [d for f, d in imported.normalised.items() if f.endswith(f"{case.name}.json")]
        assert len(decisions) == len(episode.metadata["normalised_calls"]) >= case.decisions // 2
    report = str(imported)
    assert f"{loose[0].name} decision 1" in report and NORMALISATIONS["cut"] in report
    assert "have estimated counts" in report and "per_achievement under-pays" in report


def test_the_servers_rollouts_and_tampered_copies_import_alike_read_by_fields_or_whole(
    produced: Produced, tmp_path: Path
) -> None:
    """The server's responses, loose answers included, import the same whether each is read for
    the fields the import uses (``rollout_fields``) or parsed whole, and so do tampered copies:
    cut short, NaN where nothing is read, a step that is a string, a 25-digit integer in the
    request, a byte order mark, a lone surrogate in what the model said."""
    assert assert_imports_alike(next(iter(produced.files.values())).parent).ok
    texts = [path.read_text() for path in produced.files.values()]

    def put(text: str, key: str, added: str) -> str:  # ``added`` first in the first ``key`` object
        return re.sub(rf'"{key}":\s*\{{', lambda m: m.group(0) + added + ",", text, count=1)

    tampered = {
        "cut": texts[0][: len(texts[0]) // 2],
        "nan": put(texts[1], "inference_request", '"junk": NaN'),
        "string_step": re.sub(r'"steps":\s*\[', lambda m: m.group(0) + '"a step",', texts[2], count=1),
        "long_integer": put(texts[0], "inference_request", '"n": 1234567890123456789012345'),
        "bom": "\ufeff" + texts[1],
        "surrogate": put(texts[2], "raw_response", '"x": "\\ud800"'),
    }
    for name, text in tampered.items():
        assert text not in texts, name  # each edit took place
        (tmp_path / f"{name}.json").write_text(text)
    result = assert_imports_alike(tmp_path)
    assert {issue.file.rsplit("/", 1)[-1] for issue in result.errors} >= {"cut.json", "string_step.json", "bom.json"}


def test_import_reads_every_rollout(imported: ImportResult, produced: Produced) -> None:
    assert imported.ok, str(imported)
    assert sorted(imported.corpus.ids) == sorted(produced.files)
    assert imported.corpus.n_decisions == sum(c.decisions for c in CASES)


def test_import_states_are_the_server_states(imported: ImportResult, episodes: dict[str, ServerEpisode]) -> None:
    """Inventories and status of every state as the server had them; counts too wherever the
    rollout logged them (per_achievement)."""
    for name, truth in episodes.items():
        episode = imported.corpus[name]
        expected_inventory = np.array([[s[item] for item in INVENTORY_ITEMS] for s in truth.inventory])
        assert np.array_equal(episode.inventory, expected_inventory), name
        assert np.array_equal(
            episode.achievement_status, np.array([[s[a] for a in ACHIEVEMENTS] for s in truth.status])
        ), name
        assert [list(a) for a in episode.actions] == truth.actions, name
        if truth.counts is not None:
            expected_counts = np.array([[c[a] for a in ACHIEVEMENTS] for c in truth.counts])
            differ = [
                (int(i), ACHIEVEMENTS[j], int(episode.achievement_counts[i, j]), int(expected_counts[i, j]))
                for i, j in np.argwhere(episode.achievement_counts != expected_counts)
            ]
            assert not differ, (
                f"{name}: {len(differ)} counts differ, first (state, achievement, imported, server): {differ[:4]}"
            )


def test_import_labels_where_counts_come_from(imported: ImportResult, episodes: dict[str, ServerEpisode]) -> None:
    """Per_achievement text rollouts: counts rebuilt exactly from the logged deltas ("logged");
    consistent ones: estimated from the status ("estimated")."""
    index = imported.corpus.index.set_index("episode") if "episode" in imported.corpus.index else imported.corpus.index
    for name, truth in episodes.items():
        expected = "logged" if truth.strategy == "per_achievement" else "estimated"
        assert imported.corpus[name].metadata.get("counts") == expected, name
        assert index.loc[name, "counts"] == expected, name


def test_verify_logged_reproduces_every_decision(imported: ImportResult) -> None:
    mismatches = verify_logged(imported.corpus)
    assert mismatches.attrs["decisions_checked"] == sum(c.decisions for c in CASES)
    assert not mismatches.attrs["skipped"] and not mismatches.attrs["unchecked"]
    assert mismatches.empty, (
        "\n" + mismatches.groupby("episode").size().to_string() + "\n" + mismatches.head(10).to_string()
    )


@pytest.mark.parametrize("config_name", list(RESCORE_CONFIGS))
def test_rescoring_equals_the_task_app_function(
    config_name: str, imported: ImportResult, episodes: dict[str, ServerEpisode]
) -> None:
    """Under another config, the workbench's rewards for each episode equal the task app's own
    function over the server's states, wherever those are known: all rollouts under consistent,
    per_achievement rollouts (exact counts) under per_achievement."""
    config = RESCORE_CONFIGS[config_name]
    compared = 0
    for name, truth in episodes.items():
        if config.effective_strategy == "per_achievement" and truth.counts is None:
            continue  # counts unknown: the reference itself cannot be computed
        expected = [stats["reward"] for _info, _sample, stats in reference_stepwise(truth, config)]
        got = score(Corpus([imported.corpus[name]]), config).reward.tolist()
        assert got == expected, f"{name} under {config_name}: first differing decision " + str(
            next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
        )
        compared += 1
    assert compared >= 2


def test_cli_imports_and_verifies(produced: Produced, tmp_path: Path) -> None:
    """``workbench import rollouts`` then ``workbench verify`` on the saved files, exit code 0."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    folder = next(iter(produced.files.values())).parent
    corpus = tmp_path / "corpus"
    cli = [sys.executable, "-m", "workbench"]
    imported = subprocess.run(
        [*cli, "import", "rollouts", str(folder), "--out", str(corpus), "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert f"imported {len(CASES)} episode(s), {sum(c.decisions for c in CASES)} decision(s)" in imported.stdout
    verified = subprocess.run(
        [*cli, "verify", str(corpus)], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "every logged decision reproduced" in verified.stdout


def test_the_trace_database_holds_the_same_rollouts(traced: ImportResult, imported: ImportResult) -> None:
    """One episode per session; states, actions, calls, messages, views and Crafter's rewards
    equal the JSON import of the same rollouts; counts are labelled estimated."""
    assert traced.ok, str(traced)
    assert sorted(traced.corpus.ids) == sorted(imported.corpus.ids)
    for episode in traced.corpus:
        same = imported.corpus[episode.id]
        assert np.array_equal(episode.inventory, same.inventory), episode.id
        assert np.array_equal(episode.achievement_status, same.achievement_status), episode.id
        assert np.array_equal(episode.player_pos, same.player_pos), episode.id
        assert episode.actions == same.actions, episode.id
        assert episode.calls == same.calls and episode.messages == same.messages, episode.id
        assert episode.views == same.views, episode.id
        assert episode.env_reward.tolist() == same.env_reward.tolist(), episode.id
        assert episode.metadata["counts"] == "estimated" and episode.metadata["source"] == "trace"
    assert "have estimated counts" in str(traced)


def test_rescoring_the_traces_under_consistent_equals_the_task_app(
    traced: ImportResult, episodes: dict[str, ServerEpisode]
) -> None:
    """Consistent reads only the status: the trace episodes re-score exactly as the task app's
    function over the server's states, under the recorded lambda and another."""
    for config in (
        RESCORE_CONFIGS["consistent_lambda_0.3"],
        RewardConfig.from_dict({**CONSISTENT, "indicator_lambda": 1.0}),
    ):
        for name, truth in episodes.items():
            expected = [stats["reward"] for _info, _sample, stats in reference_stepwise(truth, config)]
            assert score(Corpus([traced.corpus[name]]), config).reward.tolist() == expected, name


def test_reading_the_database_again_adds_only_new_sessions(produced: Produced) -> None:
    """A follower's second read with the ids it holds costs one listing query and reads nothing."""
    assert produced.trace_db is not None
    sessions = trace_sessions(produced.trace_db)
    assert all(s.finished for s in sessions) and len(sessions) == len(CASES)
    first = read_trace_sessions(produced.trace_db, skip={CASES[0].name})
    assert sorted(first.imported) == sorted(c.name for c in CASES[1:]) and not first.errors
    again = read_trace_sessions(produced.trace_db, skip={s.session_id for s in sessions})
    assert again.imported == [] and again.skipped == len(CASES) and not again.running


def test_cli_imports_the_trace_database_incrementally(produced: Produced, tmp_path: Path) -> None:
    """``workbench import traces DB --into CORPUS --config FILE`` twice: the second adds nothing."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    corpus = tmp_path / "corpus"
    command = [sys.executable, "-m", "workbench", "import", "traces", str(produced.trace_db), "--into", str(corpus)]
    command += ["--config", str(REPO / "configs" / "recommended.yaml"), "--quiet"]
    runs = [
        subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False) for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stdout + runs[0].stderr
    assert f"imported {len(CASES)} episode(s)" in runs[0].stdout and "estimated counts" in runs[0].stdout
    assert "imported 0 episode(s)" in runs[1].stdout and f"{len(CASES)} session(s) already imported" in runs[1].stdout
