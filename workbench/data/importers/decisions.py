"""One decision of a rollout: the actions its tool calls played, the ones that ran, its calls and what the model said."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from workbench.data.importers.batch import BadInput
from workbench.data.importers.jsonfiles import dig
from workbench.data.importers.observations import Observed
from workbench.data.importers.toolcalls import MAX_ACTIONS, PlayedActions, RefusedToolCall, played_actions

#: The most characters of the model's words kept per decision.
MAX_MESSAGE_CHARS = 2000
#: The most characters of a decision's tool calls (as JSON) kept.
MAX_CALLS_CHARS = 4000


def decision_actions(tool_calls: Any, where: str, cap: int | None = MAX_ACTIONS) -> PlayedActions:
    """The Crafter actions one decision played, by the task app's own rules (``played_actions``;
    ``cap``: the producer's most actions a decision, None for none).

    Raises ``BadInput`` at ``where`` for calls the task app refuses too (it raises on them)."""
    try:
        return played_actions(tool_calls, cap)
    except RefusedToolCall as error:
        raise BadInput(where, f"{error} (the task app refuses it too: its step raises)") from None


def calls_text(tool_calls: Any) -> str:
    """One decision's tool calls as JSON text, as the policy gave them, bounded in size."""
    try:
        text = _CALLS_ENCODER.encode(tool_calls)
    except ValueError:
        text = repr(tool_calls)
    return text[:MAX_CALLS_CHARS]


#: ``json.dumps(..., default=str, ensure_ascii=False)``'s encoder, made once (``dumps`` with
#: options builds one per call: a third of the time of a decision's calls).
_CALLS_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False)


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
    # dict first: a parsed response's objects are dicts (no ABC check)
    message = (
        dig(response, "choices", 0, "message") if type(response) is dict or isinstance(response, Mapping) else None
    )
    if type(message) is not dict and not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    lines = [str(content).strip()] if content else []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if type(call) is dict or isinstance(call, Mapping) else None
        if type(function) is dict or isinstance(function, Mapping):
            lines.append(f"{function.get('name')}({function.get('arguments')})")
    return "\n".join(lines)[:MAX_MESSAGE_CHARS]
