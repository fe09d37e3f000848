"""The gymnasium environment with real Crafter: checker, spaces, exact rewards against workbench.score, recording."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import workbench
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACTIONS, INVENTORY_ITEMS
from workbench.core.episode_reward import score_episode
from workbench.data.policies import scripted_policy
from workbench.data.storage import load_corpus
from workbench.env import END_OF_DECISION, ENV_ID, CrafterStepwiseEnv
from workbench.errors import EnvError

pytestmark = pytest.mark.crafter

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
HEALTH = INVENTORY_ITEMS.index("health")


def _configs() -> dict[str, RewardConfig]:
    shaped = RewardConfig.from_file(CONFIGS / "upstream_shaped.yaml")
    overridden = shaped.with_changes(
        indicator_lambda=0.7,
        resource_overrides={
            "inventory": {"sapling": 0.5, "health": 0.21},
            "inventory_default": 0.013,
            "achievement_counts": {"collect_sapling": 0.3},
            "achievement_count_default": 0.11,
        },
    )
    return {
        "consistent": RewardConfig.from_file(CONFIGS / "consistent.yaml"),
        "per_achievement": shaped,
        "resource_overrides": overridden,
    }


def _play(env: CrafterStepwiseEnv, seed: int, policy=None) -> list[tuple[float, dict]]:
    """One episode: (reward, info) per decision; actions from ``policy`` or the seeded action space."""
    env.action_space.seed(seed)
    env.reset(seed=seed)
    played = []
    while True:
        action = env.encode(policy(env.policy_input())) if policy else env.action_space.sample()
        _, reward, terminated, truncated, info = env.step(action)
        played.append((reward, info))
        if terminated or truncated:
            return played


def _exact(value) -> str:
    return json.dumps(value)  # differs when keys, key order, types or float bits differ


def test_passes_gymnasium_env_checker_with_deterministic_resets():
    # The registered spec says nondeterministic (Crafter trajectories do not replay); a spec claiming
    # determinism makes the checker compare seeded resets and a first step too: they are equal.
    for kwargs, render in (({}, True), ({"actions_per_decision": 3, "observation": "dict", "length": 50}, False)):
        spec = gymnasium.spec(ENV_ID)
        strict = dataclasses.replace(spec, nondeterministic=False, kwargs={**spec.kwargs, **kwargs})
        env = gymnasium.make(strict)
        check_env(env.unwrapped, skip_render_check=not render)  # rendering is the same for both
        env.close()


def test_spaces_registration_and_action_design():
    env = gymnasium.make(ENV_ID, config=str(CONFIGS / "recommended.yaml"), actions_per_decision=4, length=20)
    inner = env.unwrapped
    assert isinstance(inner, CrafterStepwiseEnv) and inner.config == RewardConfig.from_file(
        CONFIGS / "recommended.yaml"
    )
    assert env.observation_space == gymnasium.spaces.Box(0, 255, (64, 64, 3), np.uint8)
    assert list(env.action_space.nvec) == [17, 18, 18, 18] and END_OF_DECISION == 17 == len(ACTIONS)
    assert inner.decode([5, 2, END_OF_DECISION, 3]) == ["do", "move_right"]  # entries after the first END are ignored
    assert inner.decode(inner.encode(["do", "noop", "sleep"])) == ["do", "noop", "sleep"]
    assert list(inner.encode("place_table")) == [8, 17, 17, 17]
    for bad in ([17, 0, 0, 0], [5, 2], [5, 2, 1, 18], "do"):
        with pytest.raises(EnvError, match="not in MultiDiscrete"):
            inner.decode(bad)
    with pytest.raises(EnvError, match="1..4 actions"):
        inner.encode(["do"] * 5)
    with pytest.raises(EnvError, match="unknown Crafter action"):
        inner.encode(["jump"])
    with pytest.raises(EnvError, match="before reset"):
        inner.step(inner.encode("do"))
    single = CrafterStepwiseEnv(observation="dict")
    assert single.action_space == gymnasium.spaces.Discrete(17)
    assert single.decode(np.int64(5)) == ["do"] and single.encode(["do"]) == 5
    with pytest.raises(EnvError, match="not in Discrete"):
        single.decode(17)
    obs, info = single.reset(seed=4)
    assert obs["inventory"].tolist() == [info["inventory"][item] for item in INVENTORY_ITEMS]
    assert obs["image"].dtype == np.uint8 and obs in single.observation_space and info["seed"] == 4
    with pytest.raises(EnvError, match="actions_per_decision"):
        CrafterStepwiseEnv(actions_per_decision=0)
    with pytest.raises(EnvError, match="length"):
        CrafterStepwiseEnv(length=0)
    with pytest.raises(EnvError, match="record_frames=True needs"):
        CrafterStepwiseEnv(record_frames=True)
    with pytest.warns(UserWarning, match="not active"):
        inactive = CrafterStepwiseEnv({"strategy": "per_achievement"})  # read as the task app does: enabled False
    assert inactive.config.enabled is False and inactive.config.effective_strategy == "per_achievement"
    # No config is the named config consistent (shaping on, consistent, lambda 1); a name picks one.
    assert CrafterStepwiseEnv().config == RewardConfig(strategy="consistent", indicator_lambda=1.0)
    assert CrafterStepwiseEnv(config="per_achievement").config.effective_strategy == "per_achievement"


def test_seeding_reset_worlds_and_reset_without_seed():
    env = CrafterStepwiseEnv()
    first, info = env.reset(seed=11)
    second, info_2 = env.reset()  # the next world of the same crafter.Env
    assert (info["seed"], info["crafter_episode"], info_2["seed"], info_2["crafter_episode"]) == (11, 1, 11, 2)
    again, _ = env.reset(seed=11)
    assert np.array_equal(first, again) and not np.array_equal(first, second)
    assert np.array_equal(second, env.reset()[0])
    assert not np.array_equal(first, env.reset(seed=12)[0])


def test_rewards_equal_workbench_score_exactly_for_three_configs_and_k_1_and_3():
    shaped_returns = []
    for name, config in _configs().items():
        played_by_id, recorded = {}, []
        for k, seed in ((1, 101), (3, 202)):
            env = CrafterStepwiseEnv(config, actions_per_decision=k, record=True, policy_name=f"random-k{k}")
            played = _play(env, seed)
            episode = env.recorded[0]
            assert episode.metadata["source"] == "env" and episode.metadata["seed"] == seed
            assert episode.n_decisions == len(played) and episode.done[-1] and not episode.done[:-1].any()
            assert [info["actions"] for _, info in played] == episode.actions
            assert [info["env_reward"] for _, info in played] == episode.env_reward.tolist()
            if k == 3:
                assert min(len(a) for a in episode.actions[:-1]) < 3  # END padding shortened some decisions
            played_by_id[episode.id] = played
            recorded.append(episode)
        corpus = workbench.Corpus(recorded)  # what the envs played, scored as any corpus is
        decisions = workbench.score(corpus, config).decisions
        totals = workbench.score(corpus, config).episodes.set_index("episode")["reward_sum"]
        for episode in corpus:
            played = played_by_id[episode.id]
            rewards = [reward for reward, _ in played]
            assert rewards == decisions.loc[decisions.episode == episode.id, "reward"].tolist(), name  # ==, not approx
            reference = score_episode(episode.states(), config, episode.actions)
            assert rewards == reference.rewards
            assert [_exact(info["stepwise"]) for _, info in played] == [
                _exact(d.stepwise_info) for d in reference.decisions
            ]
            assert _exact(played[-1][1]["episode_stepwise"]) == _exact(reference.summary)
            assert reference.summary["reward_sum"] == totals[episode.id] == sum(rewards)
            if name == "per_achievement":
                shaped_returns.append(sum(rewards))
    assert max(shaped_returns) > 0  # the comparison covered decisions that pay something


def test_scripted_policy_truncates_and_rewards_stay_exact(tmp_path):
    config = _configs()["per_achievement"]
    env = CrafterStepwiseEnv(
        config,
        actions_per_decision=3,
        length=301,
        record_to=tmp_path / "run",
        record_frames=True,
        policy_name="scripted",
    )
    scripted = scripted_policy(np.random.default_rng(0))
    chosen: list[list[str]] = []

    def policy(seen):
        chosen.append(list(scripted(seen)))
        return chosen[-1]

    played = _play(env, 7, policy)
    _, last = played[-1]
    assert last["steps"] == 301 and last["discount"] == 1.0  # truncated by Crafter's length, alive
    assert [info["actions"] for _, info in played[:-1]] == chosen[:-1]
    assert last["actions"] == chosen[-1][: len(last["actions"])]  # the limit may cut the last decision short
    corpus = load_corpus(tmp_path / "run")
    episode = corpus[0]
    assert corpus.ids == ["scripted-s7-00000"] and episode.metadata["end"] == "truncated"
    assert episode.metadata["policy"] == "scripted" and episode.metadata["reward_config"] == config.to_dict()
    assert episode.n_steps == 301 and episode.frames.images.shape == (302, 64, 64, 3)
    assert len(episode.unlocked) >= 3  # the scripted policy gets wood, a table, ... in 300 steps
    rewards = [reward for reward, _ in played]
    assert rewards == workbench.score(corpus, config).decisions["reward"].tolist()
    assert sum(rewards) > 1.0


def test_an_episode_ending_mid_decision_runs_no_further_action():
    env = CrafterStepwiseEnv(actions_per_decision=3, length=10)
    env.reset(seed=1)
    outcomes = [env.step(env.encode(["noop", "noop", "noop"])) for _ in range(4)]
    assert [o[4]["steps"] for o in outcomes] == [3, 6, 9, 10]
    assert outcomes[-1][4]["actions"] == ["noop"] and outcomes[-1][3] and not outcomes[-1][2]
    assert not any(o[2] or o[3] for o in outcomes[:-1])
    assert outcomes[-1][4]["episode_stepwise"]["reward_sum"] == sum(o[1] for o in outcomes)


def test_death_terminates_and_recording_keeps_frames_and_abandoned_episodes(tmp_path):
    env = CrafterStepwiseEnv(record=True, record_to=tmp_path / "c", record_frames=True)
    obs, _ = env.reset(seed=3)
    images = [obs.copy()]
    env.action_space.seed(3)
    while True:  # a random agent dies long before Crafter's 10,000 steps
        obs, _, terminated, truncated, info = env.step(env.action_space.sample())
        images.append(obs.copy())
        if terminated or truncated:
            break
    assert terminated and not truncated and info["discount"] == 0.0 and info["inventory"]["health"] == 0
    with pytest.raises(EnvError, match="after the episode ended"):
        env.step(0)
    env.reset(seed=5)
    for _ in range(4):
        env.step(5)
    env.reset()  # the unfinished episode is recorded as abandoned
    env.close()  # this one has no decision: nothing to record
    kept = env.recorded
    saved = load_corpus(tmp_path / "c")
    assert kept.ids == saved.ids == ["env-s3-00000", "env-s5-00001"]
    died, abandoned = saved
    assert died.metadata["end"] == "terminated" and died.inventory[-1, HEALTH] == 0
    assert np.array_equal(died.frames.images, np.stack(images))
    assert abandoned.metadata["end"] == "abandoned" and abandoned.n_decisions == 4 and not abandoned.done.any()
    with pytest.raises(FileExistsError, match="already holds episodes"):
        CrafterStepwiseEnv(record_to=tmp_path / "c")
    with pytest.raises(EnvError, match="does not record"):
        _ = CrafterStepwiseEnv().recorded


def test_the_docs_training_loop_runs_as_written_and_learns(monkeypatch):
    page = (CONFIGS.parent / "docs" / "env.md").read_text()
    section = page[page.index("# The gymnasium environment: train with your reward") :]
    code = section[
        section.index("```python\n") + len("```python\n") : section.index("```\n", section.index("```python"))
    ]
    monkeypatch.chdir(CONFIGS.parent)  # the example names configs/recommended.yaml
    namespace: dict = {}
    exec(compile(code, "docs/env.md", "exec"), namespace)  # noqa: S102 - the docs' own example
    assert namespace["episode"] == 2 and len(namespace["rewards"]) > 1
    assert np.isfinite(namespace["logits"]).all() and namespace["logits"].any()  # it learned something
