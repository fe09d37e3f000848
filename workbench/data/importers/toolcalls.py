"""The synth-ai task app's rules for turning one decision's tool calls into the Crafter actions it plays.

Read at the source (synth-ai 0.2.14, ``envs/crafter/environment.py``,
``CrafterEnvironmentWrapper.step``, and the engine it steps): ``played_actions(calls)`` is what
the environment plays for a decision whose policy returned ``calls``; ``PlayedActions.notes``
says what the task app ignored or changed on the way (``NORMALISATIONS``). A call the task app
itself would fail on raises ``RefusedToolCall``. ``policy_tool_calls(message_calls)`` is the
policy's own step before that (OpenAI-format calls of the model's message -> the calls the
policy hands the environment, with its ``["move_right", "do"] -> ["move_right"]`` rewrite); a
rollout's ``steps[i].tool_calls`` and the trace database's assistant messages already hold its
output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.core.crafter_facts import ACTIONS
from workbench.errors import WorkbenchError

#: The most actions the environment plays for one decision (``MAX_ACTIONS_PER_STEP``).
MAX_ACTIONS = 20
#: What a note in ``PlayedActions.notes`` can say, as the import report counts them.
NORMALISATIONS = {
    "unknown": "names that are no Crafter action skipped",
    "json_string": "arguments given as a JSON string parsed",
    "bad_json": "arguments that are not JSON read as {}",
    "clipped": "integer action ids out of range clipped to 0..16",
    "noop": "no action left: noop played",
    "cut": "more than 20 actions: the first 20 played",
}
_IDS = {name: k for k, name in enumerate(ACTIONS)}


class RefusedToolCall(WorkbenchError):
    """A decision's tool calls the task app itself fails on (it raises, and plays nothing)."""


@dataclass(frozen=True)
class PlayedActions:
    """The actions a decision played, in order, and the ``NORMALISATIONS`` keys that applied
    (empty when the calls were taken exactly as written).

    Attributes:
        actions: The Crafter action names played, in order (at least one: ``noop``).
        notes: The ``NORMALISATIONS`` keys that applied, each once, in first-applied order.
    """

    actions: list[str]
    notes: tuple[str, ...] = ()


def played_actions(tool_calls: Any, cap: int | None = MAX_ACTIONS) -> PlayedActions:
    """The Crafter actions the task app plays for one decision's ``tool_calls``.

    Each call's name is ``tool`` or else ``tool_name``; its arguments ``arguments`` or else
    ``args`` (a string is parsed as JSON, one that does not parse is ``{}``). ``interact_many``
    plays each of its ``actions``; any other name plays its non-empty ``actions`` list, else
    ``arguments.action`` (an integer or an action name), else its own name read as an action.
    An entry that is an action name plays it; an integer is an action id, clipped to Crafter's
    range as the engine does (``True`` is 1); anything else is skipped. Calls are concatenated;
    nothing left plays one ``noop``; more than ``cap`` (20 in synth-ai 0.2.14) play the first
    ``cap``; ``cap=None`` plays them all (the 0.2.16-0.2.24 loop has no cap).

    Args:
        tool_calls: The decision's tool calls as the policy handed them to the environment
            (a list of ``{"tool" | "tool_name", "arguments" | "args"}`` objects).
        cap: The most actions played (``MAX_ACTIONS``; None: no cap).

    Returns:
        The actions played and the normalisations that applied.

    Raises:
        RefusedToolCall: Where the task app raises: ``tool_calls`` is not a list, a call is
            not an object or has neither name key, or an ``interact_many`` has arguments that
            are not an object or ``actions`` that is a number.
    """
    if not isinstance(tool_calls, list):
        raise RefusedToolCall(f"tool calls must be a list, got {type(tool_calls).__name__}")
    notes: list[str] = []
    actions: list[str] = []
    for call in tool_calls:
        actions.extend(_call_actions(call, notes))
    if not actions:
        actions, notes = ["noop"], [*notes, "noop"]
    if cap is not None and len(actions) > cap:
        actions, notes = actions[:cap], [*notes, "cut"]
    return PlayedActions(actions, tuple(dict.fromkeys(notes)))


