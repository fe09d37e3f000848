"""The action space of one decision: one of Crafter's 17 actions, or up to K of them.

With ``actions_per_decision == 1`` the space is ``Discrete(17)``: an action id, the index into
``workbench.core.crafter_facts.ACTIONS``. With K > 1 it is ``MultiDiscrete([17, 18, ..., 18])`` (K entries):
entry 0 is always an action, so every sample holds at least one (the task app has no empty
decision), and entries 1..K-1 may also be ``END_OF_DECISION`` (17), which ends the decision
there. A decision is entry 0 plus the entries before the first ``END_OF_DECISION``; entries after
it are ignored, so "3 actions" is ``[a, b, c, 17, ...]`` whatever follows the first 17.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from workbench.core.crafter_facts import ACTIONS
from workbench.data.episodes import ACTION_IDS
from workbench.errors import EnvError

#: The padding value of a K > 1 decision: "no more actions in this decision".
END_OF_DECISION = len(ACTIONS)


def decision_space(actions_per_decision: int) -> spaces.Discrete | spaces.MultiDiscrete:
    """The action space of a decision of up to ``actions_per_decision`` actions (see the module docstring).

    Args:
        actions_per_decision: K, the most actions a decision holds.

    Returns:
        ``Discrete(17)`` for K = 1, else ``MultiDiscrete`` of K slots with ``END_OF_DECISION`` padding.

    Raises:
        EnvError: ``actions_per_decision`` is not a positive integer.
    """
    k = check_actions_per_decision(actions_per_decision)
    if k == 1:
        return spaces.Discrete(len(ACTIONS))
    return spaces.MultiDiscrete(np.array([len(ACTIONS)] + [len(ACTIONS) + 1] * (k - 1), dtype=np.int64))


def check_actions_per_decision(actions_per_decision: Any) -> int:
    """``actions_per_decision`` as an int >= 1; ``EnvError`` otherwise."""
    if (
        isinstance(actions_per_decision, bool)
        or not isinstance(actions_per_decision, (int, np.integer))
        or actions_per_decision < 1
    ):
        raise EnvError(f"actions_per_decision must be an integer >= 1, got {actions_per_decision!r}")
    return int(actions_per_decision)


def decode_decision(action: Any, space: spaces.Space[Any]) -> list[str]:
    """The Crafter action names a decision holds, in order (1..K of them).

    Args:
        action: An element of ``space`` (an int for ``Discrete``, K ints for ``MultiDiscrete``; a
            list works too).
        space: The action space.

    Returns:
        The action names.

    Raises:
        EnvError: ``action`` is not an element of ``space``; names both.
    """
    if isinstance(space, spaces.Discrete):
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = action.reshape(()).item()
        if (
            isinstance(action, (bool, np.bool_))
            or not isinstance(action, (int, np.integer))
            or not 0 <= int(action) < len(ACTIONS)
        ):
            raise EnvError(
                f"action {action!r} is not in {space}: expected an action id 0..{len(ACTIONS) - 1} "
                f"({', '.join(f'{i}={name}' for i, name in enumerate(ACTIONS))})"
            )
        return [ACTIONS[int(action)]]
    size = len(space.nvec) if isinstance(space, spaces.MultiDiscrete) else 0
    ids = np.asarray(action)
    if ids.shape != space.shape or ids.dtype.kind not in "iu" or not space.contains(ids.astype(space.dtype)):
        raise EnvError(
            f"action {action!r} is not in {space}: expected {size} integers, the first an action id "
            f"0..{len(ACTIONS) - 1}, the others an action id or {END_OF_DECISION} (end of decision)"
        )
    names = [ACTIONS[int(ids[0])]]
    for value in ids[1:]:
        if value == END_OF_DECISION:
            break
        names.append(ACTIONS[int(value)])
    return names


def encode_decision(names: Sequence[str], space: spaces.Space[Any]) -> int | np.ndarray:
    """The element of ``space`` that plays the Crafter actions ``names`` as one decision.

    Args:
        names: Crafter action names (a single string is one action).
        space: The action space.

    Returns:
        An int for ``Discrete``; for ``MultiDiscrete`` K ids padded with ``END_OF_DECISION``.

    Raises:
        EnvError: An unknown name, no name, or more names than the space holds.
    """
    if isinstance(names, str):
        names = [names]
    names = list(names)
    limit = len(space.nvec) if isinstance(space, spaces.MultiDiscrete) else 1
    if not 1 <= len(names) <= limit:
        raise EnvError(f"a decision holds 1..{limit} actions, got {len(names)}: {names}")
    unknown = [name for name in names if name not in ACTION_IDS]
    if unknown:
        raise EnvError(f"unknown Crafter action(s) {unknown}; Crafter's are {list(ACTIONS)}")
    if isinstance(space, spaces.Discrete):
        return ACTION_IDS[names[0]]
    ids = np.full(limit, END_OF_DECISION, dtype=space.dtype)
    ids[: len(names)] = [ACTION_IDS[name] for name in names]
    return ids
