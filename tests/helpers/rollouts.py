"""Task-app rollout responses for tests and example files, made by playing real Crafter.

Mirrors the synth-ai task app's rollout loop and the response shape its real server writes
(measured on synth-ai 0.2.14; see docs/importing-rollouts.md): a step is ``{obs, tool_calls,
reward, done, truncated, info}``, its ``obs`` what the policy saw before the decision and
``final.observation`` the state after the last one; ``tool_calls`` is one
``{"tool_name": "interact_many", "arguments": {"actions": [...]}}`` holding the actions that ran
(the policy rewrites exactly ``["move_right", "do"]`` into ``["move_right"]``, and
``info.meta.raw_response`` keeps what the model said); ``reward`` is 1.0 on a decision that
unlocked something, else null; ``truncated`` is null; the response has ``trace_correlation_id``
and ``pipeline_metadata``. Observations are stored as the task app's text
(``format_observation``) or as raw observation dicts (as other producers do).

The real server never sets ``done`` (it reads it with getattr on a dict), so its rollouts run on
past death; ``done_when_over=True`` plays the other producers' way instead: a ``done`` step when
the episode ends, and with ``on_done = "reset"`` the next episode's reset observation follows and
the state after the ``done`` decision is not stored. With shaping on, each step's
``info.stepwise`` and ``info.meta.decision_rewards``, ``decision_samples`` and
``metrics.details.stepwise`` come from ``workbench.core.reward.compute_stepwise_reward`` with the task
app's bookkeeping: credit counts and the seen set clear at reset, the previous snapshots do not
(quirk 7), and ``decision_index`` counts through the whole rollout.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import crafter
import numpy as np

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.core.episode_reward import actions_summary, stepwise_summary
from workbench.core.reward import compute_stepwise_reward
from workbench.data.policies.base import crafter_player, crafter_semantic

#: A per_achievement table as users write them (an alias and an unlimited k-limit included).
PER_ACHIEVEMENT_TABLE = {
    "enabled": True,
    "mode": "decision_stepwise",
    "strategy": "per_achievement",
    "indicator_lambda": 0.5,
    "weights": {"collect_wood": 0.8, "collect_sapling": 0.6, "craft_wood_pickaxe": 0.3},
    "k_limits": {"collect_wood": 2, "collect_sapling": 0},
}
#: Actions that unlock something now and then within a few dozen steps.
_PLAY = (
    "move_left",
    "move_right",
    "move_up",
    "move_down",
    "do",
    "do",
    "do",
    "noop",
    "place_table",
    "make_wood_pickaxe",
    "place_plant",
    "sleep",
)


def raw_observation(
    env: crafter.Env, step: int, max_steps: int, reward: float, total: float, done: bool
) -> dict[str, Any]:
    """The task app's observation dict for the env's current state (image fields left out)."""
    player = crafter_player(env)
    return {
        "inventory": dict(player.inventory),
        "achievements_status": {name: player.achievements[name] > 0 for name in ACHIEVEMENTS},
        "achievements_counts": {name: int(player.achievements[name]) for name in ACHIEVEMENTS},
        "player_position": [int(v) for v in player.pos],
        "player_direction": [int(v) for v in player.facing],
        "num_steps_taken": step,
        "max_steps_episode": max_steps,
        "reward_last_step": reward,
        "total_reward_episode": total,
        "terminated": bool(done and player.health <= 0),
        "truncated": bool(done and player.health > 0),
        "semantic_map": crafter_semantic(env).tolist(),
    }


def format_observation(obs: dict[str, Any]) -> str:
    """The task app's text observation (``envs/crafter/shared.py: format_observation``)."""
    inventory = [f"{k}:{v}" for k, v in obs["inventory"].items() if v > 0 and k != "health"]
    achieved = [k for k, v in obs["achievements_status"].items() if v]
    return (
        "=== CRAFTER GAME STATE ===\n"
        f"Step: {obs['num_steps_taken']}/{obs['max_steps_episode']}\n"
        f"Health: {obs['inventory']['health']}\n"
        f"Position: {obs['player_position']}\n"
        f"Facing: {obs['player_direction']}\n"
        f"Inventory: {', '.join(inventory) if inventory else 'empty'}\n"
        f"Achievements: {', '.join(achieved) if achieved else 'none'}\n"
        f"{_map_view(obs)}\n\n"
        "Choose your next actions.\n"
    )


