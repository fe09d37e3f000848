"""A rollout import plays each decision's calls by the task app's rules: values only their type tells apart, repeated, under each producer's cap."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.rollouts import write_json

from workbench.data.importers import import_rollouts
from workbench.data.importers.jsonfiles import read_responses
from workbench.data.importers.producers import producer_named
from workbench.data.importers.toolcalls import played_actions

REPO = Path(__file__).resolve().parents[2]
TASKAPP = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "taskapp"


def _state(step: int) -> dict:
    return {
        "text": f"=== CRAFTER GAME STATE ===\nStep: {step}/100\nHealth: 9\nPosition: [32, 32]\n"
        "Facing: [0, 1]\nInventory: food:9, drink:9, energy:9\nAchievements: none\n\nMap view unavailable\n"
    }


def _response(calls: list[list[dict]], run_id: str) -> dict:
    steps = [{"obs": _state(i), "tool_calls": c, "reward": 0.0, "done": False} for i, c in enumerate(calls)]
    return {"run_id": run_id, "trajectories": [{"steps": steps, "final": {"observation": _state(len(calls))}}]}


def _many(actions: object) -> list[dict]:
    return [{"tool": "interact_many", "arguments": {"actions": actions}}]


# Values a JSON text must tell apart, and what the task app plays for each, by hand from its rules
# (toolcalls.played_actions; Crafter's ids: 1 move_left, 16 make_iron_sword):
CASES = {
    "int": (_many([1]), ["move_left"], []),  # an integer is an action id
    "float": (_many([1.0]), ["noop"], ["unknown", "noop"]),  # not an int; "1.0" names no action
    "true": (_many([True]), ["move_left"], []),  # bool is int: True plays id 1, unclipped
    "string": (_many(["1"]), ["noop"], ["unknown", "noop"]),  # "1" names no action
    "clipped": (_many([17]), ["make_iron_sword"], ["clipped"]),  # clipped to 16
    "characters": (_many("do"), ["noop"], ["unknown", "noop"]),  # a string iterates "d", "o"
    "list": (_many(["do"]), ["do"], []),
}


def test_repeated_calls_each_play_what_their_own_value_plays(tmp_path):
    order = list(CASES) + list(reversed(CASES)) + list(CASES)  # each met again after the others
    response = _response([CASES[name][0] for name in order], "memo")
    result = import_rollouts(write_json(tmp_path / "r.json", response), progress=False)
    assert result.ok, str(result)
    (episode,) = result.corpus
    assert episode.actions == [CASES[name][1] for name in order]
    noted = [[i, CASES[name][2]] for i, name in enumerate(order, start=1) if CASES[name][2]]
    assert episode.metadata["normalised_calls"] == noted
    # each decision has its own list: changing one changes no other's
    episode.actions[0].append("do")
    assert episode.actions[len(CASES) * 2] == ["move_left"]


@pytest.mark.parametrize(("version", "played"), [("0.2.14", 20), ("0.2.24", 25)])
def test_the_producers_action_cap_applies_to_every_repeat(tmp_path, version, played):
    calls = _many(["do"] * 25)
    response = _response([calls, calls, calls], f"cap-{version}")
    result = import_rollouts(write_json(tmp_path / "r.json", response), progress=False, producer=version)
    assert result.ok, str(result)
    (episode,) = result.corpus
    assert episode.actions == [["do"] * played] * 3  # 0.2.14 plays the first 20; 0.2.16+ all
    notes = episode.metadata.get("normalised_calls", [])
    assert notes == ([[k, ["cut"]] for k in (1, 2, 3)] if played == 20 else [])


def test_the_shipped_rollouts_play_what_the_rules_give_each_decision_afresh():
    checked = 0
    for file in sorted(TASKAPP.glob("*.json")):
        (episode,) = import_rollouts(file, progress=False).corpus
        ((_, response),) = list(read_responses(file))
        steps = response["trajectories"][0]["steps"][: episode.n_decisions]
        cap = producer_named(episode.metadata["producer"]).action_cap
        fresh = [played_actions(step["tool_calls"], cap) for step in steps]
        last = len(fresh) - 1
        for k, (actions, expected) in enumerate(zip(episode.actions, fresh)):
            # the done decision keeps what ran before the step limit (a prefix)
            assert actions == expected.actions if k < last else expected.actions[: len(actions)] == actions
        noted = [[i, list(p.notes)] for i, p in enumerate(fresh, start=1) if p.notes]
        assert episode.metadata.get("normalised_calls", []) == noted
        checked += len(fresh)
    assert checked > 100
