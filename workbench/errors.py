"""The workbench's error types: every error a user can cause derives from ``WorkbenchError``.

``WorkbenchError`` is a ``ValueError`` so code written against earlier versions (which raised
plain ``ValueError`` subclasses) keeps working. The command line prints a ``WorkbenchError`` as
one line and exits 2; any other exception is a bug and surfaces with its traceback.
"""

from __future__ import annotations


class WorkbenchError(ValueError):
    """A user's mistake or bad input; the message names the file, key, line or step at fault."""


class ConfigError(WorkbenchError):
    """A config that cannot be read or written; the message names the file and key path."""


class EpisodeError(WorkbenchError):
    """An episode that breaks the data model; the message names the episode and the problem."""


class CorpusFormatError(WorkbenchError):
    """A corpus folder or episode file that cannot be read; the message names the file."""


class CorpusError(WorkbenchError):
    """A corpus that cannot serve the request (e.g. empty, or an unknown episode id)."""


class DiagnosisError(WorkbenchError):
    """A diagnosis that cannot be made as asked (empty corpus, unknown grouping column, bad setting)."""
