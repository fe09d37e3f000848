"""The diagnostics' and the audit's default thresholds and options, importing nothing heavy.

The command line's parsers show these defaults in ``--help``; keeping them here (not beside the
numpy and pandas code that applies them) lets ``workbench --help`` start without the analyses.
"""

from __future__ import annotations

__all__ = [
    "AUDIT_SCHEMA",
    "COMPONENT_THRESHOLD",
    "DEAD_ENTRIES",
    "DEAD_ENTRY_SCOPES",
    "DOMINANCE_THRESHOLD",
    "FARMING_EPISODES",
]

#: Default thresholds (``diagnose`` and ``workbench audit`` both take theirs from here): a group
#: is flagged when resource shaping passes this share of its |reward| ...
DOMINANCE_THRESHOLD = 0.5
#: ... or when one component (kind, name) passes this share.
COMPONENT_THRESHOLD = 0.25
#: The ``schema`` field of ``Audit.to_json()``; bumped when a field changes meaning or goes.
AUDIT_SCHEMA = "workbench-audit/2"
#: What the audit's ``dead_entries`` may be.
DEAD_ENTRY_SCOPES = ("written", "all", "off")
#: The audit's default ``dead_entries`` scope: what the config itself writes.
DEAD_ENTRIES = "written"
#: How many episodes must farm before the audit's farming checks fire, by default.
FARMING_EPISODES = 1