def _map_view(obs: dict[str, Any], size: int = 5) -> str:
    semantic = np.asarray(obs["semantic_map"])
    px, py = obs["player_position"]
    half = size // 2
    rows = []
    for dy in range(-half, half + 1):
        row = []
        for dx in range(-half, half + 1):
            x, y = px + dx, py + dy
            inside = 0 <= x < semantic.shape[0] and 0 <= y < semantic.shape[1]
            row.append("player" if (dx, dy) == (0, 0) else (str(int(semantic[x, y])) if inside else "void"))
        rows.append(" ".join(row))
    return f"\nLocal Map View ({size}x{size}):\n" + "\n".join(rows)


def text_variant(response: dict[str, Any]) -> dict[str, Any]:
    """A copy storing every observation as the task app does for Crafter: text only."""
    return _map_observations(response, lambda obs: {"text": format_observation(obs)})


def raw_variant(response: dict[str, Any]) -> dict[str, Any]:
    """A copy storing raw observation dicts (without the bulky semantic map)."""
    return _map_observations(response, lambda obs: {k: v for k, v in obs.items() if k != "semantic_map"})


def _map_observations(response: dict[str, Any], convert) -> dict[str, Any]:
    copy = json.loads(json.dumps(response))
    for trajectory in copy["trajectories"]:
        for step in trajectory["steps"]:
            step["obs"] = convert(step["obs"])
        trajectory["final"]["observation"] = convert(trajectory["final"]["observation"])
    return copy


def play_rollout(
    *,
    seed: int,
    decisions: int,
    actions_per_decision: int = 1,
    episode_length: int = 10000,
    table: dict[str, Any] | None = PER_ACHIEVEMENT_TABLE,
    on_done: str = "reset",
    run_id: str | None = None,
    include_request: bool = False,
    done_when_over: bool = True,
) -> dict[str, Any]:
    """One rollout response of ``decisions`` decisions played on ``crafter.Env(seed, length)``,
    with full raw observations (``text_variant`` / ``raw_variant`` store them as files do).

    With ``done_when_over`` (other producers' way) a short ``episode_length`` makes the env end
    episodes so ``on_done = "reset"`` puts several episodes in the one trajectory; without it
    (the real server's way) ``done`` stays false and the rollout plays on past the end.
    ``table=None`` is a rollout without shaping.
    """
    rng = np.random.default_rng(seed)
    env = crafter.Env(seed=seed, length=episode_length)
    env.reset()
    shaping = _Shaping(RewardConfig.from_dict(table)) if table else None
    current = raw_observation(env, 0, episode_length, 0.0, 0.0, False)
    previous_state = current  # the task app's snapshots: not reset at on_done (quirk 7)
    steps, returns = [], 0.0
    episode_steps = total = 0.0
    for decision_index in range(1, decisions + 1):
        said = [str(a) for a in rng.choice(_PLAY, size=actions_per_decision)]
        actions = ["move_right"] if said == ["move_right", "do"] else said  # the task app's rewrite
        reward, done = 0.0, False
        for action in actions:
            _, r, over, _ = env.step(env.action_names.index(action))
            reward += r
            episode_steps += 1
            done = over and done_when_over
            if done:
                break
        total += reward
        after = raw_observation(env, int(episode_steps), episode_length, reward, total, done)
        info = shaping.decision_info(previous_state, after, decision_index, actions) if shaping else {}
        info.setdefault("meta", {})["raw_response"] = _chat_response(said)
        unlocked_any = any(
            after["achievements_status"][a] and not previous_state["achievements_status"][a] for a in ACHIEVEMENTS
        )
        steps.append(
            {
                "obs": current,
                "tool_calls": [{"tool_name": "interact_many", "arguments": {"actions": actions}}],
                "reward": 1.0 if unlocked_any else None,
                "done": bool(done),
                "truncated": None,
                "info": info,
            }
        )
        returns += 1.0 if unlocked_any else 0.0
        previous_state = after
        current = after
        if done:
            if on_done != "reset":
                break
            env.reset()
            if shaping:
                shaping.new_episode()
            episode_steps, total = 0, 0.0
            current = raw_observation(env, 0, episode_length, 0.0, 0.0, False)
    response = _response(seed, run_id, steps, current, returns, shaping)
    if include_request:
        response["request"] = {
            "run_id": response["run_id"],
            "on_done": on_done,
            "env": {"env_name": "crafter", "seed": seed, "config": {"step_rewards": table or {}}},
            "policy": {"policy_name": "fixture-random", "config": {}},
        }
    return response


