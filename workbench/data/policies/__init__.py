"""Policies that play Crafter episodes for recording.

A policy factory takes the episode's ``np.random.Generator`` and returns a ``Policy``, a callable
from ``PolicyInput`` to 1..max_actions Crafter action names. ``resolve_policy`` finds one by
builtin name or as ``"module:function"``.
"""

from __future__ import annotations

import importlib

from workbench.data.policies.base import Policy, PolicyFactory, PolicyInput, policy_input_from
from workbench.data.policies.farmer import farmer_policy
from workbench.data.policies.random_policy import random_policy
from workbench.data.policies.scripted import scripted_policy
from workbench.errors import RecordingError

BUILTIN_POLICIES: dict[str, PolicyFactory] = {
    "random": random_policy,
    "scripted": scripted_policy,
    "farmer": farmer_policy,
}

__all__ = [
    "BUILTIN_POLICIES",
    "Policy",
    "PolicyFactory",
    "PolicyInput",
    "policy_input_from",
    "resolve_policy",
]


def resolve_policy(spec: str) -> PolicyFactory:
    """The factory named by ``spec``: a builtin name, or ``"module:function"`` to import.

    Args:
        spec: ``random``, ``scripted``, ``farmer`` or ``"module:function"``.

    Returns:
        The policy factory.

    Raises:
        RecordingError: An unknown name, a module that cannot be imported, or an attribute that
            is missing or not callable; names the spec.
    """
    if spec in BUILTIN_POLICIES:
        return BUILTIN_POLICIES[spec]
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise RecordingError(
            f"unknown policy {spec!r}: expected one of {', '.join(BUILTIN_POLICIES)} or 'module:function'"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RecordingError(f"policy {spec!r}: cannot import module {module_name!r} ({exc})") from exc
    factory = getattr(module, attr, None)
    if factory is None:
        raise RecordingError(f"policy {spec!r}: module {module_name!r} has no attribute {attr!r}")
    if not callable(factory):
        raise RecordingError(f"policy {spec!r}: {module_name}.{attr} is a {type(factory).__name__}, not callable")
    return factory
