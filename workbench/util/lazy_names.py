"""A package's names imported from their home modules on first use (PEP 562), to keep start-up short."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports each name of ``homes`` from its
    module the first time it is asked for, and keeps it in the package so the next look is plain.

    Deferring a heavy import (pandas, Crafter's game, ruptures) to the command that uses it is
    what keeps ``workbench --help`` and a command's fixed cost short; the package still offers
    every name, and type checkers read them from an ``if TYPE_CHECKING:`` import beside.

    Args:
        package: The package's ``__name__`` (it is being imported: ``sys.modules`` holds it).
        homes: Each name and the module it comes from.

    Returns:
        The function to bind as the package's ``__getattr__``.
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        namespace[name] = value
        return value

    return __getattr__
