"""The task app's tool-call rules (``played_actions``, ``policy_tool_calls``) on hand-written calls,
each expected value read off ``CrafterEnvironmentWrapper.step`` and the engine's clip by hand."""

from __future__ import annotations

import json

import pytest

from workbench.data.importers.toolcalls import RefusedToolCall, played_actions, policy_tool_calls


def test_interact_many_plays_its_actions_in_order_with_either_key_pair():
    assert played_actions([{"tool_name": "interact_many", "arguments": {"actions": ["move_left", "do"]}}]).actions == [
        "move_left",
        "do",
    ]
    assert played_actions([{"tool": "interact_many", "args": {"actions": ["sleep"]}}]) == played_actions(
        [{"tool_name": "interact_many", "arguments": {"actions": ["sleep"]}}]
    )
    assert played_actions([{"tool": "interact_many", "args": {"actions": ["noop"]}}]).notes == ()


def test_tool_wins_over_tool_name_and_arguments_over_args():
    call = {"tool": "interact_many", "tool_name": "do", "arguments": {"actions": ["move_up"]}, "args": {"action": 6}}
    assert played_actions([call]).actions == ["move_up"]
    # An empty (falsy) first key falls through to the second, as `or` does there.
    assert played_actions([{"tool": "", "tool_name": "sleep", "arguments": {}, "args": {"action": "do"}}]).actions == [
        "do"
    ]


def test_a_call_named_after_an_action_with_json_string_arguments_plays_its_name():
    played = played_actions([{"tool_name": "do", "arguments": "{}"}])
    assert played.actions == ["do"] and played.notes == ("json_string",)


def test_json_string_arguments_are_parsed_and_bad_json_reads_as_empty():
    played = played_actions([{"tool_name": "interact_many", "arguments": json.dumps({"actions": ["move_down"]})}])
    assert played.actions == ["move_down"] and played.notes == ("json_string",)
    played = played_actions([{"tool_name": "place_table", "arguments": "{not json"}])
    assert played.actions == ["place_table"] and played.notes == ("json_string", "bad_json")


def test_unknown_names_are_skipped_and_nothing_left_plays_noop():
    played = played_actions([{"tool_name": "interact_many", "arguments": {"actions": ["jump", "Move_Left", "do"]}}])
    assert played.actions == ["do"] and played.notes == ("unknown",)
    played = played_actions([{"tool_name": "jump", "arguments": {}}])
    assert played.actions == ["noop"] and played.notes == ("unknown", "noop")


def test_empty_lists_and_empty_calls_play_one_noop():
    assert played_actions([]).actions == ["noop"]
    played = played_actions([{"tool_name": "interact_many", "arguments": {"actions": []}}])
    assert played.actions == ["noop"] and played.notes == ("noop",)


def test_integer_ids_are_taken_as_they_are_and_clipped_to_crafters_range():
    # 5 is "do"; the engine clips to 0..16: 99 -> 16 (make_iron_sword), -3 -> 0 (noop); True is 1.
    played = played_actions([{"tool_name": "interact_many", "arguments": {"actions": [5, 99, -3, True]}}])
    assert played.actions == ["do", "make_iron_sword", "noop", "move_left"]
    assert played.notes == ("clipped",)
    assert played_actions([{"tool_name": "interact", "arguments": {"action": 8}}]).actions == ["place_table"]


def test_other_names_take_a_non_empty_actions_list_else_action_else_their_own_name():
    assert played_actions([{"tool_name": "act", "arguments": {"actions": ["move_right", 6]}}]).actions == [
        "move_right",
        "sleep",
    ]
    # An empty list falls through to `action`, then to the name.
    assert played_actions([{"tool_name": "act", "arguments": {"actions": [], "action": "do"}}]).actions == ["do"]
    assert played_actions([{"tool_name": "sleep", "arguments": {"actions": []}}]).actions == ["sleep"]
    # `action` that is no action name is ignored and the tool's own name is read instead.
    assert played_actions([{"tool_name": "do", "arguments": {"action": "fly"}}]).actions == ["do"]
    # A float is neither an integer nor a name: the name again (here no action: noop).
    assert played_actions([{"tool_name": "act", "arguments": {"action": 5.0}}]).actions == ["noop"]


def test_calls_are_concatenated_and_more_than_twenty_cut_to_the_first_twenty():
    calls = [
        {"tool_name": "interact_many", "arguments": {"actions": ["move_left"] * 15}},
        {"tool_name": "do", "arguments": {}},
        {"tool_name": "interact_many", "arguments": {"actions": ["move_up"] * 10}},
    ]
    played = played_actions(calls)
    assert played.actions == ["move_left"] * 15 + ["do"] + ["move_up"] * 4
    assert played.notes == ("cut",)


def test_a_string_of_actions_iterates_its_characters_as_the_task_app_does():
    # `for action in "do"` gives "d", "o": neither is an action, so noop.
    played = played_actions([{"tool_name": "interact_many", "arguments": {"actions": "do"}}])
    assert played.actions == ["noop"] and played.notes == ("unknown", "noop")


@pytest.mark.parametrize(
    ("calls", "says"),
    [
        ([{"arguments": {"actions": ["do"]}}], "neither 'tool' nor 'tool_name'"),
        ([{"tool": None, "tool_name": ""}], "neither 'tool' nor 'tool_name'"),
        (["do"], "must be an object"),
        (None, "must be a list"),
        ({"tool_name": "do"}, "must be a list"),
        ([{"tool_name": "interact_many", "arguments": "[1, 2]"}], "arguments that are not an object"),
        ([{"tool_name": "interact_many", "arguments": {"actions": 5}}], "actions that are a number"),
    ],
)
def test_what_the_task_app_refuses_is_a_named_error(calls, says):
    with pytest.raises(RefusedToolCall, match=says):
        played_actions(calls)


def test_the_policy_rewrites_exactly_move_right_do_and_passes_other_names_as_they_are():
    message = [
        {"function": {"name": "interact_many", "arguments": '{"actions": ["move_right", "do"]}'}},
        {"function": {"name": "interact_many", "arguments": '{"actions": ["move_right", "do", "do"]}'}},
        {"name": "do", "arguments": "{}"},
        {"function": {"name": "interact_many", "arguments": '{"actions": "noop"}'}},
    ]
    assert policy_tool_calls(message) == [
        {"tool_name": "interact_many", "arguments": {"actions": ["move_right"]}},
        {"tool_name": "interact_many", "arguments": {"actions": ["move_right", "do", "do"]}},
        {"tool_name": "do", "arguments": "{}"},
        {"tool_name": "interact_many", "arguments": {"actions": []}},
    ]
    assert policy_tool_calls(None) == []
