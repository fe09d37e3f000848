"""lazy_names: a package's names imported from their home modules on first use, then kept."""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Iterator

import pytest

from workbench.util.lazy_names import lazy_names


@pytest.fixture
def package() -> Iterator[types.ModuleType]:
    module = types.ModuleType("lazy_names_probe")
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def test_a_name_is_imported_from_its_home_on_first_use_and_kept(package: types.ModuleType) -> None:
    package.__getattr__ = lazy_names(package.__name__, {"sqrt": "math", "dumps": "json"})
    assert "sqrt" not in vars(package)  # nothing imported before it is asked for
    assert package.sqrt is math.sqrt  # the home's own object
    assert vars(package)["sqrt"] is math.sqrt  # kept: the next look does not call __getattr__
    assert package.dumps([1]) == "[1]"


def test_an_unknown_name_is_an_attribute_error_naming_the_package(package: types.ModuleType) -> None:
    package.__getattr__ = lazy_names(package.__name__, {"sqrt": "math"})
    with pytest.raises(AttributeError, match="'lazy_names_probe' has no attribute 'cbrt'"):
        package.cbrt  # noqa: B018
    assert not hasattr(package, "floor")  # hasattr sees the AttributeError, as for any module