def _call_actions(call: Any, notes: list[str]) -> list[str]:
    """The actions of one call (before the noop and the cut), noting what was normalised."""
    if type(call) is not dict and not isinstance(call, Mapping):  # dict first: no ABC check
        raise RefusedToolCall(f"a tool call must be an object, got {_short(call)}")
    name = call.get("tool") or call.get("tool_name")
    if not name:
        raise RefusedToolCall(f"a tool call with neither 'tool' nor 'tool_name': {_short(call)}")
    args = call.get("arguments") or call.get("args") or {}
    if isinstance(args, str):
        notes.append("json_string")
        try:
            args = json.loads(args)
        except ValueError:
            notes.append("bad_json")
            args = {}
    if name == "interact_many":
        if not isinstance(args, Mapping):
            raise RefusedToolCall(f"interact_many with arguments that are not an object: {_short(call)}")
        listed = args.get("actions") or []
        if isinstance(listed, (bool, int, float)):
            raise RefusedToolCall(f"interact_many with actions that are a number: {_short(call)}")
        return _entries(list(listed), notes)  # a string iterates its characters, an object its keys
    is_object = type(args) is dict or isinstance(args, Mapping)  # dict first: no ABC check
    if is_object and isinstance(args.get("actions"), list) and args["actions"]:
        return _entries(args["actions"], notes)
    candidate = args.get("action") if is_object else None
    if isinstance(candidate, int) or (isinstance(candidate, str) and candidate in _IDS):
        return _entries([candidate], notes)
    return _entries([name], notes)


def _entries(entries: list[Any], notes: list[str]) -> list[str]:
    """Each entry as the action it plays (``_action_to_int`` then the engine's clip), skipping unknown ones."""
    played = []
    for entry in entries:
        if isinstance(entry, int):  # bool too, as in the task app (True plays id 1)
            clipped = min(max(int(entry), 0), len(ACTIONS) - 1)
            if clipped != entry:
                notes.append("clipped")
            played.append(ACTIONS[clipped])
        elif str(entry) in _IDS:
            played.append(str(entry))
        else:
            notes.append("unknown")
    return played


def policy_tool_calls(message_calls: Any) -> list[dict[str, Any]]:
    """The calls the task app's policy hands the environment for a model message's ``tool_calls``
    (OpenAI ``{"function": {"name", "arguments"}}`` or ``{"name", "arguments"}``).

    Mirrors ``CrafterPolicy.parse_response_to_tool_calls``: each becomes ``{"tool_name",
    "arguments"}``; an ``interact_many`` has its arguments parsed (a list ``actions`` kept, else
    ``[]``) and exactly ``["move_right", "do"]`` rewritten to ``["move_right"]``. Entries that are
    not objects are left out.

    Args:
        message_calls: The model message's ``tool_calls`` as logged (anything).

    Returns:
        The calls, each ``{"tool_name": ..., "arguments": ...}``, in order; [] when
        ``message_calls`` is not a list.
    """
    calls: list[dict[str, Any]] = []
    for call in message_calls if isinstance(message_calls, list) else []:
        if type(call) is not dict and not isinstance(call, Mapping):  # dict first: no ABC check
            continue
        function = call.get("function")
        if type(function) is dict or isinstance(function, Mapping):
            calls.append({"tool_name": function.get("name"), "arguments": function.get("arguments")})
        elif "name" in call:
            calls.append({"tool_name": call.get("name"), "arguments": call.get("arguments")})
    policy = []
    for call in calls:
        if call["tool_name"] != "interact_many":
            policy.append(call)
            continue
        args = call["arguments"]
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                args = {}
        listed = args.get("actions") if type(args) is dict or isinstance(args, Mapping) else None
        actions = listed if isinstance(listed, list) else []
        if actions == ["move_right", "do"]:
            actions = ["move_right"]
        policy.append({"tool_name": "interact_many", "arguments": {"actions": actions}})
    return policy


def _short(value: Any) -> str:
    """``value`` as JSON, cut to a report line's length."""
    try:
        text = json.dumps(value, default=str)
    except ValueError:
        text = repr(value)
    return text[:120]
