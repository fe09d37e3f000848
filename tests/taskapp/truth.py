"""The server's states, read from a rollout response independently of ``workbench.data.importers``.

A text observation states the inventory exactly (every item above 0; health on its own line) and
the achievement status. Counts never appear: under per_achievement the task app logs every rise
in ``info.stepwise.achievement_count_deltas``, and Crafter's counts start at 0, so the counts of
every state are known exactly; under consistent they are not known at all (``counts`` is None).
``reference_stepwise`` replays the task app's own function over those states.

The actions each decision played come from the server's own log (``played_from_log``): the
environment wrapper logs ``Crafter BEFORE seed=S step_idx=I ... actions=[ids]`` with the ids it
is about to play, after its normalisation; the engine then clips each id to Crafter's 0..16.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.reward import compute_stepwise_reward

_LINE = re.compile(r"^(Health|Inventory|Achievements):\s*(.*?)\s*$", re.MULTILINE)
_BEFORE = re.compile(r"Crafter BEFORE seed=(\S+) step_idx=(\d+) .* actions=\[([-\d, ]*)\]$", re.MULTILINE)
#: Crafter's action table (``crafter.constants.actions``), in id order.
CRAFTER_ACTIONS = (
    "noop", "move_left", "move_right", "move_up", "move_down", "do", "sleep", "place_stone", "place_table",
    "place_furnace", "place_plant", "make_wood_pickaxe", "make_stone_pickaxe", "make_iron_pickaxe",
    "make_wood_sword", "make_stone_sword", "make_iron_sword",
)  # fmt: skip


def played_from_log(log: str, seed: int) -> list[list[str]]:
    """The actions each decision of the rollout with env seed ``seed`` played, in order, read
    from the server's log lines (ids clipped to 0..16 as the engine's ``_validate_action_engine`` does)."""
    played = []
    for found in _BEFORE.finditer(log):
        if found.group(1) != str(seed):
            continue
        ids = [int(x) for x in found.group(3).split(",") if x.strip()]
        played.append([CRAFTER_ACTIONS[min(max(i, 0), len(CRAFTER_ACTIONS) - 1)] for i in ids])
    return played


@dataclass(frozen=True)
class ServerEpisode:
    """One trajectory: states (reset + one per decision), actions, and what was logged."""

    inventory: list[dict[str, int]]
    status: list[dict[str, bool]]
    counts: list[dict[str, int]] | None
    actions: list[list[str]]
    logged_stepwise: list[dict[str, Any]]
    decision_samples: list[dict[str, Any]]
    strategy: str
    summaries: list[list[dict[str, Any]]]  # each decision's tool calls as the task app summarises them

    @property
    def n_decisions(self) -> int:
        return len(self.actions)


def parse_text_state(text: str) -> tuple[dict[str, int], dict[str, bool]]:
    """(inventory in Crafter's item order, status in Crafter's achievement order) of one text obs."""
    fields = dict(_LINE.findall(text))
    inventory = {item: 0 for item in INVENTORY_ITEMS}
    inventory["health"] = int(fields["Health"])
    if fields["Inventory"] != "empty":
        for entry in fields["Inventory"].split(","):
            name, _, amount = entry.strip().partition(":")
            if name not in inventory:
                raise ValueError(f"unknown inventory item {name!r} in {fields['Inventory']!r}")
            inventory[name] = int(amount)
    unlocked = set() if fields["Achievements"] == "none" else {n.strip() for n in fields["Achievements"].split(",")}
    unknown = unlocked - set(ACHIEVEMENTS)
    if unknown:
        raise ValueError(f"unknown achievement(s) {sorted(unknown)}")
    return inventory, {name: name in unlocked for name in ACHIEVEMENTS}


def server_episode(response: Mapping[str, Any], played: list[list[str]] | None = None) -> ServerEpisode:
    """The single trajectory of a rollout response (these rollouts never reset: ``done`` stays
    false); ``played`` are the actions the server's log says each decision played (else the
    ``interact_many`` list of each step's one tool call, as the well-formed cases have it)."""
    (trajectory,) = response["trajectories"]
    steps = trajectory["steps"]
    texts = [step["obs"]["text"] for step in steps] + [trajectory["final"]["observation"]["text"]]
    parsed = [parse_text_state(text) for text in texts]
    logged = [dict(step["info"]["stepwise"]) for step in steps]
    strategy = str(response["metrics"]["details"]["stepwise"]["strategy"])
    counts = None
    if strategy == "per_achievement":
        running = {name: 0 for name in ACHIEVEMENTS}
        counts = [dict(running)]
        for stepwise in logged:
            for name, delta in (stepwise.get("achievement_count_deltas") or {}).items():
                running[name] += int(delta)
            counts.append(dict(running))
    actions = played if played is not None else [list(step["tool_calls"][0]["arguments"]["actions"]) for step in steps]
    return ServerEpisode(
        [p[0] for p in parsed],
        [p[1] for p in parsed],
        counts,
        actions,
        logged,
        list(trajectory["decision_samples"]),
        strategy,
        [summarize_tool_calls(step["tool_calls"]) for step in steps],
    )


def summarize_tool_calls(tool_calls: Any) -> list[dict[str, Any]]:
    """The task app's ``_summarize_tool_calls`` (rollout.py), what a decision sample's ``actions``
    holds: each call as ``{"tool", "args"}``, string arguments parsed when they are JSON."""
    summary = []
    for call in tool_calls or []:
        raw = call.get("arguments") or call.get("args") or {}
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            args = raw
        summary.append({"tool": call.get("tool") or call.get("tool_name") or call.get("name"), "args": args})
    return summary


def reference_stepwise(episode: ServerEpisode, config: RewardConfig) -> list[tuple[dict, dict, dict]]:
    """``compute_stepwise_reward`` (the task app's function) over the episode's states under
    ``config``, with the rollout's bookkeeping (credit counts kept for the episode,
    ``decision_index`` from 1). Raises ``ValueError`` when ``config`` needs counts the episode
    does not know (per_achievement over a consistent rollout)."""
    if config.effective_strategy == "per_achievement" and episode.counts is None:
        raise ValueError("per_achievement needs achievement counts; a consistent rollout does not log them")
    credits: dict[str, Any] = {}
    out = []
    for i in range(episode.n_decisions):
        out.append(
            compute_stepwise_reward(
                episode.status[i],
                episode.status[i + 1],
                i + 1,
                episode.summaries[i],
                config.indicator_lambda,
                strategy=config.strategy,
                weights=dict(config.weights),
                k_limits=dict(config.k_limits),
                episode_counts=credits,
                prev_inventory=episode.inventory[i],
                new_inventory=episode.inventory[i + 1],
                prev_counts=episode.counts[i] if episode.counts else None,
                new_counts=episode.counts[i + 1] if episode.counts else None,
                resource_weights=config.resource_weights,
            )
        )
    return out
