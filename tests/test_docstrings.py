"""Every module of the package opens with a docstring, and every public function, class and
method has one (what it does, returns and raises is for the reader to judge; none may be blank)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import cached_property

import workbench

#: Modules that run something on import (the CLI's entry point).
SKIPPED = {"workbench.__main__"}


def public_objects():
    for info in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if info.name in SKIPPED:
            continue
        module = importlib.import_module(info.name)
        yield info.name, "<module>", module
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            if inspect.isfunction(obj) or inspect.isclass(obj):
                yield info.name, name, obj
            if inspect.isclass(obj):
                for attribute, member in vars(obj).items():
                    if attribute.startswith("_"):
                        continue
                    if isinstance(member, property):
                        member = member.fget
                    elif isinstance(member, cached_property):
                        member = member.func
                    elif isinstance(member, (classmethod, staticmethod)):
                        member = member.__func__
                    if inspect.isfunction(member):
                        yield info.name, f"{name}.{attribute}", member


def test_every_public_thing_has_a_docstring():
    missing = [f"{module}: {name}" for module, name, obj in public_objects() if not (obj.__doc__ or "").strip()]
    assert not missing, "no docstring:\n" + "\n".join(missing)
