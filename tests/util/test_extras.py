"""require_extra: a feature whose optional packages are missing says which extra to install."""

from __future__ import annotations

import pytest

from workbench.errors import MissingExtraError, WorkbenchError
from workbench.util.extras import require_extra


def test_installed_packages_pass():
    assert require_extra("search", "the weight search", "json", "numpy") is None


def test_a_missing_package_names_the_extra_and_the_command():
    with pytest.raises(MissingExtraError) as caught:
        require_extra("search", "the weight search", "numpy", "no_such_package_xyz")
    message = str(caught.value)
    assert message == (
        "the weight search needs no_such_package_xyz, not installed here: "
        "pip install 'crafter-reward-workbench[search]' (or '.[search]' in a checkout)"
    )
    # One line, a WorkbenchError (the CLI prints it and exits 2) and an ImportError (code that
    # guards an optional import with `except ImportError` still catches it).
    assert "\n" not in message
    assert isinstance(caught.value, WorkbenchError) and isinstance(caught.value, ImportError)
