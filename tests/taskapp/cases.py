"""The rollout requests the test posts to the real task app, one per case, and posting them.

Each case is one ``mode: "rl"`` rollout of the ``crafter-react`` policy with a step_rewards table
either under ``policy.config`` (which the task app reads first) or under ``env.config``. Between
them they cover both strategies, a misspelled weight name (``craft_wood_pickaxe``), a k-limit of
0 (unlimited), lambda 0.5 and lambda omitted (the task app then scales by 1.0). Cases named ``loose_...`` are
answered loosely by the stand-in (``standin.LOOSE_FORMS``).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskapp.server import API_KEY

MAX_STEPS_PER_EPISODE = 400  # env steps; the decisions below never reach it
MODEL = "standin-model"


@dataclass(frozen=True)
class Case:
    """One rollout: its name (= run id and file stem), env seed, decisions and step_rewards."""

    name: str
    seed: int
    decisions: int
    table_under: str  # "policy" or "env"
    step_rewards: dict[str, Any]

    @property
    def strategy(self) -> str:
        return str(self.step_rewards.get("strategy", "consistent"))

    def request(self, inference_url: str) -> dict[str, Any]:
        """The rollout request JSON."""
        env_config: dict[str, Any] = {"env_params": {"max_steps_per_episode": MAX_STEPS_PER_EPISODE}}
        policy_config: dict[str, Any] = {
            "inference_url": inference_url,
            "model": MODEL,
            "max_llm_calls": self.decisions,
            "temperature": 0.0,
        }
        (policy_config if self.table_under == "policy" else env_config)["step_rewards"] = self.step_rewards
        return {
            "run_id": self.name,
            "mode": "rl",
            "env": {"env_name": "crafter", "seed": self.seed, "config": env_config},
            "policy": {"policy_name": "crafter-react", "config": policy_config},
            "ops": ["agent", "env"] * self.decisions,
            "on_done": "reset",
        }


def _table(strategy: str, **extra: Any) -> dict[str, Any]:
    return {"enabled": True, "mode": "decision_stepwise", "strategy": strategy, **extra}


CASES: tuple[Case, ...] = (
    Case(
        "consistent_policy_lambda1",
        seed=11,
        decisions=50,
        table_under="policy",
        step_rewards=_table("consistent", indicator_lambda=1.0),
    ),
    Case(
        "consistent_env_lambda_half",
        seed=12,
        decisions=50,
        table_under="env",
        step_rewards=_table("consistent", indicator_lambda=0.5),
    ),
    Case(
        "per_achievement_env_lambda_half",
        seed=13,
        decisions=60,
        table_under="env",
        step_rewards=_table(
            "per_achievement",
            indicator_lambda=0.5,
            weights={
                "collect_wood": 0.8,
                "collect_drink": 0.4,
                "collect_sapling": 0.6,
                "place_table": 1.5,
                "craft_wood_pickaxe": 0.3,
            },
            k_limits={"collect_wood": 2, "craft_wood_pickaxe": 2},
        ),
    ),
    Case(
        "loose_consistent_policy",
        seed=15,
        decisions=40,
        table_under="policy",
        step_rewards=_table("consistent", indicator_lambda=1.0),
    ),
    Case(
        "loose_per_achievement_env",
        seed=16,
        decisions=40,
        table_under="env",
        step_rewards=_table("per_achievement", weights={"collect_wood": 0.5, "place_table": 2.0}, k_limits={}),
    ),
    Case(
        "per_achievement_policy_k0_lambda_omitted",
        seed=14,
        decisions=60,
        table_under="policy",
        step_rewards=_table(
            "per_achievement",
            weights={"collect_wood": 1.0, "collect_drink": 0.5, "place_table": 2.0, "make_wood_pickaxe": 3.0},
            k_limits={"collect_wood": 0, "collect_drink": 0, "place_table": 0},
        ),
    ),
)


#: The rollouts posted to synth-ai 0.2.24 (the indicator-only loop): per_achievement weights it
#: ignores (lambda 0.5), consistent with lambda omitted (it pays 0), and loose answers (more than
#: 20 actions in a decision, all played there).
NEWEST_CASES: tuple[Case, ...] = (
    Case(
        "newest_per_achievement_policy_lambda_half",
        seed=21,
        decisions=40,
        table_under="policy",
        step_rewards=_table(
            "per_achievement",
            indicator_lambda=0.5,
            weights={"collect_wood": 0.8, "collect_drink": 0.4, "place_table": 1.5},
            k_limits={"collect_wood": 0},
        ),
    ),
    Case(
        "newest_consistent_env_lambda_omitted",
        seed=22,
        decisions=30,
        table_under="env",
        step_rewards=_table("consistent"),
    ),
    Case(
        "newest_loose_consistent_policy",
        seed=23,
        decisions=30,
        table_under="policy",
        step_rewards=_table("consistent", indicator_lambda=1.0),
    ),
)


def post_rollout(base_url: str, request: dict[str, Any], timeout_s: float = 300.0) -> tuple[bytes, float]:
    """POST ``/rollout`` with the ``X-API-Key`` header; return (the response body as the server
    sent it, seconds taken). The body is checked to be a JSON object.

    Raises ``urllib.error.HTTPError`` (with the server's body in its message) on a non-2xx answer.
    """
    payload = json.dumps(request).encode()
    http_request = urllib.request.Request(
        base_url + "/rollout",
        data=payload,
        method="POST",
        headers={"Content-Type": "application/json", "X-API-Key": API_KEY},
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(http_request, timeout=timeout_s) as answer:
            body = answer.read()
    except urllib.error.HTTPError as error:
        detail = error.read().decode("utf-8", errors="replace")[:2000]
        raise urllib.error.HTTPError(error.url, error.code, f"{error.reason}: {detail}", error.headers, None) from None
    took = time.monotonic() - started
    if not isinstance(json.loads(body), dict):
        raise TypeError(f"{base_url}/rollout answered {body[:200]!r}, not a JSON object")
    return body, took


def save_json(path: Path, value: Any) -> Path:
    """Write ``value`` as indented JSON, or ``bytes`` as they are (a response as the server sent it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(value, bytes):
        path.write_bytes(value)
    else:
        path.write_text(json.dumps(value, indent=1) + "\n", encoding="utf-8")
    return path
