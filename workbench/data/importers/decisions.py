"""One decision of a rollout: the actions its tool calls hold, the ones that ran, and what the model said."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from workbench.core.crafter_facts import ACTIONS
from workbench.data.episodes import ACTION_IDS
from workbench.data.importers.batch import BadInput
from workbench.data.importers.jsonfiles import dig
from workbench.data.importers.observations import Observed

#: The most characters of the model's words kept per decision.
MAX_MESSAGE_CHARS = 2000


def decision_actions(tool_calls: Any, where: str) -> list[str]:
    """The Crafter action names of one decision's ``interact_many`` tool calls, in order."""
    if not isinstance(tool_calls, list) or not tool_calls:
        raise BadInput(where, "no tool calls: a decision needs at least one action")
    actions: list[Any] = []
    for call in tool_calls:
        args = call.get("args", call.get("arguments")) if isinstance(call, Mapping) else None
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                args = None
        if not isinstance(args, Mapping) or not ("actions" in args or "action" in args):
            raise BadInput(where, f"a tool call without args.actions: {json.dumps(call)[:120]}")
        listed = args.get("actions", [args.get("action")])
        actions.extend(listed if isinstance(listed, list) else [listed])
    unknown = [a for a in actions if a not in ACTION_IDS]
    if unknown:
        raise BadInput(where, f"unknown action name(s) {unknown}; Crafter's are {', '.join(ACTIONS)}")
    if not actions:
        raise BadInput(where, "the tool calls hold no actions: a decision needs at least one")
    return actions


def executed_actions(actions: list[str], before: Observed) -> list[str]:
    """The actions of an episode's ``done`` decision that ran: the tool call lists what the
    policy asked, but the env stops at the step limit (known from the ``Step: i/max`` counter)."""
    if before.step is None or not before.max_steps:
        return actions
    return actions[: max(1, before.max_steps - before.step)]


def model_messages(infos: list[Mapping[str, Any]]) -> list[str]:
    """What the model said for each decision: its text, then its tool calls as it wrote them
    (``info.meta.raw_response``; the task app may rewrite the actions it then ran)."""
    return [model_words(dig(info, "meta", "raw_response")) for info in infos]


def model_words(response: Any) -> str:
    """The model's words in one raw response: its message text, then each tool call as ``name(arguments)``, bounded."""
    if isinstance(response, str):
        return response[:MAX_MESSAGE_CHARS]
    message = dig(response, "choices", 0, "message") if isinstance(response, Mapping) else None
    if not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    lines = [str(content).strip()] if content else []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            lines.append(f"{function.get('name')}({function.get('arguments')})")
    return "\n".join(lines)[:MAX_MESSAGE_CHARS]
