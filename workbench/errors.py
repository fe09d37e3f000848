"""The workbench's error types: every error a user can cause derives from ``WorkbenchError``.

The command line prints a ``WorkbenchError`` as one line and exits 2; any other exception is a
bug and surfaces with its traceback.
"""

from __future__ import annotations

import zipfile
import zlib


class WorkbenchError(Exception):
    """A user's mistake or bad input; the message names the file, key, line or step at fault."""


class ConfigError(WorkbenchError):
    """A config that cannot be read or written; the message names the file and key path."""


class EpisodeError(WorkbenchError):
    """An episode that breaks the data model; the message names the episode and the problem."""


class CorpusFormatError(WorkbenchError):
    """A corpus folder or episode file that cannot be read; the message names the file."""


class TargetExistsError(WorkbenchError, FileExistsError):
    """A write that would replace an existing file without being asked to; names the file."""


class OutputError(WorkbenchError, OSError):
    """A file or folder that cannot be written (unwritable folder, disk full, not a regular
    file, read-only target); the message names the path and the reason. Nothing half-written
    is left behind."""


class MissingExtraError(WorkbenchError, ImportError):
    """A feature whose optional dependencies (an extra of the package) are not installed; the
    message names the packages and the ``pip install`` command that brings them. It is an
    ``ImportError`` too, so ``except ImportError`` around an optional import still catches it."""


class RecordingError(WorkbenchError):
    """Recording settings or a policy that cannot be used; the message names the setting."""


class CorpusError(WorkbenchError):
    """A corpus that cannot serve the request (e.g. empty, or an unknown episode id)."""


class DiagnosisError(WorkbenchError):
    """A diagnosis that cannot be made as asked (empty corpus, unknown grouping column, bad setting)."""


class SearchError(WorkbenchError):
    """Search settings that cannot be used (a held-out fraction outside (0, 1), no trials, ...)."""


class EnvError(WorkbenchError):
    """A misuse of ``workbench.env``: an action outside the action space, a step before reset or
    after the episode ended."""


class FrameReadError(WorkbenchError):
    """An episode's frames that cannot be read from their file; the message names the file."""


class EpisodeValueError(EpisodeError):
    """A value outside what Crafter can produce (or NaN / infinity) in an episode being built or
    written; the message names the episode, the decision (state row, 0 = after reset) and the column."""


class CorpusValueError(CorpusFormatError):
    """A stored value outside Crafter's ranges found when reading; names the file, episode,
    decision and column."""


class UnsafePathError(WorkbenchError):
    """A file a folder owns (a watcher's state or lock, a workspace's config) that is a symlink,
    a FIFO, a device or a folder, or a path that would leave its folder; names the path."""


class UnsafeCorpusPathError(CorpusFormatError, UnsafePathError):
    """A corpus folder holding a symlink, or a path that would leave the folder."""


#: What numpy raises for a truncated or corrupt ``.npz`` (a damaged deflate stream: zlib.error).
NPZ_READ_ERRORS = (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)


class WatchError(WorkbenchError):
    """A live source or watch target that cannot be used (kind unknown, target inside the source,
    another watcher writing); the message names the path."""


class ClusterError(WorkbenchError):
    """A ``--cluster`` setting that cannot be used (bad form, no scheduler at the address, a
    cluster that lost every worker); the message names the setting or address."""


class AnalysisError(WorkbenchError):
    """Input a reward analysis (advantages, shaping certificate, reward distances) cannot use:
    mismatched array shapes, bad group labels, non-finite rewards, a bad gamma or lambda."""
