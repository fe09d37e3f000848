"""RecordEpisodes under a Ctrl-C mid-episode and a TensorBoard folder that is a file."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium
import pytest
from helpers.hostile import REPO, python_process

import workbench.env  # noqa: F401  (registers the env id)
from workbench.data.storage import load_corpus
from workbench.env import ENV_ID, RecordEpisodes
from workbench.errors import OutputError

CONFIG = REPO / "configs" / "recommended.yaml"
#: The decision Ctrl-C lands in (inside Crafter's step): decisions 1..4 are whole before it.
INTERRUPTED_DECISION = 5


@pytest.mark.crafter
def test_ctrl_c_mid_episode_keeps_it_marked_truncated(tmp_path):
    corpus = tmp_path / "corpus"
    process = python_process(
        f"""
        import json, os, signal
        import gymnasium
        import workbench.env
        from workbench.env import ENV_ID, RecordEpisodes
        from workbench.errors import EnvError

        env = RecordEpisodes(gymnasium.make(ENV_ID, config={str(CONFIG)!r}, length=200), {str(corpus)!r}, name="run")
        env.reset(seed=7)
        crafter = env.unwrapped._crafter
        real_step, calls = crafter.step, [0]

        def step(action):  # a real SIGINT, delivered while Crafter steps decision {INTERRUPTED_DECISION}
            calls[0] += 1
            if calls[0] == {INTERRUPTED_DECISION}:
                os.kill(os.getpid(), signal.SIGINT)
            return real_step(action)

        crafter.step = step
        outcome = {{}}
        try:
            for _ in range(50):
                env.step(0)  # noop, one action per decision
        except KeyboardInterrupt:
            outcome["interrupted"] = True
        try:
            env.step(0)
        except EnvError as error:
            outcome["after"] = str(error)
        env.close()
        print(json.dumps(outcome))
        """
    )
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    outcome = json.loads(out.strip().splitlines()[-1])
    assert outcome["interrupted"] is True and "call reset()" in outcome["after"]
    (episode,) = list(load_corpus(corpus))
    assert episode.n_decisions == INTERRUPTED_DECISION - 1
    assert episode.metadata["end"] == "truncated"
    assert episode.metadata["interrupted"] == f"KeyboardInterrupt during decision {INTERRUPTED_DECISION}"
    assert not episode.done.any()  # it did not end in the world: nothing says it did


def test_tensorboard_given_a_file_is_named(tmp_path):
    not_a_folder = tmp_path / "runs.txt"
    not_a_folder.write_text("mine\n")
    env = gymnasium.make(ENV_ID, config=str(CONFIG), length=20)
    for target in (not_a_folder, not_a_folder / "inside"):
        with pytest.raises(OutputError, match="runs.txt"):
            RecordEpisodes(env, tmp_path / "corpus", tensorboard=target)
    assert not_a_folder.read_text() == "mine\n"
    assert not Path(tmp_path / "corpus").exists()
