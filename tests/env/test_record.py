"""RecordEpisodes in sync and async vector envs: every episode lands once, its rewards equal workbench scoring;
TensorBoard series read back equal the scores."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv
from helpers import REPO

import workbench.env  # noqa: F401  (registers the env id)
from workbench.core.config import RewardConfig
from workbench.data.storage import load_corpus
from workbench.env import ENV_ID, RecordEpisodes, TensorBoardSeries, read_scalars
from workbench.errors import EnvError
from workbench.scoring import KIND_COLUMNS, score

pytestmark = pytest.mark.crafter
CONFIG = REPO / "configs" / "recommended.yaml"
N_ENVS = 2


def make(corpus: Path, index: int, tensorboard: Path | None = None):
    def build() -> gymnasium.Env:
        env = gymnasium.make(ENV_ID, config=str(CONFIG), length=60)
        return RecordEpisodes(env, corpus, name=f"env{index}", num_envs=N_ENVS, tensorboard=tensorboard)

    return build


def play(vector: gymnasium.vector.VectorEnv, steps: int) -> tuple[dict[str, float], dict[int, float], float]:
    """Random actions; per finished episode id its summed reward, per env every reward summed."""
    vector.action_space.seed(3)
    vector.reset(seed=[11, 12])
    running = np.zeros(N_ENVS)
    totals: dict[int, float] = defaultdict(float)
    finished: dict[str, float] = {}
    rewarded = 0.0
    for _ in range(steps):
        _, reward, terminated, truncated, info = vector.step(vector.action_space.sample())
        running += reward
        rewarded += float(np.abs(reward).sum())
        for i in range(N_ENVS):
            totals[i] += float(reward[i])
            if terminated[i] or truncated[i]:
                assert info["_recorded_episode"][i]
                finished[str(info["recorded_episode"][i])] = running[i]
                running[i] = 0.0
    vector.close()
    return finished, totals, rewarded


@pytest.mark.parametrize("vector_class", [SyncVectorEnv, AsyncVectorEnv])
def test_vector_envs_record_every_episode_with_the_rewards_scoring_gives(tmp_path: Path, vector_class) -> None:
    corpus = tmp_path / "corpus"
    vector = vector_class([make(corpus, i) for i in range(N_ENVS)])
    finished, totals, rewarded = play(vector, 150)
    assert rewarded > 0  # the comparison below is not between zeros only
    saved = load_corpus(corpus)
    scores = score(saved, RewardConfig.from_file(CONFIG)).episodes.set_index("episode")
    assert len(saved.ids) == len(set(saved.ids))
    for episode_id, paid in finished.items():  # the env's per-step rewards, summed in step order
        assert scores.loc[episode_id, "reward_sum"] == pytest.approx(paid, abs=1e-9)
    for i in range(N_ENVS):  # nothing lost: the abandoned last episodes are in the corpus too
        mine = [e for e in saved.ids if e.startswith(f"env{i}-")]
        assert scores.loc[mine, "reward_sum"].sum() == pytest.approx(totals[i], abs=1e-9)
        # autoreset after each end: 150 steps = decisions + one reset step per finished episode
        ended = sum(1 for e in finished if e.startswith(f"env{i}-"))
        assert scores.loc[mine, "decisions"].sum() == 150 - ended
    steps = [saved.episode_extras(k).metadata["training_step"] for k in range(len(saved))]
    assert all(isinstance(s, int) and s % N_ENVS == 0 for s in steps)


def test_tensorboard_series_read_back_equal_the_scores(tmp_path: Path) -> None:
    corpus, logdir = tmp_path / "corpus", tmp_path / "tb"
    vector = SyncVectorEnv([make(corpus, i, logdir / f"env{i}") for i in range(N_ENVS)])
    play(vector, 130)
    saved = load_corpus(corpus)
    scalars = read_scalars(logdir)
    config = RewardConfig.from_file(CONFIG)
    table = score(saved, config).episodes.set_index("episode")
    components = score(saved, config).components
    steps = {e: saved.episode_extras(k).metadata["training_step"] for k, e in enumerate(saved.ids)}
    for episode_id in saved.ids:
        env = episode_id.split("-")[0]
        mine = scalars[(scalars["step"] == steps[episode_id]) & scalars["file"].str.startswith(f"{env}/")]
        values = dict(zip(mine["tag"], mine["value"]))
        # float32 in the event file
        assert values["env/return"] == pytest.approx(table.loc[episode_id, "reward_sum"], rel=1e-6, abs=1e-6)
        assert values["episode/decisions"] == table.loc[episode_id, "decisions"]
        kinds = components[components["episode"] == episode_id].groupby("kind", observed=False)["scaled"].sum()
        for kind, column in KIND_COLUMNS.items():
            assert values[f"env/{column}"] == pytest.approx(float(kinds.get(kind, 0.0)), rel=1e-6, abs=1e-6)


def test_series_without_training_steps_use_arrival(tmp_path: Path) -> None:
    from helpers.episodes import make_episode

    from workbench.data.episodes import Corpus

    series = TensorBoardSeries(tmp_path / "tb", {"r": RewardConfig.from_file(CONFIG)})
    series.add(Corpus([make_episode("a", seed=1), make_episode("b", seed=2)]))
    series.close()
    scalars = read_scalars(tmp_path / "tb")
    assert sorted(scalars.loc[scalars["tag"] == "r/return", "step"]) == [0, 1]


def test_refuses_other_envs() -> None:
    with pytest.raises(EnvError, match="CrafterStepwiseEnv"):
        RecordEpisodes(gymnasium.make("CartPole-v1"), "unused")
