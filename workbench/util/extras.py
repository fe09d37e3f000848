"""Optional dependencies: check that the packages an extra brings are installed, or say which extra to install."""

from __future__ import annotations

import importlib.util

from workbench.errors import MissingExtraError

#: The distribution these extras belong to, as ``pip install`` spells it.
DISTRIBUTION = "crafter-reward-workbench"


def require_extra(extra: str, feature: str, *modules: str) -> None:
    """Check that every top-level package in ``modules`` can be imported.

    Called at the top of a module whose imports need the optional ``extra`` (so nothing below
    the views imports one by accident: ``pip install .`` brings none of them). Raises
    ``MissingExtraError`` naming ``feature``, the missing packages and the ``pip install``
    command for ``extra``; returns None when all are there. Looks the packages up without
    importing them, so the check costs microseconds.
    """
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(
            f"{feature} needs {', '.join(missing)}, not installed here: "
            f"pip install '{DISTRIBUTION}[{extra}]' (or '.[{extra}]' in a checkout)"
        )
