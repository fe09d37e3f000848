"""What the app serves: the launch options every page session starts from (one per process)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from workbench.data.episodes import Corpus


@dataclass
class AppOptions:
    """The corpus each new page session opens (a folder, ``"sample"``, a ``Corpus`` built in
    Python, or None: the user opens one), the config files it starts with, and the workspace
    folder where the session's configs are kept."""

    corpus: str | Corpus | None = "sample"
    configs: list[Path] = field(default_factory=list)
    workspace: Path = Path("workbench-workspace")


#: Set by ``workbench.views.app.server.serve`` before the server starts; read by every page session.
current = AppOptions()
