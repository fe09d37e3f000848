"""What the app serves: the launch options every page session starts from (one per process)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class AppOptions:
    """The corpus (a folder, or ``"sample"``) and config files each new page session opens,
    and the workspace folder where the session's configs are kept."""

    corpus: str | None = "sample"
    configs: list[Path] = field(default_factory=list)
    workspace: Path = Path("workbench-workspace")


#: Set by ``workbench.app.server.serve`` before the server starts; read by every page session.
current = AppOptions()