class _Shaping:
    """The task app's stepwise bookkeeping over a rollout under ``config``: the credit counts and
    achievements seen this episode, every unlock, the sums and decision samples it reports."""

    def __init__(self, config: RewardConfig) -> None:
        self.config = config
        self.credit_counts: dict[str, int] = {}
        self.seen: set[str] = set()
        self.unique_all: set[str] = set()
        self.sums = {"indicator_sum": 0.0, "reward_sum": 0.0, "resource_reward": 0.0, "new_achievements_total": 0}
        self.samples: list[Any] = []

    def new_episode(self) -> None:
        """Forget this episode's credits and unlocks (the rollout reset the env)."""
        self.credit_counts.clear()
        self.seen.clear()

    def decision_info(
        self, previous: dict[str, Any], after: dict[str, Any], decision_index: int, actions: list[str]
    ) -> dict[str, Any]:
        """The step's ``info`` (``stepwise``, ``meta.decision_rewards``, ``achievements_added``)
        for the decision from observation ``previous`` to ``after``; the sums and samples grow."""
        config = self.config
        stepwise, sample, stats = compute_stepwise_reward(
            previous["achievements_status"],
            after["achievements_status"],
            decision_index,
            actions_summary(actions),
            config.indicator_lambda,
            strategy=config.strategy,
            weights=dict(config.weights),
            k_limits=dict(config.k_limits),
            episode_counts=self.credit_counts,
            prev_inventory=previous["inventory"],
            new_inventory=after["inventory"],
            prev_counts=previous["achievements_counts"],
            new_counts=after["achievements_counts"],
        )
        unlocked = set(stepwise["new_achievements"])
        unique = unlocked - self.seen
        self.seen |= unlocked
        self.unique_all |= unlocked
        self.sums["indicator_sum"] += stats["indicator"]
        self.sums["reward_sum"] += stats["reward"]
        self.sums["resource_reward"] += stats.get("resource_reward", 0.0)
        self.sums["new_achievements_total"] += int(stats["new_achievements_count"])
        self.samples.append(sample)
        decision_rewards = {
            "turn": decision_index,
            "ach_delta": len(unlocked),
            "unique_delta": len(unique),
            "all": sorted(unlocked),
            "unique": sorted(unique),
        }
        return {
            "stepwise": stepwise,
            "meta": {"decision_rewards": decision_rewards},
            "achievements_added": stepwise["new_achievements"],
        }

    def summary(self, final: dict[str, Any]) -> dict[str, Any]:
        """The rollout's ``metrics.details.stepwise``, ending at observation ``final``."""
        return stepwise_summary(
            self.config,
            indicator_sum=self.sums["indicator_sum"],
            reward_sum=self.sums["reward_sum"],
            resource_reward=self.sums["resource_reward"],
            new_achievements_total=int(self.sums["new_achievements_total"]),
            unique_achievements=self.unique_all,
            final_achievements=[name for name, on in final["achievements_status"].items() if on],
        )


def _response(
    seed: int,
    run_id: str | None,
    steps: list[dict[str, Any]],
    current: dict[str, Any],
    returns: float,
    shaping: _Shaping | None,
) -> dict[str, Any]:
    """The rollout response of one trajectory of ``steps`` ending at observation ``current``."""
    response: dict[str, Any] = {
        "run_id": run_id or f"run-{seed}",
        "trajectories": [
            {
                "env_id": f"env-{seed}",
                "policy_id": "fixture-random",
                "steps": steps,
                "final": {"observation": current},
                "length": len(steps),
                "decision_samples": shaping.samples if shaping is not None else None,
            }
        ],
        "branches": {},
        "metrics": {
            "episode_returns": [returns],
            "mean_return": returns,
            "num_steps": len(steps),
            "num_episodes": 1,
            "outcome_score": None,
            "events_score": None,
            "details": {},
        },
        "aborted": False,
        "ops_executed": 2 * len(steps),
        "trace_correlation_id": f"trace_{seed}",
        "trace": None,
        "pipeline_metadata": {"inference_url": f"http://127.0.0.1:8000/v1/chat/completions?cid=trace_{seed}"},
    }
    if shaping is not None:
        response["metrics"]["details"]["stepwise"] = shaping.summary(current)
    return response


def _chat_response(actions: list[str]) -> dict[str, Any]:
    """An OpenAI-style chat completion answering with one ``interact_many`` tool call."""
    call = {
        "id": "call_0",
        "type": "function",
        "function": {"name": "interact_many", "arguments": json.dumps({"actions": actions})},
    }
    message = {"role": "assistant", "content": f"I will {', '.join(actions)}.", "tool_calls": [call]}
    return {
        "id": "chatcmpl-fixture",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }


def write_json(path: Path, response: Any) -> Path:
    """Write ``response`` to ``path`` as indented JSON; returns the path."""
    path.write_text(json.dumps(response, indent=1), encoding="utf-8")
    return path


def write_jsonl(path: Path, responses: Iterable[Any]) -> Path:
    """Write one response a line to ``path`` (JSONL); returns the path."""
    path.write_text("".join(json.dumps(r) + "\n" for r in responses), encoding="utf-8")
    return path
