"""Reading the package's own YAML data files with the safe loader, in C where PyYAML has it."""

from __future__ import annotations

from typing import Any

import yaml

#: PyYAML's safe loader built on libyaml (the same documents, ~5x faster: Crafter's ``data.yaml``
#: took 8 ms of every command's start-up in Python), else the pure-Python one.
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_data(text: str) -> Any:
    """``yaml.safe_load(text)``, with libyaml's safe loader when PyYAML was built with it.

    Args:
        text: A YAML document (one of the package's or Crafter's data files).

    Returns:
        The document's data, as ``yaml.safe_load`` gives it.

    Raises:
        yaml.YAMLError: The text is not YAML.
    """
    return yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 - a safe loader (SafeLoader or its C twin)
