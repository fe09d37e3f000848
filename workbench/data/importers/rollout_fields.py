"""A rollout response read for the fields the import uses: every byte checked as ``json`` checks it, only those fields built.

About 70% of a task-app step's bytes is ``info.meta.inference_request`` (the prompt and the tool
schema, ~4 KB of 6), and the import never reads it, nor a trajectory's ``decision_samples`` or
``info.meta``'s ``timing`` and ``usage``. msgspec validates the whole text (its grammar is ``json``'s or
stricter) and builds only the fields declared below, each value whole; the rest is skipped
after it is checked. Everything the import reads of a response is declared here, so a new read
of a rollout field is a new field below (``tests/data/test_rollout_fields.py`` imports every
shipped rollout both ways and compares the corpora).

A field the text does not hold reads as ``null`` (the import reads these objects only by
``.get``, where the two are the same). Anything this cannot read exactly as ``json`` would is
``UNSURE``, and the caller parses the text whole as before, which reads it or names what is
wrong: text that is not UTF-8, a value of another type where an object is declared, NaN, a lone
surrogate, a number out of range, nesting msgspec refuses, a run of 19 digits (``json`` refuses
an integer of more than 4,300 digits, which msgspec would skip unread).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import asdict

from workbench.util.jsonfields import checked_decode
from workbench.util.jsonsafe import UNSURE, holds_long_number

__all__ = ["response_fields"]


class _Meta(msgspec.Struct):
    raw_response: Any = None  # what the model said (``decisions.model_messages``)
    decision_rewards: Any = None  # kept in ``episode.logged``


class _Info(msgspec.Struct):
    meta: _Meta | None = None
    stepwise: Any = None
    terminated: Any = None  # with ``reason``: a last step the env never ran
    reason: Any = None


class _Step(msgspec.Struct):
    obs: Any = None
    tool_calls: Any = None
    reward: Any = None
    done: Any = None
    info: _Info | None = None


class _Trajectory(msgspec.Struct):
    steps: list[_Step] | None = None
    final: Any = None
    env_id: Any = None
    policy_id: Any = None


class _Response(msgspec.Struct):
    trajectories: list[_Trajectory] | None = None
    run_id: Any = None
    metrics: Any = None  # ``metrics.details.stepwise``: the summary, and the producer's shape
    request: Any = None  # the step_rewards config and the seed it asked for
    step_rewards: Any = None
    trace: Any = None  # the producer's shape, when nothing else tells


_DECODER = msgspec.json.Decoder(_Response | list[_Response])


def response_fields(raw: bytes) -> Any:
    """``json.loads(raw)`` (a rollout response, or a list of them) reduced to the fields a rollout
    import reads, as dicts and lists; ``UNSURE`` where that cannot be read exactly.

    Args:
        raw: JSON text.

    Returns:
        A response dict, a list of them, or ``UNSURE``: then parse ``raw`` whole.
    """
    value = UNSURE if holds_long_number(raw) else checked_decode(_DECODER, raw)
    if value is UNSURE:
        return UNSURE
    if isinstance(value, list):
        return [_response(item) for item in value]
    return _response(value)


def _response(response: _Response) -> dict[str, Any]:
    fields = asdict(response)
    if response.trajectories is not None:
        fields["trajectories"] = [_trajectory(t) for t in response.trajectories]
    return fields


def _trajectory(trajectory: _Trajectory) -> dict[str, Any]:
    fields = asdict(trajectory)
    if trajectory.steps is not None:
        fields["steps"] = [_step(s) for s in trajectory.steps]
    return fields


def _step(step: _Step) -> dict[str, Any]:
    fields = asdict(step)
    info = step.info
    if info is not None:
        fields["info"] = inner = asdict(info)
        if info.meta is not None:
            inner["meta"] = asdict(info.meta)
    return fields
